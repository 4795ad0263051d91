"""The patch `rollout undo` sends: a revision's workers written back into a graph's spec.

The revision's `data` (`backends.worker_revisions.revision_data`) holds the rolled worker
components as the graph stated them (`v1beta1`), the graph's env and backend framework. Each
stored component replaces the graph's component of that name, keeping the graph's replicas and
scaling adapter (a rollback changes configuration, not scale); a worker the graph no longer has
comes back. The patch is a merge patch of the stored (`v1beta1`) graph carrying the
resourceVersion it was computed from, so a graph changed meanwhile is refused (409), not
overwritten; the revision's change-cause, if any, becomes the graph's, as a Deployment's
rollback does.

A graph that said something only `v1alpha1` can (labels or annotations of a service, its
ingress or Dynamo namespace...: the spec payload of the stored graph) is written back in two
steps: first its `v1alpha1` view, each stored service replacing the graph's (`spoke_patch`),
then the `v1beta1` components as above, which restore what only `v1beta1` can say. The
`v1beta1` patch alone would keep the payload of the configuration undone, and the graph would
run a third configuration, neither the revision's nor the one it left.
"""

from __future__ import annotations

import copy
from typing import Any

from backends.worker_revisions import CHANGE_CAUSE, SPOKE_SCALING

Json = dict[str, Any]

__all__ = ["UndoError", "spoke_patch", "undo_patch"]

_SCALING = ("replicas", "scalingAdapter")


class UndoError(Exception):
    """No revision to go back to, or one that cannot be written back."""


def undo_patch(graph: Json, revision: Json) -> Json:
    """The merge patch that puts `revision`'s workers into `graph` (stored, `v1beta1`)."""
    data = revision.get("data")
    if not isinstance(data, dict) or not isinstance(data.get("components"), list):
        raise UndoError(f'revision "{revision["metadata"]["name"]}" holds no worker components')
    spec = graph.get("spec") or {}
    components = [copy.deepcopy(c) for c in spec.get("components") or []]
    index = {c.get("name"): i for i, c in enumerate(components)}
    for stored in data["components"]:
        restored = copy.deepcopy(stored)
        at = index.get(stored.get("name"))
        if at is None:
            components.append(restored)
            continue
        for key in _SCALING:
            if key in components[at]:
                restored[key] = components[at][key]
        components[at] = restored
    patch_spec: Json = {"components": components, "env": data.get("env")}
    if data.get("backendFramework"):
        patch_spec["backendFramework"] = data["backendFramework"]
    metadata: Json = {"resourceVersion": graph["metadata"]["resourceVersion"]}
    cause = ((revision["metadata"].get("annotations") or {}).get(CHANGE_CAUSE))
    if cause:
        metadata["annotations"] = {CHANGE_CAUSE: cause}
    return {"metadata": metadata, "spec": patch_spec}


def spoke_patch(view: Json, revision: Json) -> Json | None:
    """The merge patch of the graph's `v1alpha1` view that puts `revision`'s services into
    it (their scaling kept as the view has it), or None when the revision holds none."""
    stored = (revision.get("data") or {}).get("services")
    if not isinstance(stored, dict) or not stored:
        return None
    current = (view.get("spec") or {}).get("services") or {}
    services: Json = {}
    for name, service in stored.items():
        wanted = copy.deepcopy(service)
        now = current.get(name) or {}
        for key in SPOKE_SCALING:
            if key in now:
                wanted[key] = now[key]
        services[name] = _replacing(now, wanted)
    return {"metadata": {"resourceVersion": view["metadata"]["resourceVersion"]},
            "spec": {"services": services}}


def _replacing(current: Any, wanted: Any) -> Any:
    """A merge patch turning `current` into `wanted`: keys `wanted` lacks are removed (a merge
    patch otherwise merges objects key by key)."""
    if not isinstance(current, dict) or not isinstance(wanted, dict):
        return wanted
    patch: Json = {key: None for key in current if key not in wanted}
    for key, value in wanted.items():
        patch[key] = _replacing(current.get(key), value)
    return patch
