"""The `nvidia.com/finalizer` of the objects whose deletion has a cleanup: DGDRs, DynamoModels
(LoRA unload) and DCDs with the etcd discovery backend (their keys). DGDs and other DCDs get
none, since owner references and garbage collection clean up after them; they only release
one an older operator version added.

A reconcile first calls `ensure_finalizer`; for an object being deleted it runs its cleanup and
then `release_finalizer`. Both write with a JSON patch guarded by a `test` of the finalizer list
read from the cache, so a concurrent edit makes the write fail with 422/409 and the reconcile is
retried on fresh data instead of overwriting someone else's finalizers.
"""

from __future__ import annotations

from typing import Any

from controller.client import KubeClient
from controller.errors import ApiError, NotFound, lost_race
from controller.resource import Resource

Json = dict[str, Any]

FINALIZER = "nvidia.com/finalizer"


def is_deleting(obj: Json) -> bool:
    return bool(obj["metadata"].get("deletionTimestamp"))


def has_finalizer(obj: Json) -> bool:
    return FINALIZER in (obj["metadata"].get("finalizers") or [])


async def _set_finalizers(client: KubeClient, resource: Resource, obj: Json,
                          finalizers: list[str]) -> Json:
    meta = obj["metadata"]
    current = meta.get("finalizers")
    if current is None:
        ops: list[Json] = [{"op": "test", "path": "/metadata/uid", "value": meta["uid"]},
                           {"op": "add", "path": "/metadata/finalizers", "value": finalizers}]
    else:
        ops = [{"op": "test", "path": "/metadata/finalizers", "value": current},
               {"op": "replace", "path": "/metadata/finalizers", "value": finalizers}]
    try:
        patched: Json = await client.patch(resource, meta.get("namespace"), meta["name"], ops,
                                           patch_type="json")
        return patched
    except ApiError as err:
        conflict = lost_race(err) if not isinstance(err, NotFound) else None
        if conflict is not None:
            raise conflict from err
        raise


async def ensure_finalizer(client: KubeClient, resource: Resource, obj: Json) -> Json:
    """Add the finalizer to a live (not deleting) object if missing; returns the object."""
    if is_deleting(obj) or has_finalizer(obj):
        return obj
    finalizers = [*(obj["metadata"].get("finalizers") or []), FINALIZER]
    return await _set_finalizers(client, resource, obj, finalizers)


async def release_finalizer(client: KubeClient, resource: Resource, obj: Json) -> None:
    """Remove our finalizer (after cleanup), leaving any others in place; an object gone
    already (the cache was behind) has nothing left to release."""
    if not has_finalizer(obj):
        return
    finalizers = [f for f in obj["metadata"].get("finalizers") or [] if f != FINALIZER]
    try:
        await _set_finalizers(client, resource, obj, finalizers)
    except NotFound:
        return
