"""Merging user-given Kubernetes JSON over generated defaults.

The rule is the one the original operator's users know: a field the user sets replaces the
default; an unset or empty field keeps it; objects are merged key by key; lists are replaced
as a whole. The exceptions are lists of named things: environment variables merge by name,
and a container's ports and volume mounts keep the defaults the user's do not clash with.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from api.kube import copy_json

Json = dict[str, Any]

__all__ = ["is_empty", "merge_env", "merge_keyed", "merge_over"]


def is_empty(value: Any) -> bool:
    """Unset in the JSON sense: null, "", [] or {} (0 and false are real values)."""
    return value is None or (isinstance(value, str | list | dict) and not value)


def merge_over(base: Mapping[str, Any], override: Mapping[str, Any]) -> Json:
    """A copy of `base` with every non-empty field of `override` laid over it."""
    result = copy_json(dict(base))
    _lay_over(result, override)
    return result


def _lay_over(result: Json, override: Mapping[str, Any]) -> None:
    """Lay `override` over `result` in place; `result` is our own copy at every depth."""
    for key, value in override.items():
        if is_empty(value):
            continue
        current = result.get(key)
        if isinstance(value, dict) and isinstance(current, dict):
            _lay_over(current, value)
        else:
            result[key] = copy_json(value)


def merge_env(*layers: Iterable[Mapping[str, Any]]) -> list[Json]:
    """Environment variables of several layers, lowest precedence first: one entry per name,
    the last layer's entry winning, in order of first appearance."""
    merged: dict[str, Json] = {}
    for layer in layers:
        for var in layer:
            merged[str(var.get("name", ""))] = {  # deepcopy only what nests (valueFrom)
                k: copy_json(v) if isinstance(v, dict | list) else v for k, v in var.items()}
    return list(merged.values())


def merge_keyed(
    defaults: Iterable[Mapping[str, Any]], given: Iterable[Mapping[str, Any]], *keys: str
) -> list[Json]:
    """The user's entries, then each default that shares no value of `keys` with any of them
    (a default port named like a user port, or mounted at a user's path, gives way)."""
    user = [copy_json(dict(e)) for e in given]
    taken = {(k, e.get(k)) for e in user for k in keys if e.get(k) is not None}
    kept = [
        copy_json(dict(e))
        for e in defaults
        if not any((k, e.get(k)) in taken for k in keys if e.get(k) is not None)
    ]
    return [*user, *kept]
