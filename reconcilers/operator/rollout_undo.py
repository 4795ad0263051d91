"""The patch `rollout undo` sends: a revision's workers written back into a graph's spec.

The revision's `data` (`backends.worker_revisions.revision_data`) holds the rolled worker
components as the graph stated them (`v1beta1`), the graph's env and backend framework. Each
stored component replaces the graph's component of that name, keeping the graph's replicas and
scaling adapter (a rollback changes configuration, not scale); a worker the graph no longer has
comes back. The patch is a merge patch of the stored (`v1beta1`) graph carrying the
resourceVersion it was computed from, so a graph changed meanwhile is refused (409), not
overwritten; the revision's change-cause, if any, becomes the graph's, as a Deployment's
rollback does.
"""

from __future__ import annotations

import copy
from typing import Any

from backends.worker_revisions import CHANGE_CAUSE

Json = dict[str, Any]

__all__ = ["UndoError", "undo_patch"]

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
