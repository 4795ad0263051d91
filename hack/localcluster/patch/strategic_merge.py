"""Strategic merge patch, as the apply half of k8s.io/apimachinery/pkg/util/strategicpatch does it.

List merge keys come from `list_semantics`; directives are honoured and never kept in the
result; list elements end up in the order the real merge produces (new elements go before the
live ones they are not ordered against, so an added container comes first).
"""

from __future__ import annotations

from typing import Any, TypeVar

from ..errors import bad_request
from ..go_format import go_json_kind, go_s, go_type, go_v
from ..json_copy import copy_json
from ..list_semantics import list_semantics
from .go_values import bad_arg_type, go_eq, go_key, no_merge_key
from .patch_errors import StrategicMergeError
from .strategic_directives import (
    DELETE_FROM_PRIMITIVE_LIST,
    DIRECTIVE,
    SET_ELEMENT_ORDER,
    apply_retain_keys,
    discard_nulls,
    extract_key,
    remove_directives,
    strip_directives,
)
from .strategic_lists import (
    deduplicate_scalars,
    find_map,
    normalize_element_order,
    partition_maps,
    partition_primitives,
    slice_element_type,
    validate_set_element_order,
)

Json = dict[str, Any]

__all__ = ["strategic_merge_patch"]

_T = TypeVar("_T")


def strategic_merge_patch(target: Json, patch: Any, kind: str) -> Json:
    """Apply a strategic merge patch to `target`, an object of the built-in `kind`.

    Maps merge recursively and null deletes a key. Lists merge as `list_semantics` says: by
    merge key, as a set of scalars, or (by default) atomically. Directives `$patch`
    (replace/delete), `$retainKeys`, `$setElementOrder/<list>` and
    `$deleteFromPrimitiveList/<list>` are honoured and never kept in the result. Returns a new
    object; raises ApiError with the code, reason and message kube-apiserver would return.
    """
    if patch is None:
        return copy_json(target)
    if not isinstance(patch, dict):
        raise bad_request(
            f"json: cannot unmarshal {go_json_kind(patch)} into Go value of type"
            " map[string]interface {}"
        )
    merger = _StrategicMerge(kind)
    try:
        result = merger.merge_map(copy_json(target), copy_json(patch), "")
    except StrategicMergeError as err:
        raise err.api_error() from err
    merger.finish(result)
    return result


class _StrategicMerge:
    """One strategic merge; mutates the (copied) original and patch as the Go code does."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        # Patch values taken over verbatim; decoding into the typed object drops their nulls.
        self.adopted: list[Any] = []

    def adopt(self, value: _T) -> _T:
        self.adopted.append(value)
        return value

    def finish(self, result: Json) -> None:
        for value in self.adopted:
            discard_nulls(value)
        strip_directives(result)

    def list_meta(self, path: str) -> tuple[str, str]:
        """(patch strategy, merge key) of the list at `path`."""
        sem = list_semantics(self.kind, path)
        if sem is None:
            return "", ""
        if sem.smp_merge_key:
            return "merge", sem.smp_merge_key
        if sem.smp_scalar_set:
            return "merge", ""
        return "", ""

    # mergeMap
    def merge_map(self, original: Json, patch: Json, path: str) -> Json:
        if DIRECTIVE in patch:
            return self._map_directive(patch[DIRECTIVE], patch)
        apply_retain_keys(original, patch)
        self._merge_set_element_order(original, patch, path)
        for key, patch_value in list(patch.items()):
            is_delete_list = key.startswith(DELETE_FROM_PRIMITIVE_LIST)
            if is_delete_list:
                key = extract_key(key, DELETE_FROM_PRIMITIVE_LIST) or key
            if patch_value is None:
                original.pop(key, None)
                continue
            if key not in original or go_type(original[key]) != go_type(patch_value):
                if not is_delete_list:
                    self._take_patch_value(original, key, patch_value)
                continue
            current = original[key]
            child = f"{path}.{key}" if path else key
            if isinstance(current, dict):
                original[key] = self.merge_map(current, patch_value, child)
            elif isinstance(current, list):
                strategy, merge_key = self.list_meta(child)
                original[key] = self._merge_slice_handler(
                    current, patch_value, strategy, merge_key, is_delete_list, child
                )
            else:
                original[key] = patch_value
        return original

    def _map_directive(self, directive: Any, patch: Json) -> Json:
        if isinstance(directive, str) and directive == "replace":
            del patch[DIRECTIVE]
            return self.adopt(patch)
        if isinstance(directive, str) and directive == "delete":
            return {}
        raise StrategicMergeError(f"unknown patch type: {go_s(directive)} in map: {go_v(patch)}")

    def _take_patch_value(self, original: Json, key: str, value: Any) -> None:
        discard_nulls(value)
        value, keep = remove_directives(value)
        if keep:
            original[key] = self.adopt(value)
        else:
            original.pop(key, None)

    # mergePatchIntoOriginal
    def _merge_set_element_order(self, original: Json, patch: Json, path: str) -> None:
        for key in [k for k in patch if k.startswith(SET_ELEMENT_ORDER)]:
            order = patch.pop(key)
            if not isinstance(order, list):
                raise StrategicMergeError(bad_arg_type([], order))
            list_key = extract_key(key, SET_ELEMENT_ORDER)
            found_original, found_patch = list_key in original, list_key in patch
            original_list: list[Any] = []
            patch_list: list[Any] = []
            if found_original:
                if not isinstance(original[list_key], list):
                    raise StrategicMergeError(bad_arg_type([], original[list_key]))
                original_list = original[list_key]
            if found_patch:
                if not isinstance(patch[list_key], list):
                    raise StrategicMergeError(bad_arg_type([], patch[list_key]))
                patch_list = patch[list_key]
            child = f"{path}.{list_key}" if path else list_key
            strategy, merge_key = self.list_meta(child)
            validate_set_element_order(patch_list, order, merge_key)
            if found_original and found_patch:
                merged = self._merge_slice_handler(
                    original_list, patch_list, strategy, merge_key, False, child
                )
            elif found_original:
                merged = original_list
            elif found_patch:
                merged, _ = remove_directives(patch_list)
                self.adopt(merged)
            else:
                continue
            if merge_key:
                patch_items, server_only = partition_maps(merged, order, merge_key)
            else:
                patch_items, server_only = partition_primitives(merged, order)
            elem_kind = slice_element_type(original_list, patch_list)
            original[list_key] = normalize_element_order(
                patch_items, server_only, order, original_list, merge_key, elem_kind
            )
            patch.pop(list_key, None)

    # mergeSliceHandler
    def _merge_slice_handler(
        self,
        original: list[Any],
        patch: list[Any],
        strategy: str,
        merge_key: str,
        is_delete_list: bool,
        path: str,
    ) -> list[Any]:
        if strategy == "merge" or is_delete_list:
            return self._merge_slice(original, patch, merge_key, is_delete_list, path)
        return self.adopt(patch)

    # mergeSlice
    def _merge_slice(
        self, original: list[Any], patch: list[Any], merge_key: str, is_delete_list: bool,
        path: str,
    ) -> list[Any]:
        if not original and not patch:
            return original
        elem_kind = slice_element_type(original, patch)
        if elem_kind != "map":
            if is_delete_list:
                doomed = {go_key(v) for v in patch}
                return [v for v in original if go_key(v) not in doomed]
            merged = deduplicate_scalars(original + patch)
            server_order = original
        else:
            if not merge_key:
                raise StrategicMergeError("cannot merge lists without merge key for string")
            server_order, patch = self._apply_special_elements(original, patch, merge_key)
            merged = self._merge_by_key(server_order, patch, merge_key, path)
        if merge_key:
            patch_items, server_only = partition_maps(merged, patch, merge_key)
        else:
            patch_items, server_only = partition_primitives(merged, patch)
        return normalize_element_order(
            patch_items, server_only, patch, server_order, merge_key, elem_kind
        )

    # mergeSliceWithSpecialElements
    def _apply_special_elements(
        self, original: list[Any], patch: list[Any], merge_key: str
    ) -> tuple[list[Any], list[Any]]:
        plain: list[Any] = []
        replace = False
        for element in patch:
            if DIRECTIVE not in element:
                plain.append(element)
                continue
            directive = element[DIRECTIVE]
            if not isinstance(directive, str):
                directive = None
            if directive == "delete":
                if merge_key not in element:
                    raise StrategicMergeError(no_merge_key(element, merge_key))
                value = element[merge_key]
                original = [
                    v for v in original if not (merge_key in v and go_eq(v[merge_key], value))
                ]
            elif directive == "replace":
                replace = True
            elif directive == "merge":
                raise StrategicMergeError("merging lists cannot yet be specified in the patch")
            else:
                raise StrategicMergeError(
                    f"unknown patch type: {go_s(element[DIRECTIVE])} in map: {go_v(element)}"
                )
        if replace:
            return self.adopt(plain), []
        return original, plain

    # mergeSliceWithoutSpecialElements
    def _merge_by_key(
        self, original: list[Any], patch: list[Any], merge_key: str, path: str
    ) -> list[Any]:
        merged = list(original)
        for element in patch:
            if merge_key not in element:
                raise StrategicMergeError(no_merge_key(element, merge_key))
            index = find_map(merged, merge_key, element[merge_key])
            if index is None:
                merged.append(self.adopt(element))
            else:
                merged[index] = self.merge_map(merged[index], element, path + "[]")
        return merged
