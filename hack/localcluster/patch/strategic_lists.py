"""List helpers of strategic merge: matching by merge key, partitioning, and element order.

The merged list keeps the order the real merge produces: patch items in patch order, interleaved
with server-only items by their live order, new items first where the live list does not order
them. Sorting uses Go's stable sort, as the comparators are not strict orders.
"""

from __future__ import annotations

from typing import Any

from ..go_format import go_type, go_v
from .go_sort import go_stable_sort
from .go_values import bad_arg_type, go_eq, go_key, no_merge_key
from .patch_errors import StrategicMergeError
from .strategic_directives import DIRECTIVE, SET_ELEMENT_ORDER

Json = dict[str, Any]

__all__ = [
    "deduplicate_scalars",
    "find_map",
    "is_delete_element",
    "normalize_element_order",
    "partition_maps",
    "partition_primitives",
    "slice_element_type",
    "validate_set_element_order",
]

def validate_set_element_order(patch_list: list[Any], order: list[Any], merge_key: str) -> None:
    if not order or not patch_list:
        return
    if merge_key:
        for element in patch_list:
            if not isinstance(element, dict):
                raise StrategicMergeError(bad_arg_type({}, element))
        candidates = [e for e in patch_list if not is_delete_element(e)]
    else:
        candidates = patch_list
    p = s = 0
    while p < len(candidates) and s < len(order):
        if isinstance(candidates[p], dict) and DIRECTIVE in candidates[p]:
            p += 1
            continue
        if _merge_key_equal(candidates[p], order[s], merge_key):
            p += 1
        s += 1
    if p < len(candidates) and s >= len(order):
        raise StrategicMergeError(
            f"The order in patch list:\n{go_v(patch_list)}\n doesn't match"
            f" {SET_ELEMENT_ORDER} list:\n{go_v(order)}\n"
        )


def _merge_key_equal(left: Any, right: Any, merge_key: str) -> bool:
    if not merge_key:
        return go_eq(left, right)
    for side in (left, right):
        if not isinstance(side, dict):
            raise StrategicMergeError(bad_arg_type({}, side))
        if merge_key not in side:
            raise StrategicMergeError(no_merge_key(side, merge_key))
    return go_eq(left[merge_key], right[merge_key])


def find_map(items: list[Any], merge_key: str, value: Any) -> int | None:
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise StrategicMergeError(f"value for key {index} is not a map.")
        if merge_key in item and go_eq(item[merge_key], value):
            return index
    return None


def partition_primitives(
    merged: list[Any], partition_by: list[Any]
) -> tuple[list[Any], list[Any]]:
    present = {go_key(v) for v in partition_by}
    inside = [v for v in merged if go_key(v) in present]
    outside = [v for v in merged if go_key(v) not in present]
    return inside, outside


def partition_maps(
    merged: list[Any], partition_by: list[Any], merge_key: str
) -> tuple[list[Any], list[Any]]:
    inside: list[Any] = []
    outside: list[Any] = []
    for item in merged:
        if not isinstance(item, dict):
            raise StrategicMergeError(bad_arg_type({}, item))
        if merge_key not in item:
            raise StrategicMergeError(no_merge_key(item, merge_key))
        found = find_map(partition_by, merge_key, item[merge_key]) is not None
        (inside if found else outside).append(item)
    return inside, outside


def normalize_element_order(
    patch_items: list[Any],
    server_only: list[Any],
    patch_order: list[Any],
    server_order: list[Any],
    merge_key: str,
    elem_kind: str,
) -> list[Any]:
    """Patch items in patch order, interleaved with server-only items by live order."""
    patch_items = _normalize_slice_order(patch_items, patch_order, merge_key, elem_kind)
    server_only = _normalize_slice_order(server_only, server_order, merge_key, elem_kind)

    def position(item: Any) -> int:
        return _index(server_order, item, merge_key, elem_kind)

    out: list[Any] = []
    i = j = 0
    while i < len(server_only) and j < len(patch_items):
        left, right = position(server_only[i]), position(patch_items[j])
        if left >= 0 and right >= 0 and left < right:
            out.append(server_only[i])
            i += 1
        else:
            # Items the live list does not order against (new ones) go first.
            out.append(patch_items[j])
            j += 1
    return out + server_only[i:] + patch_items[j:]


def _normalize_slice_order(
    items: list[Any], order: list[Any], merge_key: str, elem_kind: str
) -> list[Any]:
    to_delete: list[Any] = []
    items = list(items)
    if elem_kind == "map":
        for item in (*items, *order):
            if not isinstance(item, dict):
                raise StrategicMergeError(bad_arg_type({}, item))
            if merge_key not in item:
                raise StrategicMergeError(no_merge_key(item, merge_key))
        to_delete = [v for v in items if is_delete_element(v)]
        items = [v for v in items if not is_delete_element(v)]

    def less(a: Any, b: Any) -> bool:
        ia = _index(order, a, merge_key, elem_kind)
        if ia >= 0:
            ib = _index(order, b, merge_key, elem_kind)
            if ib >= 0:
                return ia < ib
        return True

    go_stable_sort(items, less)
    return items + to_delete


def is_delete_element(item: Json) -> bool:
    directive = item.get(DIRECTIVE)
    return isinstance(directive, str) and directive == "delete"


def _index(items: list[Any], value: Any, merge_key: str, elem_kind: str) -> int:
    def key_of(item: Any) -> Any:
        if elem_kind != "map":
            return item
        return item.get(merge_key) if isinstance(item, dict) else None

    wanted = key_of(value)
    for i, item in enumerate(items):
        if go_eq(wanted, key_of(item)):
            return i
    return -1


def deduplicate_scalars(items: list[Any]) -> list[Any]:
    # The Go algorithm moves the last element into each duplicate's slot; kept for fidelity.
    s = list(items)
    length = len(s) - 1
    i = 0
    while i < length:
        j = i + 1
        while j <= length:
            if go_eq(s[i], s[j]):
                s[j] = s[length]
                s = s[:length]
                length -= 1
                j -= 1
            j += 1
        i += 1
    return s


def slice_element_type(*lists: list[Any]) -> str:
    previous: str | None = None
    for items in lists:
        for item in items:
            current = go_type(item)
            if previous is None:
                previous = current
                if current == "slice":
                    raise StrategicMergeError("lists of lists are not supported", 422)
            elif previous != current:
                raise StrategicMergeError(
                    f"list element types are not identical: {go_v(list(lists))}"
                )
    if previous is None:
        raise StrategicMergeError("no elements in any of the given slices")
    return previous
