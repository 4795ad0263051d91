"""Go's formatting of decoded JSON values, for messages that must read exactly as the real server's.

kube-apiserver and its libraries build their error texts with Go's `fmt` and `encoding/json`, so
reproducing a message means reproducing how Go prints a value:

* `go_quote`: `%q` of a string (`strconv.Quote`);
* `go_float`: `%v` of a float64 (shortest digits, exponent form below 1e-4 or from 1e6);
* `go_v` / `go_s`: `%v` / `%s` of any decoded JSON value (`map[a:1]`, `%!s(int64=1)`);
* `go_json` / `go_json_float`: `json.Marshal` (sorted map keys, HTML characters escaped);
* `go_encode`: a response body as the API server's `json.Encoder` writes it (keys in the
  order given, as a struct's fields are, compact, HTML characters escaped, a final newline);
* `go_type`: the dynamic Go type a decoded JSON value has (ints decode as int64);
* `go_json_kind`: how encoding/json names a JSON value in "cannot unmarshal <kind> into …".
"""

from __future__ import annotations

import json
import math
from decimal import Decimal
from typing import Any

__all__ = [
    "go_encode",
    "go_float",
    "go_json",
    "go_json_float",
    "go_json_html_escape",
    "go_json_kind",
    "go_quote",
    "go_s",
    "go_type",
    "go_v",
]

_QUOTE_ESCAPES = {
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
    '"': '\\"',
    "\\": "\\\\",
}


def go_quote(value: str) -> str:
    """A string as Go's `%q` (strconv.Quote) renders it."""
    out = ['"']
    for ch in value:
        if ch in _QUOTE_ESCAPES:
            out.append(_QUOTE_ESCAPES[ch])
        elif ch.isprintable():
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


# --- floats ----------------------------------------------------------------------------------


def _shortest_digits(value: float) -> tuple[str, int]:
    """The shortest round-tripping decimal digits of abs(value), and the decimal point position."""
    _, digit_tuple, exponent = Decimal(repr(abs(value))).normalize().as_tuple()
    assert isinstance(exponent, int)
    digits = "".join(str(d) for d in digit_tuple)
    return digits, len(digits) + exponent


def _exponent_form(digits: str, point: int, negative: bool) -> str:
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    exp = point - 1
    return f"{'-' if negative else ''}{mantissa}e{'-' if exp < 0 else '+'}{abs(exp):02d}"


def _plain_form(digits: str, point: int, negative: bool) -> str:
    if point <= 0:
        body = "0." + "0" * -point + digits
    elif point >= len(digits):
        body = digits + "0" * (point - len(digits))
    else:
        body = digits[:point] + "." + digits[point:]
    return ("-" if negative else "") + body


def go_float(value: float) -> str:
    """`%v` of a float64: `strconv.FormatFloat(value, 'g', -1, 64)` with Go's exponent rule."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    digits, point = _shortest_digits(value)
    exp = point - 1
    if exp < -4 or exp >= 6:
        return _exponent_form(digits, point, value < 0)
    return _plain_form(digits, point, value < 0)


def go_json_float(value: float) -> str:
    """How Go's encoding/json writes a float64: plain below 1e21, exponent form below 1e-6."""
    if value == 0:
        return "0" if math.copysign(1.0, value) > 0 else "-0"
    digits, point = _shortest_digits(value)
    magnitude = abs(value)
    if magnitude < 1e-6 or magnitude >= 1e21:
        text = _exponent_form(digits, point, value < 0)
        # encoding/json trims "e-07" to "e-7" but keeps "e+21".
        if len(text) >= 4 and text[-4] == "e" and text[-3] == "-" and text[-2] == "0":
            text = text[:-2] + text[-1]
        return text
    return _plain_form(digits, point, value < 0)


# --- encoding/json ---------------------------------------------------------------------------

#: What Go's encoding/json escapes even outside ASCII-only mode, and Python's json does not.
_HTML_ESCAPES = (
    ("<", "\\u003c"),
    (">", "\\u003e"),
    ("&", "\\u0026"),
    ("\u2028", "\\u2028"),
    ("\u2029", "\\u2029"),
)
_JSON_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def go_json_html_escape(text: str) -> str:
    """JSON text from Python's json module with the characters Go's encoder also escapes."""
    for raw, escaped in _HTML_ESCAPES:
        text = text.replace(raw, escaped)
    return text


def _json_string(value: str) -> str:
    out = ['"']
    for ch in value:
        if ch in _JSON_ESCAPES:
            out.append(_JSON_ESCAPES[ch])
        elif ord(ch) < 0x20 or ch in "<>&\u2028\u2029":
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def go_json(value: Any) -> str:
    """`json.Marshal` of decoded JSON: compact, map keys sorted, HTML characters escaped."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return go_json_float(value)
    if isinstance(value, str):
        return _json_string(value)
    if isinstance(value, list):
        return "[" + ",".join(go_json(v) for v in value) + "]"
    if isinstance(value, dict):
        members = (_json_string(k) + ":" + go_json(v) for k, v in sorted(value.items()))
        return "{" + ",".join(members) + "}"
    return _json_string(str(value))


def go_encode(value: Any) -> bytes:
    """A body as `json.NewEncoder(w).Encode(value)` of a Go struct writes it: members in the
    order of the dict (a struct's field order), compact, UTF-8, `<`, `>`, `&`, U+2028 and
    U+2029 escaped, and a trailing newline."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return (go_json_html_escape(text) + "\n").encode(errors="replace")


def go_json_kind(value: Any) -> str:
    """How encoding/json names a decoded value in its type errors ("cannot unmarshal array …").

    Go decodes null without a type error; a None reads as "object", as a missing object would.
    """
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


# --- fmt verbs -------------------------------------------------------------------------------


def go_type(value: Any) -> str:
    """The dynamic Go type of decoded JSON: nil, bool, int64, float64, string, slice or map."""
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


def go_v(value: Any) -> str:
    """`%v` of a decoded JSON value (`<nil>`, `[a b]`, `map[k:v]`)."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return go_float(value)
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "[" + " ".join(go_v(v) for v in value) + "]"
    return "map[" + " ".join(f"{k}:{go_v(value[k])}" for k in sorted(value)) + "]"


def go_s(value: Any) -> str:
    """`%s` of a decoded JSON value (non-strings print as `%!s(type=value)`)."""
    if isinstance(value, str):
        return value
    if value is None:
        return "%!s(<nil>)"
    if isinstance(value, list):
        return "[" + " ".join(go_s(v) for v in value) + "]"
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_s(value[k])}" for k in sorted(value)) + "]"
    return f"%!s({go_type(value)}={go_v(value)})"
