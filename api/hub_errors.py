"""Checking an object of ours written in `v1beta1` (the hub) with the rules, naming its fields.

The business rules of `api.validation` are written against `v1alpha1`; a `v1beta1` object is
checked through its `v1alpha1` view and each error is moved back to the field of the
`v1beta1` object it is about (`api.conversion.field_paths`); before that, what only the
`v1beta1` shape can get wrong is checked on the object itself (`api.validation.v1beta1_shape`).
The admission webhook (for a `v1beta1` request) and the reconcilers (for a stored object, which
is `v1beta1`) both report errors this way, so a user reads the names of the fields they wrote.
The rules' messages speak of `v1alpha1`'s services and componentType; moved to a `v1beta1`
object they speak of components and type (`HUB_WORDING`). `validate_stored` is what the
reconcilers call: the view is made here, and nothing outside this package reads it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, TypeVar

from api.conversion import HUB, SPOKE, convert
from api.conversion.field_paths import hub_path
from api.convert import load
from api.errors import FieldError, InvalidObject
from api.kube import Json
from api.load import load_valid
from api.validation import warnings
from api.validation.component import UNDECLARED_PVC
from api.validation.v1beta1_shape import v1beta1_shape

__all__ = ["HUB_WORDING", "hub_rules", "hub_wording", "in_hub", "load_valid_view",
           "validate_stored"]

T = TypeVar("T")

#: The rules' `v1alpha1` words and their `v1beta1` equivalents, in the messages they write.
HUB_WORDING: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), replacement) for pattern, replacement in (
        (r"\bat least one service\b", "at least one component"),
        (r"\bat most (\d+) services\b", r"at most \1 components"),
        (r"\beach of the (\d+) services\b", r"each of the \1 components"),
        (r'\bservice keys "', 'component names "'),
        (r'\bunknown service "', 'unknown component "'),
        (r"\bservice name\b", "component name"),
        (r"\bgraph and service names\b", "graph and component names"),
        (r"\bgraph or service name\b", "graph or component name"),
        (r"\bcomponentType epp\b", "type epp"),
    ))


def hub_wording(message: str) -> str:
    """`message` of a rule, in `v1beta1`'s words."""
    for pattern, replacement in HUB_WORDING:
        message = pattern.sub(replacement, message)
    return message


def in_hub(errors: list[FieldError], hub: Json, spoke: Json) -> list[FieldError]:
    """Errors about `spoke` (the `v1alpha1` view of `hub`), naming the fields of `hub` they
    are about, in its words; a field `v1beta1` has no place for is named in the message."""
    out = []
    for error in errors:
        where = hub_path(error.path, hub, spoke)
        message = hub_wording(error.message)
        if where.spoke_only:
            message = (f"{where.spoke_only} (a v1alpha1 field v1beta1 has no place for): "
                       f"{message}")
        out.append(FieldError(where.path, message))
    return out


def load_valid_view(cls: type[T], hub: Json, view: Mapping[str, Any]) -> T:
    """The `v1alpha1` model `cls` of `view`, the `v1alpha1` view of the stored object `hub`;
    InvalidObject naming the fields of `hub`: its shape errors as a stored object (the
    create-only rule on `restart` does not apply), then the errors of the rules on the view
    on fields the shape rules did not already name."""
    shape = v1beta1_shape(hub, hub)
    try:
        model = load_valid(cls, view)
    except InvalidObject as invalid:
        errors = hub_rules(invalid.errors)
        if not errors and not shape and invalid.converted:
            return load(cls, {k: v for k, v in view.items() if k != "status"})
        said = {e.path for e in shape}
        mapped = [e for e in in_hub(errors, hub, dict(view)) if e.path not in said]
        raise InvalidObject(invalid.kind, [*shape, *mapped],
                            converted=invalid.converted) from None
    if shape:
        raise InvalidObject(cls.__name__, shape, converted=True)
    return model


def hub_rules(errors: list[FieldError]) -> list[FieldError]:
    """The errors of the view that hold for the hub: a mount's PVC need not be declared in
    `spec.pvcs` (`v1beta1` has none; its podTemplate volumes and compilationCache name
    existing claims)."""
    return [e for e in errors if not e.message.endswith(UNDECLARED_PVC)]


def validate_stored(cls: type[Any], obj: Json) -> list[FieldError]:
    """Check a graph or DCD as the operator stores it (the hub; a test bed's `v1alpha1`
    object as it is) with the rules: InvalidObject naming its fields as stored (see
    `load_valid_view`), else the rules' warnings (`api.validation.warnings`). ConversionFailure
    as `convert` raises it."""
    if obj.get("apiVersion") != HUB:
        return warnings(load_valid(cls, obj))
    view = convert({k: v for k, v in obj.items() if k != "status"}, SPOKE)
    return warnings(load_valid_view(cls, obj, view))
