"""The mutating webhook of DynamoGraphDeployments: the origin-version stamp.

As the original's defaulting webhook (same path, both served versions): when a graph is
created, `nvidia.com/dynamo-operator-origin-version` is set to this operator's version, unless
the creator gave one (a graph moved from another cluster keeps its origin). Rendering that an
upgrade must not apply to running graphs is gated on it (`backends.origin_gates`).

Once set, the stamp is immutable, as the original says of it: an update that drops or changes
it gets the old value back. The original's handler leaves updates alone, so a `kubectl
replace` of a manifest without the annotation would drop it and roll the graph's pods back to
the old rendering; restoring it keeps the design's rule that nothing lives only in an
annotation a replace would wipe. A graph without a stamp (created before it existed) gets none
at an update; its owner may add one, which opts it in (and rolls its pods).

The original's other defaults (replicas 1 when unset, Grove's minAvailable) are not applied
here: the builders already read an unset count as the original's default.
"""

from __future__ import annotations

from typing import Any

from api.origin_version import ORIGIN_VERSION, parse_origin_version
from controller.webhook import AdmissionRequest, AdmissionResponse, Handler

__all__ = ["MUTATING_PATH", "MUTATING_WEBHOOK_NAME", "created", "origin_stamp_handler",
           "stamp_patch"]

Json = dict[str, Any]

MUTATING_PATH = "/mutate-nvidia-com-v1alpha1-dynamographdeployment"
MUTATING_WEBHOOK_NAME = "mdynamographdeployment.kb.io"
_POINTER = "/metadata/annotations/" + ORIGIN_VERSION.replace("~", "~0").replace("/", "~1")


def origin_stamp_handler(version: str) -> Handler:
    """The handler stamping graphs with `version`."""

    async def handle(request: AdmissionRequest) -> AdmissionResponse:
        return AdmissionResponse.allow(patch=tuple(stamp_patch(request, version)))

    return handle


def stamp_patch(request: AdmissionRequest, version: str) -> list[Json]:
    """The JSONPatch of one request's object: the stamp on a create, the old stamp back on an
    update that lost or changed it; [] otherwise."""
    obj = request.object
    if request.subresource or not isinstance(obj, dict):
        return []
    if request.operation == "CREATE":
        wanted: str | None = version
    elif request.operation == "UPDATE":
        wanted = _stamp(request.old_object)
        if wanted is None or parse_origin_version(wanted) is None:
            return []  # nothing to keep (or a value the validating webhook would refuse)
    else:
        return []
    metadata = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else None
    annotations = (metadata or {}).get("annotations")
    if isinstance(annotations, dict):
        given = annotations.get(ORIGIN_VERSION)
        if request.operation == "CREATE" and given is not None:
            return []  # the creator's own value stays
        if given == wanted:
            return []
        op = "replace" if ORIGIN_VERSION in annotations else "add"
        return [{"op": op, "path": _POINTER, "value": wanted}]
    if metadata is None:
        return [{"op": "add", "path": "/metadata", "value": {
            "annotations": {ORIGIN_VERSION: wanted}}}]
    return [{"op": "add", "path": "/metadata/annotations", "value": {ORIGIN_VERSION: wanted}}]


def created(doc: Json, version: str) -> Json:
    """`doc` as its create would store it: a graph of ours without the stamp gets `version`
    (a copy); anything else is returned as it is."""
    group = str(doc.get("apiVersion") or "").split("/")[0]
    if doc.get("kind") != "DynamoGraphDeployment" or group != "nvidia.com" or \
            _stamp(doc) is not None:
        return doc
    metadata: Json = _mapping(doc.get("metadata"))
    annotations: Json = _mapping(metadata.get("annotations"))
    return {**doc, "metadata": {**metadata,
                                "annotations": {**annotations, ORIGIN_VERSION: version}}}


def _mapping(value: Any) -> Json:
    return value if isinstance(value, dict) else {}


def _stamp(obj: Json | None) -> str | None:
    annotations = ((obj or {}).get("metadata") or {}).get("annotations") or {}
    value = annotations.get(ORIGIN_VERSION) if isinstance(annotations, dict) else None
    return value if isinstance(value, str) else None
