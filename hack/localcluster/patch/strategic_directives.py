"""The directives of a strategic merge patch: `$patch`, `$retainKeys`, `$setElementOrder/…` and
`$deleteFromPrimitiveList/…`, how they are read, and how they are removed from the result."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from .go_values import go_key
from .patch_errors import StrategicMergeError

Json = dict[str, Any]

__all__ = [
    "DELETE_FROM_PRIMITIVE_LIST",
    "DIRECTIVE",
    "RETAIN_KEYS",
    "SET_ELEMENT_ORDER",
    "apply_retain_keys",
    "discard_nulls",
    "extract_key",
    "remove_directives",
    "strip_directives",
]

DIRECTIVE: Final = "$patch"
RETAIN_KEYS: Final = "$retainKeys"
DELETE_FROM_PRIMITIVE_LIST: Final = "$deleteFromPrimitiveList"
SET_ELEMENT_ORDER: Final = "$setElementOrder"


def extract_key(key: str, prefix: str) -> str:
    parts = key.split("/", 1)
    if len(parts) <= 1 or parts[0] != prefix:
        if prefix == DELETE_FROM_PRIMITIVE_LIST:
            raise StrategicMergeError("invalid patch format of primitive list", 400)
        raise StrategicMergeError("invalid patch format of setElementOrder list", 400)
    return parts[1]


def apply_retain_keys(original: Json, patch: Json) -> None:
    if RETAIN_KEYS not in patch:
        return
    retain = patch.pop(RETAIN_KEYS)
    if not isinstance(retain, list):
        raise StrategicMergeError("invalid patch format of retainKeys", 400)
    kept = {go_key(k) for k in retain}
    for key, value in patch.items():
        if value is None or key.startswith((DELETE_FROM_PRIMITIVE_LIST, SET_ELEMENT_ORDER)):
            continue
        if go_key(key) not in kept:
            raise StrategicMergeError("invalid patch format of retainKeys", 400)
    for key in [k for k in original if go_key(k) not in kept]:
        del original[key]


def remove_directives(value: Any) -> tuple[Any, bool]:
    """Drop maps carrying `$patch` (and list elements that are such maps); False: drop `value`."""
    if isinstance(value, dict):
        if DIRECTIVE in value:
            return None, False
        for key in list(value):
            child, keep = remove_directives(value[key])
            if keep:
                value[key] = child
            else:
                del value[key]
        return value, True
    if isinstance(value, list):
        kept = []
        for item in value:
            child, keep = remove_directives(item)
            if keep:
                kept.append(child)
        return kept, True
    return value, True


def _delete_members(value: Any, doomed: Callable[[str, Any], bool]) -> None:
    """Delete, at every depth, the map members `doomed(key, value)` picks (not looking inside)."""
    if isinstance(value, dict):
        for key in list(value):
            if doomed(key, value[key]):
                del value[key]
            else:
                _delete_members(value[key], doomed)
    elif isinstance(value, list):
        for item in value:
            _delete_members(item, doomed)


def discard_nulls(value: Any) -> None:
    """Drop null members, as decoding a patch value into the typed object does."""
    _delete_members(value, lambda key, member: member is None)


def _is_directive(key: str) -> bool:
    return key in (DIRECTIVE, RETAIN_KEYS) or key.startswith(
        (SET_ELEMENT_ORDER, DELETE_FROM_PRIMITIVE_LIST)
    )


def strip_directives(value: Any) -> None:
    """Drop the directive keys the merge left behind, as decoding into the typed object does."""
    _delete_members(value, lambda key, member: _is_directive(key))
