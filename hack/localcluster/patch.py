"""PATCH bodies applied the way kube-apiserver applies them.

Three patch formats, each matching the library the real server uses:

* JSON patch (RFC 6902) and JSON merge patch (RFC 7386) follow
  `gopkg.in/evanphx/json-patch.v4`, including its departures from the RFCs (a `replace` of a
  missing object key adds it, a `copy` from a missing key copies null, negative array indices
  count from the end, nulls are pruned from newly merged values).
* Strategic merge patch follows the apply half of `k8s.io/apimachinery/pkg/util/strategicpatch`:
  list merge keys come from `list_semantics`, directives (`$patch`, `$retainKeys`,
  `$setElementOrder/…`, `$deleteFromPrimitiveList/…`) are honoured, and list elements end up in
  the order the real merge produces (new elements go before the live ones they are not ordered
  against, so an added container comes first).

Errors are the `Status` objects the apiserver's patch handler
(`staging/src/k8s.io/apiserver/pkg/endpoints/handlers/patch.go`) returns: an undecodable patch is
400 BadRequest, a JSON patch that cannot be applied is 422 Invalid with the generic message (the
handler drops the library's text), and strategic-merge errors the handler does not classify reach
the client as 500 with an empty reason and the library's message.
"""

from __future__ import annotations

import copy
import json
import math
import re
from collections.abc import Callable
from decimal import Decimal
from typing import Any, Final, TypeVar

from .errors import ApiError, Cause, bad_request
from .list_semantics import list_semantics

Json = dict[str, Any]

#: The PATCH content types kube-apiserver accepts, by the short name the HTTP layer dispatches on.
PATCH_CONTENT_TYPES: Final[dict[str, str]] = {
    "application/json-patch+json": "json",
    "application/merge-patch+json": "merge",
    "application/strategic-merge-patch+json": "strategic",
    "application/apply-patch+yaml": "apply",
}

#: kube-apiserver's cap on the operations of one JSON patch.
MAX_JSON_PATCH_OPERATIONS: Final = 10000

# NewGenericServerResponse(422, ...) keeps only this text; the library's message is dropped.
_UNPROCESSABLE: Final = "the server rejected our request due to an error in our request"

_DIRECTIVE: Final = "$patch"
_RETAIN_KEYS: Final = "$retainKeys"
_DELETE_FROM_PRIMITIVE_LIST: Final = "$deleteFromPrimitiveList"
_SET_ELEMENT_ORDER: Final = "$setElementOrder"

_ABSENT: Final = object()

_T = TypeVar("_T")


# --- JSON merge patch ------------------------------------------------------------------------


def json_merge_patch(target: Json, patch: Any) -> Json:
    """Apply an RFC 7386 merge patch to `target` and return the result as a new object.

    A null value deletes a key; an object merges into an object; anything else replaces. The
    patch document itself must be an object, as kube-apiserver requires.
    """
    if patch is None:
        raise bad_request("Invalid JSON Patch")
    if not isinstance(patch, dict):
        raise bad_request(
            f"error decoding patch: json: cannot unmarshal {_json_kind(patch)} into Go value of"
            " type map[string]interface {}"
        )
    doc = copy.deepcopy(target)
    _merge_docs(doc, copy.deepcopy(patch))
    return doc


def _merge_docs(doc: Json, patch: Json) -> None:
    for key, value in patch.items():
        if value is None:
            doc.pop(key, None)
        elif doc.get(key) is None:
            doc[key] = _prune_nulls(value)
        else:
            doc[key] = _merge_value(doc[key], value)


def _merge_value(current: Any, patch: Any) -> Any:
    if not isinstance(current, dict):
        return _prune_nulls(patch)
    if not isinstance(patch, dict):
        # evanphx returns the patch value untouched here: its nulls survive.
        return patch
    _merge_docs(current, patch)
    return current


def _prune_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _prune_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_prune_nulls(v) for v in value if v is not None]
    return value


# --- JSON patch ------------------------------------------------------------------------------


class _OperationError(Exception):
    """One JSON patch operation could not be applied (the library's message, for logs)."""


def json_patch(target: Json, operations: Any) -> Json:
    """Apply an RFC 6902 JSON patch (a list of operations) to `target`; return a new object.

    A patch that does not decode is 400 BadRequest; more than 10000 operations is 413; an
    operation that cannot be applied (failing `test`, missing path, index out of range, unknown
    `op`) is 422 Invalid, and the whole patch is then discarded.
    """
    ops = _decode_json_patch(operations)
    if len(ops) > MAX_JSON_PATCH_OPERATIONS:
        raise ApiError(
            413,
            "RequestEntityTooLarge",
            "Request entity too large: The allowed maximum operations in a JSON patch is"
            f" {MAX_JSON_PATCH_OPERATIONS}, got {len(ops)}",
        )
    doc: Any = copy.deepcopy(target)
    try:
        for op in copy.deepcopy(ops):
            doc = _apply_operation(doc, op)
    except _OperationError as err:
        raise ApiError(422, "Invalid", _UNPROCESSABLE) from err
    if not isinstance(doc, dict):
        raise _undecodable_result(doc)
    return doc


def _decode_json_patch(operations: Any) -> list[Json | None]:
    # The handler first decodes into []jsonPatchOp; its type errors are what the client sees.
    if operations is None:
        return []
    if not isinstance(operations, list):
        raise _patch_decode_error(operations, "Go value of type []handlers.jsonPatchOp")
    for op in operations:
        if op is None:
            continue
        if not isinstance(op, dict):
            raise _patch_decode_error(op, "Go value of type handlers.jsonPatchOp")
        for name, value in op.items():
            if name in ("op", "path", "from") and value is not None and not isinstance(value, str):
                raise _patch_decode_error(
                    value, f"Go struct field jsonPatchOp.{name} of type string"
                )
    return operations


def _patch_decode_error(value: Any, into: str) -> ApiError:
    return bad_request(
        f"error decoding patch: json: cannot unmarshal {_json_kind(value)} into {into}"
    )


def _apply_operation(doc: Any, op: Json | None) -> Any:
    kind = op.get("op") if op is not None else None
    if op is None or not isinstance(kind, str):
        raise _OperationError("Unexpected kind: unknown")
    if kind == "add":
        _op_add(doc, op)
    elif kind == "remove":
        _op_remove(doc, op)
    elif kind == "replace":
        return _op_replace(doc, op)
    elif kind == "move":
        _op_move(doc, op)
    elif kind == "test":
        _op_test(doc, op)
    elif kind == "copy":
        _op_copy(doc, op)
    else:
        raise _OperationError(f"Unexpected kind: {kind}")
    return doc


def _op_field(op: Json, name: str, kind: str) -> str:
    value = op.get(name)
    if not isinstance(value, str):
        raise _OperationError(f"{kind} operation failed to decode {name}: missing value")
    return value


def _op_value(op: Json) -> Any:
    return op.get("value", _ABSENT)


def _op_add(doc: Any, op: Json) -> None:
    path = _op_field(op, "path", "add")
    container, key = _locate(doc, path, "add")
    value = _op_value(op)
    _container_add(container, key, None if value is _ABSENT else value, path, "add")


def _op_remove(doc: Any, op: Json) -> None:
    path = _op_field(op, "path", "remove")
    container, key = _locate(doc, path, "remove")
    _container_remove(container, key, path, "remove")


def _op_replace(doc: Any, op: Json) -> Any:
    path = _op_field(op, "path", "replace")
    value = _op_value(op)
    if path == "":
        if not isinstance(value, (dict, list)):
            raise _OperationError("replace operation value must be object or array")
        return value
    container, key = _locate(doc, path, "replace")
    if isinstance(container, list):
        index = _array_index(container, key, path, "replace", extra=0)
        container[index] = None if value is _ABSENT else value
    else:
        # evanphx v4 never reports a missing object key here: replace then adds it.
        container[key] = None if value is _ABSENT else value
    return doc


def _op_move(doc: Any, op: Json) -> None:
    source = _op_field(op, "from", "move")
    container, key = _locate(doc, source, "move", what="from path")
    value = _container_get(container, key, key, "move")
    _container_remove(container, key, key, "move")
    path = _op_field(op, "path", "move")
    container, key = _locate(doc, path, "move", what="destination path")
    _container_add(container, key, value, path, "move")


def _op_copy(doc: Any, op: Json) -> None:
    source = _op_field(op, "from", "copy")
    container, key = _locate(doc, source, "copy", what="from path")
    value = _container_get(container, key, source, "copy")
    path = _op_field(op, "path", "copy")
    container, key = _locate(doc, path, "copy", what="destination path")
    _container_add(container, key, copy.deepcopy(value), path, "copy")


def _op_test(doc: Any, op: Json) -> None:
    path = _op_field(op, "path", "test")
    expected = _op_value(op)
    if path == "":
        if expected is not _ABSENT and _json_equal(doc, expected):
            return
        raise _OperationError(f"testing value {path} failed: test failed")
    container, key = _locate(doc, path, "test")
    actual = _container_get(container, key, path, "test")
    if actual is None:
        # A missing key and a null value read the same; both match an absent or null value.
        if expected is _ABSENT or expected is None:
            return
    elif expected is not _ABSENT and _json_equal(actual, expected):
        return
    raise _OperationError(f"testing value {path} failed: test failed")


def _locate(doc: Any, path: str, kind: str, what: str = "path") -> tuple[Any, str]:
    """The container the last token of `path` addresses, and that token (unescaped)."""
    tokens = path.split("/")
    if len(tokens) >= 2:
        current = doc
        for token in tokens[1:-1]:
            try:
                current = _container_get(current, _unescape(token), path, kind)
            except _OperationError:
                current = None
            if not isinstance(current, (dict, list)):
                break
        else:
            return current, _unescape(tokens[-1])
    raise _OperationError(f'{kind} operation does not apply: doc is missing {what}: "{path}"')


def _unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def _container_get(container: Any, key: str, path: str, kind: str) -> Any:
    if isinstance(container, list):
        return container[_array_index(container, key, path, kind, extra=0)]
    return container.get(key)


def _container_add(container: Any, key: str, value: Any, path: str, kind: str) -> None:
    if isinstance(container, list):
        if key == "-":
            container.append(value)
        else:
            container.insert(_array_index(container, key, path, kind, extra=1), value)
    else:
        container[key] = value


def _container_remove(container: Any, key: str, path: str, kind: str) -> None:
    if isinstance(container, list):
        del container[_array_index(container, key, path, kind, extra=0)]
    elif key in container:
        del container[key]
    else:
        raise _OperationError(
            f"error in {kind} for path: '{path}': Unable to remove nonexistent key: {key}:"
            " missing value"
        )


_GO_INT = re.compile(r"[+-]?[0-9]+")


def _array_index(array: list[Any], key: str, path: str, kind: str, extra: int) -> int:
    """The index `key` addresses in `array`; `extra` is 1 where one past the end is valid."""
    if not _GO_INT.fullmatch(key) or not -(2**63) <= int(key) < 2**63:
        raise _OperationError(
            f"error in {kind} for path: '{path}': strconv.Atoi: parsing {json.dumps(key)}:"
            " invalid syntax"
        )
    index = int(key)
    size = len(array) + extra
    if index < 0:
        index += size
    if not 0 <= index < size:
        raise _OperationError(
            f"error in {kind} for path: '{path}': Unable to access invalid index: {key}:"
            " invalid index referenced"
        )
    return index


def _json_equal(left: Any, right: Any) -> bool:
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(
            _json_equal(v, right[k]) for k, v in left.items()
        )
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(map(_json_equal, left, right))
    return _go_key(left) == _go_key(right)


def _undecodable_result(doc: Any) -> ApiError:
    text = json.dumps(doc, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    detail = (
        "couldn't get version/kind; json parse error: json: cannot unmarshal"
        f" {_json_kind(doc)} into Go value of type struct {{ APIVersion string"
        ' "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }'
    )
    cause = Cause(
        "FieldValueInvalid",
        f"Invalid value: {json.dumps(text, ensure_ascii=False)}: {detail}",
        "patch",
    )
    return ApiError(
        422,
        "Invalid",
        f' "" is invalid: patch: {cause.message}',
        {"causes": [cause.to_json()]},
    )


# --- strategic merge patch -------------------------------------------------------------------


class _SmpError(Exception):
    """A strategic merge failure, with the HTTP code the patch handler gives it."""

    def __init__(self, message: str, code: int = 500) -> None:
        super().__init__(message)
        self.code = code

    def api_error(self) -> ApiError:
        if self.code == 400:
            return bad_request(str(self))
        if self.code == 422:
            return ApiError(422, "Invalid", _UNPROCESSABLE)
        # Not a Status error: the apiserver reports it as 500 with an empty (Unknown) reason.
        return ApiError(500, "", str(self))


def strategic_merge_patch(target: Json, patch: Any, kind: str) -> Json:
    """Apply a strategic merge patch to `target`, an object of the built-in `kind`.

    Maps merge recursively and null deletes a key. Lists merge as `list_semantics` says: by
    merge key, as a set of scalars, or (by default) atomically. Directives `$patch`
    (replace/delete), `$retainKeys`, `$setElementOrder/<list>` and
    `$deleteFromPrimitiveList/<list>` are honoured and never kept in the result. Returns a new
    object; raises ApiError with the code, reason and message kube-apiserver would return.
    """
    if patch is None:
        return copy.deepcopy(target)
    if not isinstance(patch, dict):
        raise bad_request(
            f"json: cannot unmarshal {_json_kind(patch)} into Go value of type"
            " map[string]interface {}"
        )
    merger = _StrategicMerge(kind)
    try:
        result = merger.merge_map(copy.deepcopy(target), copy.deepcopy(patch), "")
    except _SmpError as err:
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
            _discard_nulls(value)
        _strip_directives(result)

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
        if _DIRECTIVE in patch:
            return self._map_directive(patch[_DIRECTIVE], patch)
        _apply_retain_keys(original, patch)
        self._merge_set_element_order(original, patch, path)
        for key, patch_value in list(patch.items()):
            is_delete_list = key.startswith(_DELETE_FROM_PRIMITIVE_LIST)
            if is_delete_list:
                key = _extract_key(key, _DELETE_FROM_PRIMITIVE_LIST) or key
            if patch_value is None:
                original.pop(key, None)
                continue
            if key not in original or _go_type(original[key]) != _go_type(patch_value):
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
            del patch[_DIRECTIVE]
            return self.adopt(patch)
        if isinstance(directive, str) and directive == "delete":
            return {}
        raise _SmpError(f"unknown patch type: {_go_s(directive)} in map: {_go_v(patch)}")

    def _take_patch_value(self, original: Json, key: str, value: Any) -> None:
        _discard_nulls(value)
        value, keep = _remove_directives(value)
        if keep:
            original[key] = self.adopt(value)
        else:
            original.pop(key, None)

    # mergePatchIntoOriginal
    def _merge_set_element_order(self, original: Json, patch: Json, path: str) -> None:
        for key in [k for k in patch if k.startswith(_SET_ELEMENT_ORDER)]:
            order = patch.pop(key)
            if not isinstance(order, list):
                raise _SmpError(_bad_arg_type([], order))
            list_key = _extract_key(key, _SET_ELEMENT_ORDER)
            found_original, found_patch = list_key in original, list_key in patch
            original_list: list[Any] = []
            patch_list: list[Any] = []
            if found_original:
                if not isinstance(original[list_key], list):
                    raise _SmpError(_bad_arg_type([], original[list_key]))
                original_list = original[list_key]
            if found_patch:
                if not isinstance(patch[list_key], list):
                    raise _SmpError(_bad_arg_type([], patch[list_key]))
                patch_list = patch[list_key]
            child = f"{path}.{list_key}" if path else list_key
            strategy, merge_key = self.list_meta(child)
            _validate_set_element_order(patch_list, order, merge_key)
            if found_original and found_patch:
                merged = self._merge_slice_handler(
                    original_list, patch_list, strategy, merge_key, False, child
                )
            elif found_original:
                merged = original_list
            elif found_patch:
                merged, _ = _remove_directives(patch_list)
                self.adopt(merged)
            else:
                continue
            if merge_key:
                patch_items, server_only = _partition_maps(merged, order, merge_key)
            else:
                patch_items, server_only = _partition_primitives(merged, order)
            elem_kind = _slice_element_type(original_list, patch_list)
            original[list_key] = _normalize_element_order(
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
        elem_kind = _slice_element_type(original, patch)
        if elem_kind != "map":
            if is_delete_list:
                doomed = {_go_key(v) for v in patch}
                return [v for v in original if _go_key(v) not in doomed]
            merged = _deduplicate_scalars(original + patch)
            server_order = original
        else:
            if not merge_key:
                raise _SmpError("cannot merge lists without merge key for string")
            server_order, patch = self._apply_special_elements(original, patch, merge_key)
            merged = self._merge_by_key(server_order, patch, merge_key, path)
        if merge_key:
            patch_items, server_only = _partition_maps(merged, patch, merge_key)
        else:
            patch_items, server_only = _partition_primitives(merged, patch)
        return _normalize_element_order(
            patch_items, server_only, patch, server_order, merge_key, elem_kind
        )

    # mergeSliceWithSpecialElements
    def _apply_special_elements(
        self, original: list[Any], patch: list[Any], merge_key: str
    ) -> tuple[list[Any], list[Any]]:
        plain: list[Any] = []
        replace = False
        for element in patch:
            if _DIRECTIVE not in element:
                plain.append(element)
                continue
            directive = element[_DIRECTIVE]
            if not isinstance(directive, str):
                directive = _ABSENT
            if directive == "delete":
                if merge_key not in element:
                    raise _SmpError(_no_merge_key(element, merge_key))
                value = element[merge_key]
                original = [
                    v for v in original if not (merge_key in v and _go_eq(v[merge_key], value))
                ]
            elif directive == "replace":
                replace = True
            elif directive == "merge":
                raise _SmpError("merging lists cannot yet be specified in the patch")
            else:
                raise _SmpError(
                    f"unknown patch type: {_go_s(element[_DIRECTIVE])} in map: {_go_v(element)}"
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
                raise _SmpError(_no_merge_key(element, merge_key))
            index = _find_map(merged, merge_key, element[merge_key])
            if index is None:
                merged.append(self.adopt(element))
            else:
                merged[index] = self.merge_map(merged[index], element, path + "[]")
        return merged


def _extract_key(key: str, prefix: str) -> str:
    parts = key.split("/", 1)
    if len(parts) <= 1 or parts[0] != prefix:
        if prefix == _DELETE_FROM_PRIMITIVE_LIST:
            raise _SmpError("invalid patch format of primitive list", 400)
        raise _SmpError("invalid patch format of setElementOrder list", 400)
    return parts[1]


def _apply_retain_keys(original: Json, patch: Json) -> None:
    if _RETAIN_KEYS not in patch:
        return
    retain = patch.pop(_RETAIN_KEYS)
    if not isinstance(retain, list):
        raise _SmpError("invalid patch format of retainKeys", 400)
    kept = {_go_key(k) for k in retain}
    for key, value in patch.items():
        if value is None or key.startswith((_DELETE_FROM_PRIMITIVE_LIST, _SET_ELEMENT_ORDER)):
            continue
        if _go_key(key) not in kept:
            raise _SmpError("invalid patch format of retainKeys", 400)
    for key in [k for k in original if _go_key(k) not in kept]:
        del original[key]


def _validate_set_element_order(patch_list: list[Any], order: list[Any], merge_key: str) -> None:
    if not order or not patch_list:
        return
    if merge_key:
        for element in patch_list:
            if not isinstance(element, dict):
                raise _SmpError(_bad_arg_type({}, element))
        candidates = [e for e in patch_list if not _is_delete_element(e)]
    else:
        candidates = patch_list
    p = s = 0
    while p < len(candidates) and s < len(order):
        if isinstance(candidates[p], dict) and _DIRECTIVE in candidates[p]:
            p += 1
            continue
        if _merge_key_equal(candidates[p], order[s], merge_key):
            p += 1
        s += 1
    if p < len(candidates) and s >= len(order):
        raise _SmpError(
            f"The order in patch list:\n{_go_v(patch_list)}\n doesn't match"
            f" {_SET_ELEMENT_ORDER} list:\n{_go_v(order)}\n"
        )


def _merge_key_equal(left: Any, right: Any, merge_key: str) -> bool:
    if not merge_key:
        return _go_eq(left, right)
    for side in (left, right):
        if not isinstance(side, dict):
            raise _SmpError(_bad_arg_type({}, side))
        if merge_key not in side:
            raise _SmpError(_no_merge_key(side, merge_key))
    return _go_eq(left[merge_key], right[merge_key])


def _find_map(items: list[Any], merge_key: str, value: Any) -> int | None:
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise _SmpError(f"value for key {index} is not a map.")
        if merge_key in item and _go_eq(item[merge_key], value):
            return index
    return None


def _partition_primitives(
    merged: list[Any], partition_by: list[Any]
) -> tuple[list[Any], list[Any]]:
    present = {_go_key(v) for v in partition_by}
    inside = [v for v in merged if _go_key(v) in present]
    outside = [v for v in merged if _go_key(v) not in present]
    return inside, outside


def _partition_maps(
    merged: list[Any], partition_by: list[Any], merge_key: str
) -> tuple[list[Any], list[Any]]:
    inside: list[Any] = []
    outside: list[Any] = []
    for item in merged:
        if not isinstance(item, dict):
            raise _SmpError(_bad_arg_type({}, item))
        if merge_key not in item:
            raise _SmpError(_no_merge_key(item, merge_key))
        found = _find_map(partition_by, merge_key, item[merge_key]) is not None
        (inside if found else outside).append(item)
    return inside, outside


def _normalize_element_order(
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
                raise _SmpError(_bad_arg_type({}, item))
            if merge_key not in item:
                raise _SmpError(_no_merge_key(item, merge_key))
        to_delete = [v for v in items if _is_delete_element(v)]
        items = [v for v in items if not _is_delete_element(v)]

    def less(a: Any, b: Any) -> bool:
        ia = _index(order, a, merge_key, elem_kind)
        if ia >= 0:
            ib = _index(order, b, merge_key, elem_kind)
            if ib >= 0:
                return ia < ib
        return True

    _go_stable_sort(items, less)
    return items + to_delete


def _is_delete_element(item: Json) -> bool:
    directive = item.get(_DIRECTIVE, _ABSENT)
    return isinstance(directive, str) and directive == "delete"


def _index(items: list[Any], value: Any, merge_key: str, elem_kind: str) -> int:
    def key_of(item: Any) -> Any:
        if elem_kind != "map":
            return item
        return item.get(merge_key) if isinstance(item, dict) else None

    wanted = key_of(value)
    for i, item in enumerate(items):
        if _go_eq(wanted, key_of(item)):
            return i
    return -1


def _deduplicate_scalars(items: list[Any]) -> list[Any]:
    # The Go algorithm moves the last element into each duplicate's slot; kept for fidelity.
    s = list(items)
    length = len(s) - 1
    i = 0
    while i < length:
        j = i + 1
        while j <= length:
            if _go_eq(s[i], s[j]):
                s[j] = s[length]
                s = s[:length]
                length -= 1
                j -= 1
            j += 1
        i += 1
    return s


def _slice_element_type(*lists: list[Any]) -> str:
    previous: str | None = None
    for items in lists:
        for item in items:
            current = _go_type(item)
            if previous is None:
                previous = current
                if current == "slice":
                    raise _SmpError("lists of lists are not supported", 422)
            elif previous != current:
                raise _SmpError(f"list element types are not identical: {_go_v(list(lists))}")
    if previous is None:
        raise _SmpError("no elements in any of the given slices")
    return previous


def _remove_directives(value: Any) -> tuple[Any, bool]:
    """Drop maps carrying `$patch` (and list elements that are such maps); False: drop `value`."""
    if isinstance(value, dict):
        if _DIRECTIVE in value:
            return None, False
        for key in list(value):
            child, keep = _remove_directives(value[key])
            if keep:
                value[key] = child
            else:
                del value[key]
        return value, True
    if isinstance(value, list):
        kept = []
        for item in value:
            child, keep = _remove_directives(item)
            if keep:
                kept.append(child)
        return kept, True
    return value, True


def _discard_nulls(value: Any) -> None:
    if isinstance(value, dict):
        for key in list(value):
            if value[key] is None:
                del value[key]
            else:
                _discard_nulls(value[key])
    elif isinstance(value, list):
        for item in value:
            _discard_nulls(item)


def _strip_directives(value: Any) -> None:
    # Decoding into the typed object drops directive keys the merge left behind.
    if isinstance(value, dict):
        for key in list(value):
            if key in (_DIRECTIVE, _RETAIN_KEYS) or key.startswith(
                (_SET_ELEMENT_ORDER, _DELETE_FROM_PRIMITIVE_LIST)
            ):
                del value[key]
            else:
                _strip_directives(value[key])
    elif isinstance(value, list):
        for item in value:
            _strip_directives(item)


def _go_stable_sort(data: list[Any], less: Callable[[Any, Any], bool]) -> None:
    """Go's sort.SliceStable, step for step: the comparators above are not strict orders."""

    def lt(i: int, j: int) -> bool:
        return less(data[i], data[j])

    def swap(i: int, j: int) -> None:
        data[i], data[j] = data[j], data[i]

    def insertion_sort(a: int, b: int) -> None:
        for i in range(a + 1, b):
            j = i
            while j > a and lt(j, j - 1):
                swap(j, j - 1)
                j -= 1

    def swap_range(a: int, b: int, n: int) -> None:
        for i in range(n):
            swap(a + i, b + i)

    def rotate(a: int, m: int, b: int) -> None:
        i, j = m - a, b - m
        while i != j:
            if i > j:
                swap_range(m - i, m, j)
                i -= j
            else:
                swap_range(m - i, m + j - i, i)
                j -= i
        swap_range(m - i, m, i)

    def sym_merge(a: int, m: int, b: int) -> None:
        if m - a == 1:
            i, j = m, b
            while i < j:
                h = (i + j) // 2
                if lt(h, a):
                    i = h + 1
                else:
                    j = h
            for k in range(a, i - 1):
                swap(k, k + 1)
            return
        if b - m == 1:
            i, j = a, m
            while i < j:
                h = (i + j) // 2
                if not lt(m, h):
                    i = h + 1
                else:
                    j = h
            for k in range(m, i, -1):
                swap(k, k - 1)
            return
        mid = (a + b) // 2
        n = mid + m
        if m > mid:
            start, r = n - b, mid
        else:
            start, r = a, m
        p = n - 1
        while start < r:
            c = (start + r) // 2
            if not lt(p - c, c):
                start = c + 1
            else:
                r = c
        end = n - start
        if start < m < end:
            rotate(start, m, end)
        if a < start < mid:
            sym_merge(a, start, mid)
        if mid < end < b:
            sym_merge(mid, end, b)

    n = len(data)
    block = 20
    a, b = 0, block
    while b <= n:
        insertion_sort(a, b)
        a, b = b, b + block
    insertion_sort(a, n)
    while block < n:
        a, b = 0, 2 * block
        while b <= n:
            sym_merge(a, a + block, b)
            a, b = b, b + 2 * block
        if a + block < n:
            sym_merge(a, a + block, n)
        block *= 2


# --- Go value semantics and formatting -------------------------------------------------------


def _go_type(value: Any) -> str:
    """The dynamic Go type a decoded JSON value has (ints decode as int64)."""
    if value is None:
        return "nil"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "slice"
    return "map"


def _go_key(value: Any) -> tuple[Any, ...]:
    """A hashable stand-in for Go interface equality: same dynamic type and same value."""
    if isinstance(value, (dict, list)):
        return ("uncomparable", id(value))
    return (_go_type(value), value)


def _go_eq(left: Any, right: Any) -> bool:
    return _go_key(left) == _go_key(right)


_GO_TYPE_NAMES: Final = {
    "map": "map[string]interface {}",
    "slice": "[]interface {}",
    "string": "string",
    "int64": "int64",
    "float64": "float64",
    "bool": "bool",
    "nil": "%!s(<nil>)",
}


def _bad_arg_type(expected: Any, actual: Any) -> str:
    return (
        f"expected a {_GO_TYPE_NAMES[_go_type(expected)]},"
        f" but received a {_GO_TYPE_NAMES[_go_type(actual)]}"
    )


def _no_merge_key(item: Json, merge_key: str) -> str:
    return f"map: {_go_v(item)} does not contain declared merge key: {merge_key}"


def _go_v(value: Any) -> str:
    """fmt's %v of a decoded JSON value."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _go_float(value)
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "[" + " ".join(_go_v(v) for v in value) + "]"
    return "map[" + " ".join(f"{k}:{_go_v(value[k])}" for k in sorted(value)) + "]"


def _go_s(value: Any) -> str:
    """fmt's %s of a decoded JSON value (non-strings print as %!s(type=value))."""
    if isinstance(value, str):
        return value
    if value is None:
        return "%!s(<nil>)"
    if isinstance(value, list):
        return "[" + " ".join(_go_s(v) for v in value) + "]"
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{_go_s(value[k])}" for k in sorted(value)) + "]"
    return f"%!s({_go_type(value)}={_go_v(value)})"


def _go_float(value: float) -> str:
    """strconv.FormatFloat(value, 'g', -1, 64), which fmt's %v uses."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    sign, digit_tuple, exponent = Decimal(repr(value)).as_tuple()
    digits = "".join(map(str, digit_tuple)).rstrip("0") or "0"
    assert isinstance(exponent, int)
    point = len(digit_tuple) + exponent  # position of the decimal point after digit 0
    prefix = "-" if sign else ""
    exp10 = point - 1
    if exp10 < -4 or exp10 >= 6:
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{prefix}{mantissa}e{'-' if exp10 < 0 else '+'}{abs(exp10):02d}"
    if point <= 0:
        return f"{prefix}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return f"{prefix}{digits}{'0' * (point - len(digits))}"
    return f"{prefix}{digits[:point]}.{digits[point:]}"


def _json_kind(value: Any) -> str:
    """How encoding/json names a JSON value in its type errors."""
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "bool"
    return "number"
