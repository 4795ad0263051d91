"""Kubernetes resource quantities ("500m", "1.5Gi", "2e3") parsed to exact rational numbers.

The grammar is the one the API server accepts for `resource.Quantity`:

    quantity  ::= sign? number suffix?
    number    ::= digits | digits "." digits? | "." digits
    suffix    ::= binary (Ki Mi Gi Ti Pi Ei) | decimal (n u m k M G T P E)
                | ("e" | "E") sign? digits

Values come back as `fractions.Fraction`, so "0.1" is exactly 1/10 and comparisons of sizes
never suffer from floating-point rounding.
"""

from __future__ import annotations

import re
from fractions import Fraction

__all__ = ["QuantityError", "is_quantity", "parse_quantity"]

_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}

_QUANTITY = re.compile(
    r"(?P<sign>[+-])?"
    r"(?P<int>[0-9]*)(?:\.(?P<frac>[0-9]*))?"
    r"(?:(?P<binary>[KMGTPE]i)|[eE](?P<exp>[+-]?[0-9]+)|(?P<decimal>[numkMGTPE]?))"
)


class QuantityError(ValueError):
    """Raised for a value that is not a Kubernetes quantity."""


def parse_quantity(value: str | int) -> Fraction:
    """Return the exact value of a quantity given as a string (or a JSON integer)."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise QuantityError(f"quantities must be strings or integers, got {type(value).__name__}")
    if isinstance(value, int):
        return Fraction(value)
    match = _QUANTITY.fullmatch(value)
    if match is None:
        raise QuantityError(_message(value))
    whole, frac = match["int"], match["frac"] or ""
    # A bare sign, "." or a suffix with no digits in front of it is not a number.
    if not whole and not frac:
        raise QuantityError(_message(value))
    number = Fraction(int(whole or "0")) + (Fraction(int(frac), 10 ** len(frac)) if frac else 0)
    if match["sign"] == "-":
        number = -number
    if match["binary"]:
        return number * Fraction(1024) ** _BINARY[match["binary"]]
    exponent = int(match["exp"]) if match["exp"] is not None else _DECIMAL[match["decimal"]]
    return number * Fraction(10) ** exponent


def is_quantity(value: object) -> bool:
    """True when `value` parses as a quantity."""
    try:
        parse_quantity(value)  # type: ignore[arg-type]
    except QuantityError:
        return False
    return True


def _message(value: str) -> str:
    return (
        f"quantities must match the regular expression "
        f"'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$', got {value!r}"
    )
