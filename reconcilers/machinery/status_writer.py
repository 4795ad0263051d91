"""Writing a custom resource's status only when it changed, on the version we read.

Our kinds stored as the hub are read as their v1alpha1 view and written as the hub: the patch
is the hub's diff (`reconcilers.machinery.hub`), and the answer is the view again.

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
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from controller.client import KubeClient
from controller.errors import Conflict, NotFound
from controller.resource import Resource
from reconcilers.machinery import hub

Json = dict[str, Any]

class StaleCopy(Conflict):
    """A status computed from a copy of the object this process has already written over."""


#: uid -> the resourceVersion our last status write replaced (oldest forgotten first).
_written_over: OrderedDict[str, str] = OrderedDict()
_REMEMBERED = 16384


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
    if uid and _written_over.get(uid) == version:
        raise StaleCopy(409, "Conflict",
                        f"the status was computed from version {version} of "
                        f"{meta['name']}, which this operator has already written over; "
                        "computing it again on the newer version")
    if hub.is_hub(resource):
        status_diff = merge_patch(*hub.hub_statuses(obj, status))
        if not status_diff:
            return None
    else:
        status_diff = merge_patch(current, status)
    patch = {"metadata": {"resourceVersion": version}, "status": status_diff}
    try:
        written: Json = hub.from_wire(resource, await client.patch(
            resource, meta.get("namespace"), meta["name"], patch, subresource="status",
            decode=decode))
    except NotFound:
        return None
    if uid:
        _written_over[uid] = version
        _written_over.move_to_end(uid)
        if len(_written_over) > _REMEMBERED:
            _written_over.popitem(last=False)
    return written


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
