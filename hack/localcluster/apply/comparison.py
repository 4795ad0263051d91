"""Comparing two versions of an object field by field: which paths were added, modified or
removed (structured-merge-diff's Compare), with Go's notion of equal JSON values."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..fields_v1 import Path, pe_field
from .field_types import MISSING, FieldType
from .list_elements import elements

__all__ = ["Diff", "compare", "compare_fields", "is_list_side", "is_map_side", "values_equal"]


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


def _same_json(a: Any, b: Any) -> bool:
    """For a == b: whether they are also the same JSON, type for type (Python has
    True == 1 == 1.0, and a NaN equal to itself inside containers). False may be wrong, True
    is not."""
    if type(a) is dict:
        pairs: Any = ((v, b[k]) for k, v in a.items())
    else:
        pairs = zip(a, b, strict=True)
    for v, w in pairs:
        kind = type(v)
        if kind is not type(w):
            return False
        if kind is dict or kind is list:
            if not _same_json(v, w):
                return False
        elif kind is float and v != v:
            return False
    return True


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
    # Equal values differ nowhere below: a quick way out for unchanged subtrees.
    if (
        type(lhs) is type(rhs)
        and isinstance(lhs, (dict, list))
        and lhs == rhs
        and _same_json(lhs, rhs)
    ):
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


def compare_fields(lhs: Any, rhs: Any, t: FieldType, include: Callable[[str], bool],
                   diff: Diff) -> None:
    """`compare(lhs, rhs, t, (), diff)` for paths below the top-level fields `include` accepts.

    The paths below other fields may or may not be in `diff`: the caller drops them.
    """
    if not (isinstance(lhs, dict) and isinstance(rhs, dict) and (lhs or rhs)) or t.atomic_map():
        compare(lhs, rhs, t, (), diff)
        return
    # As compare's granular map branch, skipping the fields nobody asked about.
    for name in {**lhs, **rhs}:
        if include(name):
            compare(lhs.get(name, MISSING), rhs.get(name, MISSING), t.child(name),
                    (pe_field(name),), diff)
