"""JSON patch (RFC 6902) as gopkg.in/evanphx/json-patch.v4 applies it.

Departing from the RFC like the library does: a `replace` of a missing object key adds it, a
`copy` from a missing key copies null, and negative array indices count from the end. The
operations are decoded first the way the patch handler decodes them, so type errors read as
encoding/json reports them.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any, Final

from ..errors import ApiError, Cause
from ..go_format import go_json_kind
from ..json_copy import copy_json
from .go_values import go_key
from .patch_errors import UNPROCESSABLE, decode_error

Json = dict[str, Any]

__all__ = ["MAX_JSON_PATCH_OPERATIONS", "json_patch"]

#: kube-apiserver's cap on the operations of one JSON patch.
MAX_JSON_PATCH_OPERATIONS: Final = 10000

_ABSENT: Final = object()


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
    doc: Any = copy_json(target)
    try:
        for op in copy_json(ops):
            doc = _apply_operation(doc, op)
    except _OperationError as err:
        raise ApiError(422, "Invalid", UNPROCESSABLE) from err
    if not isinstance(doc, dict):
        raise _undecodable_result(doc)
    return doc


def _decode_json_patch(operations: Any) -> list[Json | None]:
    # The handler first decodes into []jsonPatchOp; its type errors are what the client sees.
    if operations is None:
        return []
    if not isinstance(operations, list):
        raise decode_error(operations, "Go value of type []handlers.jsonPatchOp")
    for op in operations:
        if op is None:
            continue
        if not isinstance(op, dict):
            raise decode_error(op, "Go value of type handlers.jsonPatchOp")
        for name, value in op.items():
            if name in ("op", "path", "from") and value is not None and not isinstance(value, str):
                raise decode_error(
                    value, f"Go struct field jsonPatchOp.{name} of type string"
                )
    return operations


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
    return go_key(left) == go_key(right)


def _undecodable_result(doc: Any) -> ApiError:
    text = json.dumps(doc, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    detail = (
        "couldn't get version/kind; json parse error: json: cannot unmarshal"
        f" {go_json_kind(doc)} into Go value of type struct {{ APIVersion string"
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
