"""JSON values as block-style YAML text, for files the operator writes into ConfigMaps.

Builders may not import a YAML library, and the values here are JSON already (maps, lists,
strings, numbers, booleans, null), so a small emitter does: keys sorted, as Kubernetes' own
marshaller sorts them; strings left plain when YAML would read them back as the same string,
double-quoted (JSON escapes, which YAML shares) otherwise.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["to_yaml"]

_PLAIN = re.compile(r"[A-Za-z_/][A-Za-z0-9_./-]*")
# Plain words YAML 1.1 or 1.2 would read as something other than a string.
_RESERVED = frozenset({"y", "n", "yes", "no", "on", "off", "true", "false", "null", "~"})


def to_yaml(value: Any) -> str:
    """The YAML document of a JSON value, ending in a newline."""
    return "\n".join(_lines(value, 0)) + "\n"


def _lines(value: Any, indent: int) -> list[str]:
    pad = " " * indent
    if isinstance(value, dict) and value:
        lines = []
        for key in sorted(value):
            item = value[key]
            head = f"{pad}{_scalar(str(key))}:"
            if _is_block(item):
                lines.append(head)
                # Lists under a key sit at the key's indentation, as kubectl prints them.
                lines += _lines(item, indent if isinstance(item, list) else indent + 2)
            else:
                lines.append(f"{head} {_scalar(item)}")
        return lines
    if isinstance(value, list) and value:
        lines = []
        for item in value:
            if _is_block(item):
                inner = _lines(item, indent + 2)
                lines.append(f"{pad}- {inner[0][indent + 2:]}")
                lines += inner[1:]
            else:
                lines.append(f"{pad}- {_scalar(item)}")
        return lines
    return [f"{pad}{_scalar(value)}"]


def _is_block(value: Any) -> bool:
    return isinstance(value, (dict, list)) and bool(value)


def _scalar(value: Any) -> str:
    if isinstance(value, dict):
        return "{}"
    if isinstance(value, list):
        return "[]"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return json.dumps(value)
    text = str(value)
    if _PLAIN.fullmatch(text) and text.lower() not in _RESERVED:
        return text
    return json.dumps(text, ensure_ascii=False)
