"""resource.Quantity values: a quantity's amount, and its canonical text (Quantity.String(),
which validation messages quote): decimal amounts in the largest power of 1000 that keeps the
number whole (`2k`, `1500m`), binary ones (`Ki`...`Ei`) in the largest power of 1024, and
amounts a binary suffix cannot hold whole (fractions, below 1024) as decimal ones."""

from __future__ import annotations

import re
from decimal import ROUND_CEILING, Decimal, InvalidOperation

_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15,
            "E": 18}
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_SPLIT = re.compile(r"([+-]?[0-9.]+)(.*)")


def parse(text: str) -> tuple[Decimal, bool] | None:
    """The amount of a quantity and whether it is written with a binary suffix, or None when
    it is not a quantity."""
    match = _SPLIT.fullmatch(text.strip())
    if match is None:
        return None
    number, suffix = match.groups()
    try:
        value = Decimal(number)
    except InvalidOperation:
        return None
    if suffix in _BINARY:
        return value * (2 ** _BINARY[suffix]), True
    if suffix in _DECIMAL:
        return value.scaleb(_DECIMAL[suffix]), False
    if suffix[:1] in ("e", "E"):
        try:
            return value.scaleb(int(suffix[1:])), False
        except ValueError:
            return None
    return None


def canonical(value: Decimal, binary: bool) -> str:
    """Quantity.String() of an amount (rounded up to nano units, as Go keeps them)."""
    value = value.quantize(Decimal("1e-9"), rounding=ROUND_CEILING)
    if not value:
        return "0"
    if binary and value == value.to_integral_value() and abs(value) >= 1024:
        whole = int(value)
        for suffix, bits in reversed(_BINARY.items()):
            if whole % (2 ** bits) == 0:
                return f"{whole // 2 ** bits}{suffix}"
    for suffix, exponent in sorted(_DECIMAL.items(), key=lambda item: -item[1]):
        scaled = value.scaleb(-exponent)
        if scaled == scaled.to_integral_value():
            return f"{int(scaled)}{suffix}"
    return str(value)  # not reached: every amount is whole in nano units
