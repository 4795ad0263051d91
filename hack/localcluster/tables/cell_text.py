"""The text of a JSON value in a string cell, as client-go's JSONPath printer writes it.

Strings print bare, numbers and booleans as Go's `%v`, a missing value as `<no value>`, and maps
and lists as `json.Marshal` output. That JSON differs from `go_format.go_json` in two details kept
from the printer this reproduces: `\b`/`\f` use their short escapes and -0.0 prints as `0`.
"""

from __future__ import annotations

import json
import math
from typing import Any

from ..go_format import go_float, go_json, go_json_float, go_json_html_escape

__all__ = ["cell_text"]


def _json_float(value: float) -> str:
    if math.isnan(value) or math.isinf(value):
        return "null"
    return "0" if value == 0 else go_json_float(value)


def _json(value: Any) -> str:
    if isinstance(value, str):
        return go_json_html_escape(json.dumps(value, ensure_ascii=False))
    if isinstance(value, float):
        return _json_float(value)
    if isinstance(value, list):
        return "[" + ",".join(_json(v) for v in value) + "]"
    if isinstance(value, dict):
        members = (f"{_json(str(k))}:{_json(value[k])}" for k in sorted(value))
        return "{" + ",".join(members) + "}"
    if value is None or isinstance(value, (bool, int)):
        return go_json(value)
    return _json(str(value))


def cell_text(value: Any) -> str:
    """A JSONPath result as the text of a string cell."""
    if isinstance(value, (dict, list)):
        return _json(value)
    if value is None:
        return "<no value>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return go_float(value)
    return str(value)
