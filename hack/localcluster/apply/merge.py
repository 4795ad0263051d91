"""Merging an applied configuration into the live object, and removing what the applier dropped.

`merge` is structured-merge-diff's merge: associative lists by key, sets by value, atomic lists
and maps whole, structs and granular maps field by field. `prune` removes the fields the applier
applied last time, no longer applies, and nobody else owns.
"""

from __future__ import annotations

from collections.abc import Set
from typing import Any

from ..fields_v1 import Path, PathTrie, pe_field
from .comparison import is_list_side, is_map_side
from .field_sets import collect_fields, with_named_fields
from .field_types import MISSING, FieldType
from .list_elements import ElementError, elements, item_pe

Json = dict[str, Any]

__all__ = ["drop_applied_nulls", "merge", "prune", "remove_paths"]


def merge(lhs: Any, rhs: Any, t: FieldType) -> Any:
    """Merge an applied value (rhs) into a live one (lhs), as structured-merge-diff does."""
    if rhs is MISSING:
        return lhs
    if lhs is MISSING:
        return rhs
    if (isinstance(lhs, dict) or isinstance(rhs, dict)) and is_map_side(lhs) and is_map_side(rhs):
        if t.atomic_map():
            return rhs
        left = lhs if isinstance(lhs, dict) else {}
        right = rhs if isinstance(rhs, dict) else {}
        if not left and not right:
            return rhs
        out: Json = {}
        for name, value in left.items():
            out[name] = merge(value, right.get(name, MISSING), t.child(name))
        for name, value in right.items():
            if name not in out:
                out[name] = value
        return out
    if (
        (isinstance(lhs, list) or isinstance(rhs, list))
        and is_list_side(lhs)
        and is_list_side(rhs)
    ):
        if t.list_type() == "atomic":
            return rhs
        left_list = lhs if isinstance(lhs, list) else []
        right_list = rhs if isinstance(rhs, list) else []
        if not left_list and not right_list:
            return rhs
        return _merge_list(left_list, right_list, t)
    return rhs


def _merge_list(lhs: list[Any], rhs: list[Any], t: FieldType) -> list[Any]:
    """Merge associative lists keeping structured-merge-diff's element order.

    Live-only elements keep their place; elements in both follow the applied order; applied-only
    elements go right before the next element the two lists share.
    """
    left = elements(lhs, t)
    right = elements(rhs, t)
    left_map = dict(left)
    right_map = dict(right)
    shared = [pe for pe, _ in right if pe in left_map]
    out: list[Any] = []
    li = ri = si = 0
    while li < len(left) or ri < len(right):
        expected = shared[si] if si < len(shared) else None
        if li < len(left) and ri < len(right):
            lpe = left[li][0]
            if lpe == right[ri][0]:
                out.append(merge(left_map[lpe], right_map[lpe], t.item()))
                li, ri, si = li + 1, ri + 1, si + 1
                continue
            if lpe in right_map and expected is not None and expected != lpe:
                # Shared, but its turn comes later in the applied order.
                li += 1
                continue
        if li < len(left) and left[li][0] not in right_map:
            out.append(left[li][1])
            li += 1
            continue
        if ri < len(right):
            rpe = right[ri][0]
            out.append(merge(left_map.get(rpe, MISSING), right_map[rpe], t.item()))
            ri += 1
            if rpe == expected:
                si += 1
            continue
        # Only shared live elements are left, and all were merged already.
        li += 1
    return out


def remove_paths(value: Any, node: PathTrie, t: FieldType) -> Any:
    """Remove the members of node (whole subtrees) from value; emptied containers stay."""
    if not node.children:
        return value
    if isinstance(value, dict) and not t.atomic_map():
        out: Json = {}
        for name, child in value.items():
            sub = node.children.get(pe_field(name))
            if sub is None:
                out[name] = child
            elif not sub.member:
                out[name] = remove_paths(child, sub, t.child(name))
        return out
    if isinstance(value, list) and t.list_type() != "atomic":
        items: list[Any] = []
        for i, item in enumerate(value):
            try:
                pe = item_pe(item, t, i)
            except ElementError:
                items.append(item)
                continue
            sub = node.children.get(pe)
            if sub is None:
                items.append(item)
            elif not sub.member:
                items.append(remove_paths(item, sub, t.item()))
        return items
    return value


def prune(merged: Any, owned: Set[Path], last: Set[Path], root: FieldType) -> Any:
    """Remove what the applier applied last time, no longer applies, and nobody else owns."""
    if not last:
        return merged

    def fields_of(value: Any) -> set[Path]:
        out: set[Path] = set()
        collect_fields(value, root, (), out)
        return with_named_fields(out, root)

    merged_fields = fields_of(merged)
    last_fields = with_named_fields(last, root)
    owned_fields = with_named_fields(owned, root)
    without_last = remove_paths(merged, PathTrie.of(last_fields), root)
    added_back = remove_paths(
        merged, PathTrie.of(merged_fields - (fields_of(without_last) | owned_fields)), root
    )
    dangling = (merged_fields - fields_of(added_back)) & last_fields
    return remove_paths(merged, PathTrie.of(dangling), root)


def drop_applied_nulls(value: Any, live: Any, t: FieldType) -> Any:
    """Drop nulls the configuration introduced, as the apiserver's decoding and pruning do."""
    if isinstance(value, dict):
        live_map = live if isinstance(live, dict) else {}
        out: Json = {}
        for name, child in value.items():
            before = live_map.get(name, MISSING)
            child_type = t.child(name)
            if child is None and before is not None and not child_type.nullable():
                continue
            out[name] = drop_applied_nulls(child, before, child_type)
        return out
    if isinstance(value, list) and t.list_type() != "atomic":
        return [drop_applied_nulls(item, MISSING, t.item()) for item in value]
    return value
