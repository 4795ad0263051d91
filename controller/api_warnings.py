"""Warnings the API server sends in `Warning` headers, logged once per text per process.

kube-apiserver adds `Warning: 299 - "<text>"` headers to answers: a request to a deprecated
API version earns one on every request (every list, watch and write of an informer), and
admission webhooks add theirs. client-go hands each to a warning handler, and
controller-runtime's logs each distinct text once; so does this module: one log line the
first time a text is seen, none after, whatever the number of requests.
"""

from __future__ import annotations

from collections.abc import Iterable

import structlog

log = structlog.get_logger("controller.api_warnings")

#: RFC 7234's code for a persistent miscellaneous warning, the one kube-apiserver uses.
MISCELLANEOUS_PERSISTENT = "299"


class WarningLog:
    """Logs each distinct warning text once."""

    def __init__(self) -> None:
        self._seen: set[str] = set()

    def observe(self, header_values: Iterable[str]) -> None:
        """Log the texts of `Warning` header values not seen before."""
        for value in header_values:
            for text in parse_warning_header(value):
                if text not in self._seen:
                    self._seen.add(text)
                    log.warning("api server warning", warning=text)


#: The process's one log of warnings, shared by every client.
WARNINGS = WarningLog()


def parse_warning_header(value: str) -> list[str]:
    """The texts of the code-299 warnings in one `Warning` header value.

    A value holds comma-separated warnings `<code> <agent> "<text>" ["<date>"]`, the text
    with `\\` escapes; what cannot be parsed ends the value, as client-go's parser does."""
    texts: list[str] = []
    pos, end = 0, len(value)
    while pos < end:
        while pos < end and value[pos] in " ,":
            pos += 1
        if pos >= end:
            break
        code_end = value.find(" ", pos)
        agent_end = value.find(" ", code_end + 1) if code_end >= 0 else -1
        if agent_end < 0:
            break
        code = value[pos:code_end]
        quoted = _quoted(value, agent_end + 1)
        if quoted is None:
            break
        text, pos = quoted
        if code == MISCELLANEOUS_PERSISTENT:
            texts.append(text)
        while pos < end and value[pos] == " ":
            pos += 1
        if pos < end and value[pos] == '"':  # a warn-date
            date = _quoted(value, pos)
            if date is None:
                break
            pos = date[1]
    return texts


def _quoted(value: str, pos: int) -> tuple[str, int] | None:
    """The unescaped quoted string at `pos` and the position after it; None if there is none."""
    if pos >= len(value) or value[pos] != '"':
        return None
    out: list[str] = []
    i = pos + 1
    while i < len(value):
        char = value[i]
        if char == "\\" and i + 1 < len(value):
            out.append(value[i + 1])
            i += 2
        elif char == '"':
            return "".join(out), i + 1
        else:
            out.append(char)
            i += 1
    return None


__all__ = ["WARNINGS", "WarningLog", "parse_warning_header"]
