"""Loading one of our objects for use: convert it, then apply the create-time rules.

Reconcilers and `dynamo-operator render` read every object of our kinds through `load_valid`,
so they agree on what is valid. The status is left out: it is the operator's to write, and a
problem there is not a problem of the user's spec.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from api.convert import load
from api.errors import ConversionError, InvalidObject
from api.validation import validate

__all__ = ["load_valid"]

T = TypeVar("T")


def load_valid(cls: type[T], data: Mapping[str, Any]) -> T:
    """The typed object; InvalidObject listing every field that does not convert or validate."""
    try:
        obj = load(cls, {k: v for k, v in data.items() if k != "status"})
    except ConversionError as err:
        raise InvalidObject(cls.__name__, err.errors, converted=False) from None
    errors = validate(obj)
    if errors:
        raise InvalidObject(cls.__name__, errors, converted=True)
    return obj
