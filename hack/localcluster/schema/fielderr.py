"""Field errors of CRD schema handling, rendered the way kube-apiserver renders them.

kube-apiserver builds these messages in Go, so the exact text depends on Go's formatting: `%q`
for strings, `%v` for floats (`1e+06`), and JSON for maps and lists in a bad value (all from
`go_format`, re-exported here for the schema modules). This module builds `Cause`s the way
`field.Error.ErrorBody()` does in k8s.io/apimachinery (1.33+: `null` for a nil value, JSON for
compound values, singular "item"/"byte" when the limit is 1).

Paths follow `field.Path`: `Child` joins with a dot, `Key` and `Index` append `[k]`/`[i]`, and a
nil root renders as `<nil>`.
"""

from __future__ import annotations

from typing import Any

from ..errors import Cause
from ..go_format import go_float, go_json, go_quote, go_v

__all__ = [
    "NIL_PATH",
    "bad_value",
    "child",
    "duplicate",
    "forbidden",
    "go_float",
    "go_json",
    "go_quote",
    "go_v",
    "index",
    "invalid",
    "key",
    "not_supported",
    "required",
    "too_long",
    "too_many",
    "type_invalid",
]

#: How `field.Path(nil).String()` renders: the field of errors reported against no path.
NIL_PATH = "<nil>"


def child(path: str | None, name: str) -> str:
    """`path.Child(name)`."""
    return f"{path}.{name}" if path else name


def key(path: str | None, k: str) -> str:
    """`path.Key(k)`."""
    return f"{path or ''}[{k}]"


def index(path: str | None, i: int) -> str:
    """`path.Index(i)`."""
    return f"{path or ''}[{i}]"


def bad_value(v: Any) -> str:
    """How `field.Error.ErrorBody()` prints the bad value."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return go_float(v)
    if isinstance(v, str):
        return go_quote(v)
    return go_json(v)


# --- causes ----------------------------------------------------------------------------------


def _with_detail(body: str, detail: str) -> str:
    return f"{body}: {detail}" if detail else body


def invalid(path: str, value: Any, detail: str) -> Cause:
    """`field.Invalid`."""
    return Cause(
        "FieldValueInvalid", _with_detail(f"Invalid value: {bad_value(value)}", detail), path
    )


def type_invalid(path: str, value: Any, detail: str) -> Cause:
    """`field.TypeInvalid`: reported as "Invalid value" with its own reason."""
    body = f"Invalid value: {bad_value(value)}"
    return Cause("FieldValueTypeInvalid", _with_detail(body, detail), path)


def required(path: str, detail: str = "") -> Cause:
    """`field.Required`."""
    return Cause("FieldValueRequired", _with_detail("Required value", detail), path)


def forbidden(path: str, detail: str) -> Cause:
    """`field.Forbidden`."""
    return Cause("FieldValueForbidden", _with_detail("Forbidden", detail), path)


def not_supported(path: str, value: Any, allowed: list[str]) -> Cause:
    """`field.NotSupported`; `allowed` are already strings, each is quoted."""
    detail = "supported values: " + ", ".join(go_quote(a) for a in allowed) if allowed else ""
    body = f"Unsupported value: {bad_value(value)}"
    return Cause("FieldValueNotSupported", _with_detail(body, detail), path)


def duplicate(path: str, value: Any) -> Cause:
    """`field.Duplicate`."""
    return Cause("FieldValueDuplicate", f"Duplicate value: {bad_value(value)}", path)


def too_long(path: str, limit: int) -> Cause:
    """`field.TooLong`: the value itself is never shown."""
    if limit < 0:
        return Cause("FieldValueTooLong", "Too long: value is too long", path)
    unit = "byte" if limit == 1 else "bytes"
    return Cause("FieldValueTooLong", f"Too long: may not be more than {limit} {unit}", path)


def too_many(path: str, actual: int, limit: int) -> Cause:
    """`field.TooMany`."""
    if limit >= 0:
        detail = f"must have at most {limit} {'item' if limit == 1 else 'items'}"
    else:
        detail = "has too many items"
    body = f"Too many: {actual}" if actual >= 0 else "Too many"
    return Cause("FieldValueTooMany", f"{body}: {detail}", path)
