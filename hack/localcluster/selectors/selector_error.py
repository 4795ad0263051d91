"""The error a selector parser raises internally, and Go's rendering of several of them.

Parsing and validation stop with a `SelectorError` whose text is the message kube-apiserver
would report; the public entry points turn it into a 400 BadRequest.
"""

from __future__ import annotations


class SelectorError(Exception):
    """A parse or validation failure; the text is the message the apiserver would report."""


def aggregate(messages: list[str]) -> str:
    """utilerrors.Aggregate's rendering: one message bare, several bracketed, duplicates dropped."""
    seen: list[str] = []
    for m in messages:
        if m not in seen:
            seen.append(m)
    if len(seen) == 1:
        return seen[0]
    return "[" + ", ".join(seen) + "]"
