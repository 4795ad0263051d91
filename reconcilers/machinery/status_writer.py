"""Writing a custom resource's status only when it changed, on the version we read.

The patch carries the resourceVersion the status was computed from, so a status computed
from a stale cache is refused (409) and the reconcile is retried on fresh data, instead of
overwriting a newer status. Nothing is sent when the status is unchanged: an idle operator
makes no writes.
"""

from __future__ import annotations

from typing import Any

from controller.client import KubeClient
from controller.errors import NotFound
from controller.resource import Resource

Json = dict[str, Any]


async def write_status(client: KubeClient, resource: Resource, obj: Json,
                       status: Json) -> Json | None:
    """Make `obj`'s status equal to `status`; the updated object, or None if unchanged or if
    the object is gone (deleted while it was reconciled: its delete event ends the story)."""
    current = obj.get("status") or {}
    if current == status:
        return None
    meta = obj["metadata"]
    patch = {"metadata": {"resourceVersion": meta["resourceVersion"]},
             "status": merge_patch(current, status)}
    try:
        return await client.patch(resource, meta.get("namespace"), meta["name"], patch,
                                  subresource="status")
    except NotFound:
        return None


def merge_patch(current: Json, desired: Json) -> Json:
    """The JSON merge patch (RFC 7386) turning `current` into `desired`.

    A merge patch keeps the keys it does not mention, at every depth: keys that went away are
    nulled out, nested objects are patched key by key, lists are replaced whole."""
    patch: Json = {k: None for k in current if k not in desired}
    for key, value in desired.items():
        old = current.get(key)
        if isinstance(value, dict) and isinstance(old, dict):
            nested = merge_patch(old, value)
            if nested:
                patch[key] = nested
        elif key not in current or value != old:
            patch[key] = value
    return patch
