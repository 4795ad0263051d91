"""Comparing two versions of an object field by field: which paths were added, modified or
removed (structured-merge-diff's Compare), with Go's notion of equal JSON values."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..fields_v1 import Path, pe_field
from .field_types import MISSING, FieldType
from .list_elements import elements

__all__ = ["Diff", "compare", "is_list_side", "is_map_side", "values_equal"]


def values_equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, dict):
        return (
            isinstance(b, dict)
            and a.keys() == b.keys()
            and all(values_equal(v, b[k]) for k, v in a.items())
        )
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(values_equal, a, b))
    if isinstance(b, (dict, list)):
        return False
    return bool(a == b)


@dataclass
class Diff:
    added: set[Path] = field(default_factory=set)
    modified: set[Path] = field(default_factory=set)
    removed: set[Path] = field(default_factory=set)

    def only(self, keep: Callable[[Path], bool]) -> Diff:
        return Diff(
            {p for p in self.added if keep(p)},
            {p for p in self.modified if keep(p)},
            {p for p in self.removed if keep(p)},
        )

    def changed(self) -> set[Path]:
        return self.added | self.modified


def is_map_side(v: Any) -> bool:
    return v is MISSING or v is None or isinstance(v, dict)


def is_list_side(v: Any) -> bool:
    return v is MISSING or v is None or isinstance(v, list)


def compare(lhs: Any, rhs: Any, t: FieldType, path: Path, diff: Diff) -> None:
    if lhs is MISSING and rhs is MISSING:
        return
    # Go objects make no difference between an absent field and a null one; neither do we.
    if (lhs is MISSING and rhs is None) or (lhs is None and rhs is MISSING):
        return
    granular = False
    if (isinstance(lhs, dict) or isinstance(rhs, dict)) and is_map_side(lhs) and is_map_side(rhs):
        left = lhs if isinstance(lhs, dict) else {}
        right = rhs if isinstance(rhs, dict) else {}
        if not t.atomic_map() and (left or right):
            granular = True
            for name in {**left, **right}:
                compare(
                    left.get(name, MISSING),
                    right.get(name, MISSING),
                    t.child(name),
                    (*path, pe_field(name)),
                    diff,
                )
    elif (
        (isinstance(lhs, list) or isinstance(rhs, list))
        and is_list_side(lhs)
        and is_list_side(rhs)
    ):
        left_items = elements(lhs, t) if isinstance(lhs, list) else []
        right_items = elements(rhs, t) if isinstance(rhs, list) else []
        if t.list_type() != "atomic" and (left_items or right_items):
            granular = True
            left_map = dict(left_items)
            right_map = dict(right_items)
            for pe in {**right_map, **left_map}:
                compare(
                    left_map.get(pe, MISSING),
                    right_map.get(pe, MISSING),
                    t.item(),
                    (*path, pe),
                    diff,
                )
    if granular:
        if lhs is MISSING:
            diff.added.add(path)
        elif rhs is MISSING:
            diff.removed.add(path)
        return
    if lhs is MISSING:
        diff.added.add(path)
    elif rhs is MISSING:
        diff.removed.add(path)
    elif not values_equal(lhs, rhs):
        diff.modified.add(path)
