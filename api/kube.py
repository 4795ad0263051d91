"""Kubernetes types our CRDs embed but do not model: plain JSON, tagged with what they are.

A `Probe` is `dict[str, Any]` to Python and to mypy; the `Embedded` tag in the `Annotated`
alias tells the converter to copy it verbatim (nothing is lost, unknown keys included) and
tells the CRD generator which OpenAPI schema to emit for it.
"""

from __future__ import annotations

import copy
from typing import Annotated, Any, TypeVar, get_args, get_origin

import attrs

__all__ = [
    "Condition",
    "ConfigMapKeyRef",
    "Container",
    "Embedded",
    "EnvVar",
    "FreeForm",
    "HPABehavior",
    "Json",
    "MetricSpec",
    "ObjectMeta",
    "Probe",
    "Quantity",
    "RawExtension",
    "ResourceClaim",
    "ResourceRequirements",
    "Time",
    "Toleration",
    "copy_json",
    "embedded_tag",
]

Json = dict[str, Any]


@attrs.frozen
class Embedded:
    """Marks an embedded Kubernetes type; `kinds` are the JSON types a value may have."""

    name: str
    kinds: tuple[type, ...] = (dict,)


ObjectMeta = Annotated[Json, Embedded("ObjectMeta")]
Probe = Annotated[Json, Embedded("Probe")]
EnvVar = Annotated[Json, Embedded("EnvVar")]
Container = Annotated[Json, Embedded("Container")]
Condition = Annotated[Json, Embedded("Condition")]
ResourceRequirements = Annotated[Json, Embedded("ResourceRequirements")]
ResourceClaim = Annotated[Json, Embedded("ResourceClaim")]
Toleration = Annotated[Json, Embedded("Toleration")]
HPABehavior = Annotated[Json, Embedded("HorizontalPodAutoscalerBehavior")]
MetricSpec = Annotated[Json, Embedded("MetricSpec")]
ConfigMapKeyRef = Annotated[Json, Embedded("ConfigMapKeySelector")]
# Arbitrary JSON objects: the schema preserves every field inside.
FreeForm = Annotated[Json, Embedded("FreeForm")]
# A whole Kubernetes object (apiVersion, kind, metadata, ...), stored as given.
RawExtension = Annotated[Json, Embedded("RawExtension")]
# JSON allows a quantity as a number or a string ("10" and 10 are both valid sizes).
Quantity = Annotated[int | str, Embedded("Quantity", (int, str))]
Time = Annotated[str, Embedded("Time", (str,))]


def embedded_tag(tp: Any) -> Embedded | None:
    """The Embedded tag of an `Annotated` alias above, or None for any other type."""
    if get_origin(tp) is not Annotated:
        return None
    for extra in get_args(tp)[1:]:
        if isinstance(extra, Embedded):
            return extra
    return None


_T = TypeVar("_T")
#: Values that are never copied: immutable, as `copy.deepcopy` treats them.
_ATOMS = frozenset({str, int, float, bool, type(None)})


def copy_json(value: _T) -> _T:
    """A deep copy of JSON data, several times faster than `copy.deepcopy`.

    Plain dicts and lists are rebuilt at every depth and str/int/float/bool/None are shared
    (immutable); anything else (a dict subclass, a tuple, a model object) goes through
    `copy.deepcopy`. Unlike deepcopy, a sub-object that appears twice in the input is copied
    twice: JSON has no shared references, and the copy then has none either."""
    kind = type(value)
    if kind is dict:
        return _copy_dict(value)  # type: ignore[arg-type,return-value]
    if kind is list:
        return _copy_list(value)  # type: ignore[arg-type,return-value]
    if kind in _ATOMS:
        return value
    return copy.deepcopy(value)


def _copy_dict(value: dict[Any, Any]) -> dict[Any, Any]:
    out = {}
    for key, item in value.items():
        kind = type(item)
        if kind is dict:
            item = _copy_dict(item)
        elif kind is list:
            item = _copy_list(item)
        elif kind not in _ATOMS:
            item = copy.deepcopy(item)
        out[key] = item
    return out


def _copy_list(value: list[Any]) -> list[Any]:
    out = []
    for item in value:
        kind = type(item)
        if kind is dict:
            item = _copy_dict(item)
        elif kind is list:
            item = _copy_list(item)
        elif kind not in _ATOMS:
            item = copy.deepcopy(item)
        out.append(item)
    return out
