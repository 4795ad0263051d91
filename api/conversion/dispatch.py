"""`convert(obj, to_version)`: the one entry point, choosing the kind's conversion."""

from __future__ import annotations

from api.conversion.component_deployment import COMPONENT_DEPLOYMENT
from api.conversion.errors import ConversionFailure
from api.conversion.graph_deployment import GRAPH_DEPLOYMENT
from api.conversion.model import MODEL
from api.conversion.objects import GROUP, HUB, SPOKE, KindConversion, convert_object
from api.conversion.request import GRAPH_DEPLOYMENT_REQUEST
from api.conversion.scaling_adapter import SCALING_ADAPTER
from api.kube import Json, copy_json

__all__ = ["CONVERSIONS", "VERSIONS", "convert", "private_annotations"]

CONVERSIONS: dict[str, KindConversion] = {
    c.kind: c
    for c in (
        GRAPH_DEPLOYMENT,
        COMPONENT_DEPLOYMENT,
        GRAPH_DEPLOYMENT_REQUEST,
        SCALING_ADAPTER,
        MODEL,
    )
}
VERSIONS = (SPOKE, HUB)


def convert(obj: Json, to_version: str, *, detached: bool = True) -> Json:
    """`obj` (any of the five kinds, in v1alpha1 or v1beta1) in `to_version`, given as
    "v1beta1" or "nvidia.com/v1beta1". The input is never changed; an object already in the
    target version comes back as a copy. `detached=False` saves the copying for a caller that
    only encodes the result: it may then share values with `obj` (and an object already in
    the target version is `obj` itself). Raises ConversionFailure for an unknown kind or
    version."""
    target = _api_version(to_version)
    kind = obj.get("kind")
    if not isinstance(kind, str) or kind not in CONVERSIONS:
        known = ", ".join(CONVERSIONS)
        raise ConversionFailure(f"cannot convert kind {kind!r}: known kinds are {known}")
    source = obj.get("apiVersion")
    if source not in VERSIONS:
        raise ConversionFailure(
            f"cannot convert {kind} from apiVersion {source!r}: expected one of "
            + ", ".join(VERSIONS)
        )
    if source == target:
        return copy_json(obj) if detached else obj
    return convert_object(obj, CONVERSIONS[kind], to_hub=target == HUB, detached=detached)


def private_annotations(kind: str) -> tuple[str, str]:
    """The spec and status payload annotations of `kind` (for conversion tests)."""
    return CONVERSIONS[kind].annotations


def _api_version(version: str) -> str:
    full = version if "/" in version else f"{GROUP}/{version}"
    if full not in VERSIONS:
        raise ConversionFailure(
            f"cannot convert to {version!r}: expected v1alpha1 or v1beta1 (of {GROUP})"
        )
    return full
