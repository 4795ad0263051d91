"""How the cache holds the workloads components own: without their pod templates.

A Deployment's or LeaderWorkerSet's pod template is most of its size, and nothing reads it
from the cache: drift is told by the child writer's hash and generation annotations, an update
replaces the whole spec with the desired one, and readiness reads the replica counts, the
status and (for restarts) the template's annotations, which are kept. What is kept is
compacted (`controller.informer.compact`: keys and short strings shared between objects).
"""

from __future__ import annotations

from typing import Any

from controller.informer import compact, strip_managed_fields

Json = dict[str, Any]


def trim_deployment(obj: Json) -> Json:
    """A Deployment without its pod spec (template metadata kept) or managedFields."""
    obj = strip_managed_fields(obj)
    spec = obj.get("spec")
    template = (spec or {}).get("template")
    if not isinstance(template, dict) or "spec" not in template:
        return compact(obj)
    kept = {k: v for k, v in template.items() if k != "spec"}
    return compact({**obj, "spec": {**spec, "template": kept}})  # type: ignore[dict-item]


def trim_leader_worker_set(obj: Json) -> Json:
    """A LeaderWorkerSet without its leader and worker templates or managedFields."""
    obj = strip_managed_fields(obj)
    spec = obj.get("spec")
    if not isinstance(spec, dict) or "leaderWorkerTemplate" not in spec:
        return compact(obj)
    return compact({**obj,
                    "spec": {k: v for k, v in spec.items() if k != "leaderWorkerTemplate"}})
