"""The arithmetic of Deployment rollouts, as pure functions of JSON objects.

Pod-template hashes, maxSurge / maxUnavailable, how far the new ReplicaSet may scale up and
the old ones down in one step, and when a rollout is complete.
"""

from __future__ import annotations

import json
from typing import Any

from .objects import fnv32a, int_or_percent, safe_encode

Json = dict[str, Any]

HASH_LABEL = "pod-template-hash"
REVISION = "deployment.kubernetes.io/revision"
DESIRED_REPLICAS = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS = "deployment.kubernetes.io/max-replicas"


def template_hash(template: Json, collision_count: int = 0) -> str:
    """A short, label-safe hash of a pod template (the shape controller.ComputeHash gives)."""
    data = json.dumps(template, sort_keys=True, separators=(",", ":")).encode()
    if collision_count:
        data += str(collision_count).encode()
    return safe_encode(str(fnv32a(data)))


def without_hash(template: Json) -> Json:
    """`template` without the pod-template-hash label, for comparing: only the dicts on the
    label's path are copied (a deep copy of every template cost more than the comparison)."""
    metadata = template.get("metadata")
    labels = metadata.get("labels") if isinstance(metadata, dict) else None
    if not isinstance(labels, dict) or HASH_LABEL not in labels:
        return template
    assert isinstance(metadata, dict)
    rest = {k: v for k, v in labels.items() if k != HASH_LABEL}
    return {**template, "metadata": {**metadata, "labels": rest}}


def same_template(deployment: Json, rs: Json) -> bool:
    return bool(without_hash((rs.get("spec") or {}).get("template") or {}) == without_hash(
        (deployment.get("spec") or {}).get("template") or {}))


def replicas(obj: Json) -> int:
    value = (obj.get("spec") or {}).get("replicas")
    return 1 if value is None else int(value)


def status_count(obj: Json, field_name: str) -> int:
    return int((obj.get("status") or {}).get(field_name) or 0)


def rolling(deployment: Json) -> bool:
    strategy = (deployment.get("spec") or {}).get("strategy") or {}
    return bool(strategy.get("type", "RollingUpdate") == "RollingUpdate")


def fenceposts(deployment: Json) -> tuple[int, int]:
    """(maxSurge, maxUnavailable) resolved against spec.replicas; both 0 means 1 unavailable."""
    ru = (((deployment.get("spec") or {}).get("strategy") or {}).get("rollingUpdate") or {})
    want = replicas(deployment)
    surge = int_or_percent(ru.get("maxSurge", "25%"), want, round_up=True)
    unavailable = int_or_percent(ru.get("maxUnavailable", "25%"), want, round_up=False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def max_unavailable(deployment: Json) -> int:
    want = replicas(deployment)
    if not rolling(deployment) or want == 0:
        return 0
    return min(fenceposts(deployment)[1], want)


def max_surge(deployment: Json) -> int:
    return fenceposts(deployment)[0] if rolling(deployment) else 0


def new_rs_replicas(deployment: Json, all_rs: list[Json], new_rs: Json) -> int:
    """How many replicas the new ReplicaSet may have now (NewRSNewReplicas)."""
    want = replicas(deployment)
    current = replicas(new_rs)
    if not rolling(deployment):
        return want
    if current >= want:
        return want
    total = sum(replicas(rs) for rs in all_rs)
    room = want + max_surge(deployment) - total
    if room <= 0:
        return current
    return current + min(room, want - current)


def old_scale_down(deployment: Json, all_rs: list[Json], new_rs: Json | None,
                   old_rs: list[Json]) -> dict[str, int]:
    """New spec.replicas of old ReplicaSets for one rolling step (name -> replicas)."""
    if sum(replicas(rs) for rs in old_rs) == 0:
        return {}
    want = replicas(deployment)
    min_available = want - max_unavailable(deployment)
    new_unavailable = (replicas(new_rs) - status_count(new_rs, "availableReplicas")
                       if new_rs is not None else 0)
    total = sum(replicas(rs) for rs in all_rs)
    budget = total - min_available - new_unavailable
    if budget <= 0:
        return {}
    out: dict[str, int] = {}
    oldest_first = sorted(old_rs, key=lambda rs: str(rs["metadata"].get("creationTimestamp")))
    # First drop old replicas that are not available anyway: that costs no availability.
    for rs in oldest_first:
        have = replicas(rs)
        unhealthy = have - status_count(rs, "availableReplicas")
        if budget <= 0 or have == 0 or unhealthy <= 0:
            continue
        cut = min(budget, unhealthy)
        out[rs["metadata"]["name"]] = have - cut
        budget -= cut
    # Then scale down healthy ones while availability stays above the minimum.
    available = sum(status_count(rs, "availableReplicas") for rs in all_rs)
    room = available - min_available
    for rs in oldest_first:
        have = out.get(rs["metadata"]["name"], replicas(rs))
        if room <= 0 or have == 0:
            continue
        cut = min(room, have)
        out[rs["metadata"]["name"]] = have - cut
        room -= cut
    return out


def revision_of(rs: Json) -> int:
    try:
        return int(((rs.get("metadata") or {}).get("annotations") or {}).get(REVISION, "0"))
    except ValueError:
        return 0


def complete(deployment: Json, status: Json) -> bool:
    want = replicas(deployment)
    return (int(status.get("updatedReplicas") or 0) == want
            and int(status.get("replicas") or 0) == want
            and int(status.get("availableReplicas") or 0) == want
            and int(status.get("observedGeneration") or 0) >= int(
                deployment["metadata"].get("generation", 1)))
