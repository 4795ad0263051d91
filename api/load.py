"""Loading one of our objects for use: convert it, then apply the create-time rules.

Reconcilers and `dynamo-operator render` read every object of our kinds through `load_valid`,
so they agree on what is valid. The status is left out: it is the operator's to write, and a
problem there is not a problem of the user's spec.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from api.convert import load
from api.errors import ConversionError, FieldError, InvalidObject
from api.kube import Json
from api.validation import validate

__all__ = ["load_valid"]

T = TypeVar("T")


def load_valid(cls: type[T], data: Mapping[str, Any]) -> T:
    """The typed object; InvalidObject listing every field that does not convert or validate."""
    try:
        obj = load(cls, {k: v for k, v in data.items() if k != "status"})
    except ConversionError as err:
        raise InvalidObject(cls.__name__, err.errors, converted=False) from None
    errors = _validate(cls, obj, data)
    if errors:
        raise InvalidObject(cls.__name__, errors, converted=True)
    return obj


#: The create-time errors of the objects loaded lately, by (kind, uid): the generation and
#: metadata they were computed from, and the errors. The rules read the spec and the metadata
#: (the status is never loaded), and the API server moves `metadata.generation` on every change
#: outside metadata and status; so an object loaded again with the same generation and the
#: same metadata, resourceVersion and managedFields aside (a child's event woke its parent, or
#: only its status was written), is not validated again. Metadata values have fixed types
#: (strings, string maps, integers), so `==` on them is exact. One entry per object, the
#: oldest dropped past the bound.
_VALIDATED: dict[tuple[type, str], tuple[int, Json, tuple[FieldError, ...]]] = {}
_VALIDATED_MAX = 16384
#: Metadata the rules never read, left out of what is compared.
_UNREAD_META = frozenset({"resourceVersion", "managedFields"})


def _validate(cls: type, obj: Any, data: Mapping[str, Any]) -> list[FieldError]:
    meta = data.get("metadata")
    if not isinstance(meta, dict):
        return validate(obj)
    uid, generation = meta.get("uid"), meta.get("generation")
    if not isinstance(uid, str) or not uid or type(generation) is not int:
        return validate(obj)
    read = {k: v for k, v in meta.items() if k not in _UNREAD_META}
    key = (cls, uid)
    seen = _VALIDATED.get(key)
    if seen is not None and seen[0] == generation and seen[1] == read:
        # Hold this copy's values from now on: the replaced copy's can be freed.
        _VALIDATED[key] = (generation, read, seen[2])
        return list(seen[2])
    errors = validate(obj)
    _VALIDATED.pop(key, None)
    if len(_VALIDATED) >= _VALIDATED_MAX:
        del _VALIDATED[next(iter(_VALIDATED))]
    # The object's own values, not copies: objects handed to load_valid are the cache's
    # (replaced on every event, never changed in place) or built for this one call.
    _VALIDATED[key] = (generation, read, tuple(errors))
    return errors
