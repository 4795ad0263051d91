"""What resource.Quantity's JSON decoding refuses (ParseQuantity's errors), as kube-apiserver's
decoder reports them: the error itself, with no field named."""

from __future__ import annotations

import json
import re
from typing import Any

_PATTERN = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
FORMAT_WRONG = f"quantities must match the regular expression '{_PATTERN}'"
NUMERIC = "unable to parse numeric part of quantity"
SUFFIX = "unable to parse quantity's suffix"
_SHAPE = re.compile(_PATTERN)
_SUFFIXES = frozenset(("", "n", "u", "m", "k", "M", "G", "T", "P", "E",
                       "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"))
_EXPONENT = re.compile(r"[eE][-+]?[0-9]+")
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")


def quantity_error(value: Any) -> str | None:
    """The error decoding the JSON `value` as a Quantity gives, or None when it decodes."""
    if value is None:
        return None
    # UnmarshalJSON parses a number's (or anything's) own text.
    text = value.strip() if isinstance(value, str) else json.dumps(value, separators=(",", ":"))
    match = _SHAPE.match(text)
    if match is None:
        return FORMAT_WRONG
    number, suffix = match.groups()
    if not _NUMBER.fullmatch(number):
        return FORMAT_WRONG
    if suffix not in _SUFFIXES and not _EXPONENT.fullmatch(suffix):
        return SUFFIX
    return None
