"""Writing a custom resource's status only when it changed, as the object is stored.

Our kinds are read as stored (the DGD, DCD and DGDR as the hub, `v1beta1`), and their
reconcilers build statuses in the stored version's terms: the patch is the plain diff of the
stored status.

The patch carries the resourceVersion the status was computed from, so a status computed
from a stale cache is refused (409) and the reconcile is retried on fresh data, instead of
overwriting a newer status. Nothing is sent when the status is unchanged: an idle operator
makes no writes.

Nor is anything sent from a version this process has already written over. A reconcile that
runs before the cache has seen the operator's own last status write (another child's event
woke it) would compute from that stale copy and be refused with a 409, one wasted write per
step at scale. `StaleCopy`, a Conflict, is raised instead, without a request: the controller
requeues the object with the short backoff of a conflict, by when the cache holds the write
(the write's own watch event wakes nothing where, as for graphs and components, status-only
updates are filtered out).

A status payload annotation that an older operator left (it wrote statuses in `v1alpha1`, and
the conversion kept there what `v1beta1` cannot show) is removed once, right after the first
status this operator writes: nothing keeps it current any more, and `v1alpha1` readers would
see its stale fields restored.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from api.conversion.payloads import stale_status_payload_patch
from controller.client import KubeClient
from controller.errors import Conflict, NotFound
from controller.resource import Resource

Json = dict[str, Any]

class StaleCopy(Conflict):
    """A status computed from a copy of the object this process has already written over."""


#: (uid, resourceVersion) of the versions our status writes replaced (oldest forgotten first).
_written_over: OrderedDict[tuple[str, str], None] = OrderedDict()
_REMEMBERED = 16384


def _remember(uid: str, version: str) -> None:
    _written_over[(uid, version)] = None
    _written_over.move_to_end((uid, version))
    if len(_written_over) > _REMEMBERED:
        _written_over.popitem(last=False)


async def write_status(client: KubeClient, resource: Resource, obj: Json,
                       status: Json, *, decode: bool = True) -> Json | None:
    """Make `obj`'s status equal to `status`; the updated object, or None if unchanged or if
    the object is gone (deleted while it was reconciled: its delete event ends the story).
    `decode=False`: the caller does not read the updated object, {} stands for it."""
    current = obj.get("status") or {}
    if current == status:
        return None
    meta = obj["metadata"]
    uid, version = meta.get("uid", ""), meta["resourceVersion"]
    if uid and (uid, version) in _written_over:
        raise StaleCopy(409, "Conflict",
                        f"the status was computed from version {version} of "
                        f"{meta['name']}, which this operator has already written over; "
                        "computing it again on the newer version")
    patch = {"metadata": {"resourceVersion": version}, "status": merge_patch(current, status)}
    stale = stale_status_payload_patch(obj) is not None
    try:
        written: Json = await client.patch(resource, meta.get("namespace"), meta["name"], patch,
                                           subresource="status", decode=decode or stale)
        if uid:
            _remember(uid, version)
        if stale:
            written = await drop_status_payload(client, resource, written)
    except NotFound:
        return None
    return written


async def drop_status_payload(client: KubeClient, resource: Resource, written: Json) -> Json:
    """Remove the status payload an older operator left on the object just written, if any
    (`api.conversion.stale_status_payload_patch`, guarded by the resourceVersion)."""
    patch = stale_status_payload_patch(written)
    if patch is None:
        return written
    meta = written["metadata"]
    updated: Json = await client.patch(resource, meta.get("namespace"), meta["name"], patch)
    if meta.get("uid"):
        _remember(meta["uid"], meta["resourceVersion"])
    return updated


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
