"""What code outside this package may know of the payload annotations, without naming them.

The operator writes its objects as the hub and builds its children's wire form here; it never
reads a payload. Three things still touch them from outside: the child writer must not count a
child's payloads among the metadata keys it set (they come with the wire form, not from the
builders); a status payload an operator that wrote `v1alpha1` statuses left behind must go
once this operator writes the status (nothing keeps it current; `v1alpha1` readers would see
its stale fields restored); and a worker revision keeps the `v1alpha1` services of a graph
that says something only `v1alpha1` can, for undo to write them back. All are answered here.
"""

from __future__ import annotations

from api.conversion.dispatch import CONVERSIONS
from api.kube import Json

__all__ = ["PAYLOAD_ANNOTATIONS", "carries_spec_payload", "stale_status_payload_patch"]

#: Every spec and status payload annotation of every kind.
PAYLOAD_ANNOTATIONS = frozenset(a for c in CONVERSIONS.values() for a in c.annotations)


def stale_status_payload_patch(obj: Json) -> Json | None:
    """The metadata merge patch that removes the status payload `obj` carries (guarded by its
    resourceVersion), or None when it carries none."""
    conversion = CONVERSIONS.get(str(obj.get("kind")))
    meta = obj.get("metadata") or {}
    if conversion is None or conversion.status_annotation not in (meta.get("annotations") or {}):
        return None
    return {"metadata": {"resourceVersion": meta.get("resourceVersion"),
                         "annotations": {conversion.status_annotation: None}}}


def carries_spec_payload(obj: Json) -> bool:
    """Whether the stored `obj` says something only `v1alpha1` can (it holds a spec payload)."""
    conversion = CONVERSIONS.get(str(obj.get("kind")))
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    return conversion is not None and conversion.spec_annotation in annotations
