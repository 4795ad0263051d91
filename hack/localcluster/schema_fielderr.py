"""Field errors of CRD schema handling, rendered the way kube-apiserver renders them.

kube-apiserver builds these messages in Go, so the exact text depends on Go's formatting: `%q`
for strings, `%v` for floats (`1e+06`), and JSON for maps and lists in a bad value. This module
reproduces that formatting and builds `Cause`s the way `field.Error.ErrorBody()` does in
k8s.io/apimachinery (1.33+: `null` for a nil value, JSON for compound values, singular
"item"/"byte" when the limit is 1).

Paths follow `field.Path`: `Child` joins with a dot, `Key` and `Index` append `[k]`/`[i]`, and a
nil root renders as `<nil>`.
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

from hack.localcluster.errors import Cause

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


# --- Go formatting ---------------------------------------------------------------------------

_SIMPLE_ESCAPES = {
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
    "\\": "\\\\",
    '"': '\\"',
}


def go_quote(s: str) -> str:
    """Go's `strconv.Quote` (what `%q` prints)."""
    out = ['"']
    for ch in s:
        if ch in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[ch])
        elif ch == " " or ch.isprintable():
            out.append(ch)
        else:
            cp = ord(ch)
            if cp < 0x20 or cp == 0x7F:
                out.append(f"\\x{cp:02x}")
            elif cp < 0x10000:
                out.append(f"\\u{cp:04x}")
            else:
                out.append(f"\\U{cp:08x}")
    out.append('"')
    return "".join(out)


def _shortest_digits(f: float) -> tuple[str, int]:
    """The shortest round-tripping decimal digits of abs(f) and the decimal point position."""
    sign, digits, exp = Decimal(repr(abs(f))).as_tuple()
    del sign
    ds = "".join(str(d) for d in digits).lstrip("0") or "0"
    # as_tuple may carry trailing zeros ("100.0" -> 1000, -1): fold them into the exponent.
    stripped = ds.rstrip("0") or "0"
    assert isinstance(exp, int)
    point = len(ds) + exp
    return stripped, point


def _format_e(digits: str, point: int, neg: bool) -> str:
    mant = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    e = point - 1
    return f"{'-' if neg else ''}{mant}e{'-' if e < 0 else '+'}{abs(e):02d}"


def _format_f(digits: str, point: int, neg: bool) -> str:
    if point <= 0:
        body = "0." + "0" * (-point) + digits
    elif point >= len(digits):
        body = digits + "0" * (point - len(digits))
    else:
        body = digits[:point] + "." + digits[point:]
    return ("-" if neg else "") + body


def go_float(f: float) -> str:
    """Go's `%v` of a float64 (`strconv.FormatFloat(f, 'g', -1, 64)` with Go's exponent rule)."""
    if math.isnan(f):
        return "NaN"
    if math.isinf(f):
        return "+Inf" if f > 0 else "-Inf"
    if f == 0:
        return "-0" if math.copysign(1.0, f) < 0 else "0"
    digits, point = _shortest_digits(f)
    exp = point - 1
    # shortest formatting decides between %e and %f with precision 6.
    if exp < -4 or exp >= 6:
        return _format_e(digits, point, f < 0)
    return _format_f(digits, point, f < 0)


def go_json_float(f: float) -> str:
    """How Go's encoding/json writes a float64."""
    if f == 0:
        return "0" if math.copysign(1.0, f) > 0 else "-0"
    a = abs(f)
    digits, point = _shortest_digits(f)
    if a < 1e-6 or a >= 1e21:
        s = _format_e(digits, point, f < 0)
        # encoding/json trims "e-07" to "e-7" but keeps "e+21".
        if len(s) >= 4 and s[-4] == "e" and s[-3] == "-" and s[-2] == "0":
            s = s[:-2] + s[-1]
        return s
    return _format_f(digits, point, f < 0)


_JSON_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _go_json_string(s: str) -> str:
    out = ['"']
    for ch in s:
        if ch in _JSON_ESCAPES:
            out.append(_JSON_ESCAPES[ch])
        elif ord(ch) < 0x20 or ch in "<>&\u2028\u2029":
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def go_json(v: Any) -> str:
    """Go's `json.Marshal` of decoded JSON: compact, map keys sorted, HTML characters escaped."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return go_json_float(v)
    if isinstance(v, str):
        return _go_json_string(v)
    if isinstance(v, list):
        return "[" + ",".join(go_json(x) for x in v) + "]"
    if isinstance(v, dict):
        items = sorted(v.items())
        return "{" + ",".join(_go_json_string(k) + ":" + go_json(x) for k, x in items) + "}"
    return _go_json_string(str(v))


def go_v(v: Any) -> str:
    """Go's `%v` of a number as kube-openapi prints limits in its messages."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return go_float(v)
    return str(v)


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
