"""Kubernetes types our CRDs embed but do not model: plain JSON, tagged with what they are.

A `Probe` is `dict[str, Any]` to Python and to mypy; the `Embedded` tag in the `Annotated`
alias tells the converter to copy it verbatim (nothing is lost, unknown keys included) and
tells the CRD generator which OpenAPI schema to emit for it.
"""

from __future__ import annotations

from typing import Annotated, Any, get_args, get_origin

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
