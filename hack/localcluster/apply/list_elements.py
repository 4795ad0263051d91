"""How server-side apply identifies list elements: by key fields, by value, or by position."""

from __future__ import annotations

from typing import Any

from ..fields_v1 import pe_index, pe_key, pe_value
from .field_types import MISSING, FieldType

__all__ = ["ElementError", "elements", "item_pe"]


class ElementError(Exception):
    """A list element that cannot be identified (missing key, wrong kind of element)."""


def item_pe(item: Any, t: FieldType, index: int) -> str:
    kind = t.list_type()
    if kind == "map":
        if item is None:
            raise ElementError("associative list with keys may not have a null element")
        if not isinstance(item, dict):
            raise ElementError("associative list with keys may not have non-map elements")
        fields: list[tuple[str, Any]] = []
        for key in t.list_keys():
            if key in item:
                fields.append((key, item[key]))
                continue
            default = t.key_default(key)
            if default is MISSING:
                raise ElementError(
                    f'associative list with keys has an element that omits key field "{key}"'
                    " (and doesn't have default value)"
                )
            fields.append((key, default))
        return pe_key(fields)
    if kind == "set":
        if isinstance(item, dict):
            raise ElementError("associative list without keys has an element that's a map type")
        if isinstance(item, list):
            raise ElementError("not supported: associative list with lists as elements")
        if item is None:
            raise ElementError(
                "associative list without keys has an element that's an explicit null"
            )
        return pe_value(item)
    return pe_index(index)


def elements(items: list[Any], t: FieldType) -> list[tuple[str, Any]]:
    """The identifiable elements of a stored list, first occurrence of each key only."""
    out: list[tuple[str, Any]] = []
    seen: set[str] = set()
    for i, item in enumerate(items):
        try:
            pe = item_pe(item, t, i)
        except ElementError:
            continue
        if pe not in seen:
            seen.add(pe)
            out.append((pe, item))
    return out
