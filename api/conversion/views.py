"""An object read in one version, for code that only reads it: no payload annotations.

Offline tools (`dynamo-operator render`) read a manifest of either version in the version the
builders take. The payloads that conversion leaves on the result exist for the way back to the
other version; a reader has no use for them, and they must not leak into what is built from
the object (its children would then differ by version). Only this package knows their names.
"""

from __future__ import annotations

from api.conversion.dispatch import CONVERSIONS, convert
from api.kube import Json

__all__ = ["read_as"]


def read_as(obj: Json, version: str) -> Json:
    """`obj` converted to `version` ("v1alpha1" or "v1beta1"), without the private payload
    annotations; an empty annotations map left behind is dropped too. The input is not
    changed. Raises ConversionFailure as `convert` does."""
    out = convert(obj, version)
    meta = out.get("metadata")
    if not isinstance(meta, dict) or not isinstance(meta.get("annotations"), dict):
        return out
    private = CONVERSIONS[str(out["kind"])].annotations
    annotations = {k: v for k, v in meta["annotations"].items() if k not in private}
    if len(annotations) != len(meta["annotations"]):
        if annotations:
            meta["annotations"] = annotations
        else:
            del meta["annotations"]
    return out
