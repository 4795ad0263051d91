"""Deep copies of JSON values, the write path's most frequent operation.

`copy_json` gives the same result as `copy.deepcopy` (same types, same key order, shared
sub-values stay shared) but goes through `marshal`, which copies plain dicts, lists, strings and
numbers in C several times faster. Anything marshal does not take (subclasses of the built-in
types, datetimes from YAML, sentinels) falls back to `copy.deepcopy`, and so do values that may
hold a NaN: `copy.deepcopy` keeps float objects, and a NaN equals itself inside containers
only while it is the same object.
"""

from __future__ import annotations

import copy
import marshal
from typing import Any, TypeVar, cast

__all__ = ["copy_json"]

T = TypeVar("T")


def copy_json(value: T) -> T:
    """A deep copy of `value`, as `copy.deepcopy` makes it."""
    try:
        data = marshal.dumps(cast(Any, value))
    except ValueError:
        return copy.deepcopy(value)
    if _may_hold_nan(data):
        return copy.deepcopy(value)
    copied: T = marshal.loads(data)
    return copied


def _may_hold_nan(data: bytes) -> bool:
    """Whether marshal data may hold a NaN: its little-endian double ends in 0x7f or 0xff
    after a byte of at least 0xf0 (all exponent bits set), which UTF-8 text never has."""
    for marker in (b"\x7f", b"\xff"):
        i = data.find(marker, 1)
        while i != -1:
            if data[i - 1] >= 0xF0:
                return True
            i = data.find(marker, i + 1)
    return False
