"""Checks of single values (quantities, names, enums, GPU counts) used by the rule modules.

Each returns a list of FieldError for the given path, empty when the value is fine.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

from api.errors import FieldError
from api.quantity import QuantityError, parse_quantity
from api.validation.kube_values import clip

_WHOLE_NUMBER = re.compile(r"[0-9]+")


def required(path: str, value: object) -> list[FieldError]:
    """None, "" and empty containers count as missing."""
    return [FieldError(path, "required")] if value is None or value in ("", [], {}) else []


def one_of(path: str, value: str | None, allowed: Sequence[str]) -> list[FieldError]:
    if value is None or value in allowed:
        return []
    supported = ", ".join(f'"{a}"' for a in allowed)
    return [FieldError(path, f'unsupported value "{clip(value)}"; supported values: {supported}')]


def at_least(path: str, value: int | None, minimum: int) -> list[FieldError]:
    if value is None or value >= minimum:
        return []
    return [FieldError(path, f"must be >= {minimum}")]


def quantity(
    path: str, value: str | int | None, *, allow_negative: bool = False
) -> list[FieldError]:
    if value is None:
        return []
    try:
        amount = parse_quantity(value)
    except QuantityError:
        message = f"must be a Kubernetes quantity such as 500m or 10Gi, got {clip(value)!r}"
        return [FieldError(path, message)]
    if amount < 0 and not allow_negative:
        return [FieldError(path, "must be >= 0")]
    return []


def gpu_count(path: str, value: str | None, *, positive: bool) -> list[FieldError]:
    """GPUs are whole devices: a string of digits, above zero for a limit."""
    if value is None:
        return []
    if not _WHOLE_NUMBER.fullmatch(value):
        return [FieldError(path, f"must be a whole number of GPUs, got {clip(value)!r}")]
    if positive and int(value) == 0:
        return [FieldError(path, "must be a whole number of GPUs greater than 0")]
    return []


def name(path: str, value: str | None, check: Callable[[str], list[str]]) -> list[FieldError]:
    """Run a names.is_* check; an empty or missing value is left to `required`."""
    if not value:
        return []
    return [FieldError(path, f"{clip(value)!r}: {message}") for message in check(value)]


def duplicates(path: str, values: Iterable[str]) -> list[FieldError]:
    """One error per repeated value, at the index where it repeats."""
    seen: set[str] = set()
    errors = []
    for i, value in enumerate(values):
        if value in seen:
            errors.append(FieldError(f"{path}[{i}]", f'duplicate value "{clip(value)}"'))
        seen.add(value)
    return errors


def is_zero(amount: str | int) -> bool:
    """A quantity equal to zero; False for invalid ones, which `quantity` reports."""
    try:
        return parse_quantity(amount) == 0
    except QuantityError:
        return False
