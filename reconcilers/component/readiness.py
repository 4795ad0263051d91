"""Is a component's workload available, and its replica counts (`status.service`).

The rule (spec §3.3, made strict): the workload controller has observed the latest
generation, every desired replica runs the new template (updated) and is available, and no
old replica is left. A rollout in progress is therefore not available, although the old
pods may still cover the count; the original operator reported success there and users could
not tell when a rollout was done. The message says why not, in the words of `kubectl rollout
status`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from reconcilers.machinery.availability import (
    DEPLOYMENT_NOT_READY,
    DEPLOYMENT_READY,
    LWS_NOT_READY,
    LWS_READY,
)

Json = dict[str, Any]



@dataclass(frozen=True)
class Readiness:
    """The Available condition's status, reason and message."""

    available: bool
    reason: str
    message: str


def _int(value: Any) -> int:
    return int(value) if isinstance(value, int) else 0


def _condition(obj: Json, ctype: str) -> Json:
    conditions = (obj.get("status") or {}).get("conditions") or []
    return next((c for c in conditions if c.get("type") == ctype), {})


def deployment_readiness(dep: Json | None) -> Readiness:
    """Readiness of a DCD's Deployment (None: not created yet)."""
    if dep is None:
        return Readiness(False, DEPLOYMENT_NOT_READY, "Deployment not created yet")
    name = dep["metadata"]["name"]
    spec = dep.get("spec") or {}
    status = dep.get("status") or {}
    generation = _int(dep["metadata"].get("generation"))
    if spec.get("paused"):
        return Readiness(False, DEPLOYMENT_NOT_READY, f"Deployment {name} is paused")
    if _int(status.get("observedGeneration")) < generation:
        return Readiness(False, DEPLOYMENT_NOT_READY,
                         f"waiting for Deployment {name} spec update to be observed")
    progressing = _condition(dep, "Progressing")
    if progressing.get("reason") == "ProgressDeadlineExceeded":
        return Readiness(False, DEPLOYMENT_NOT_READY,
                         f"Deployment {name} exceeded its progress deadline")
    desired = _int(spec.get("replicas", 1))
    replicas = _int(status.get("replicas"))
    updated = _int(status.get("updatedReplicas"))
    available = _int(status.get("availableReplicas"))
    if updated < desired:
        return Readiness(False, DEPLOYMENT_NOT_READY,
                         f"rollout in progress: {updated}/{desired} replicas updated")
    if replicas > updated:
        return Readiness(False, DEPLOYMENT_NOT_READY,
                         f"rollout in progress: {replicas - updated} old replicas pending"
                         " termination")
    if available < desired:
        return Readiness(False, DEPLOYMENT_NOT_READY,
                         f"{available}/{desired} replicas available")
    return Readiness(True, DEPLOYMENT_READY, "Deployment is ready")


def deployment_service_status(dep: Json) -> Json:
    """ServiceReplicaStatus of a Deployment."""
    status = dep.get("status") or {}
    return {
        "componentKind": "Deployment",
        "componentName": dep["metadata"]["name"],
        # Both, as the original writes them (and as the stored v1beta1 status reads back).
        "componentNames": [dep["metadata"]["name"]],
        "replicas": _int(status.get("replicas")),
        "updatedReplicas": _int(status.get("updatedReplicas")),
        "readyReplicas": _int(status.get("readyReplicas")),
        "availableReplicas": _int(status.get("availableReplicas")),
    }


def _lws_ready(lws: Json) -> str | None:
    """Why one LeaderWorkerSet is not ready, or None when it is: as the original operator
    (every desired group ready, and LWS's Available condition), and as strict as a
    Deployment's (every desired group updated, no surge group left)."""
    name = lws["metadata"]["name"]
    spec = lws.get("spec") or {}
    status = lws.get("status") or {}
    desired = _int(spec.get("replicas", 1))
    if desired == 0:
        return None
    generation = _int(lws["metadata"].get("generation"))
    observed = status.get("observedGeneration")
    if isinstance(observed, int) and observed < generation:
        return f"{name}: waiting for spec update to be observed"
    ready = _int(status.get("readyReplicas"))
    updated = _int(status.get("updatedReplicas"))
    groups = _int(status.get("replicas"))
    if updated < desired:
        return f"{name}: rollout in progress: {updated}/{desired} groups updated"
    if groups > desired:
        return f"{name}: rollout in progress: {groups - desired} surge groups pending termination"
    if ready < desired or _condition(lws, "Available").get("status") != "True":
        return f"{name}: {ready}/{desired} groups ready"
    return None


def lws_readiness(sets: list[Json | None], names: list[str]) -> Readiness:
    """Readiness of a multinode DCD: every LeaderWorkerSet `names[i]` (live `sets[i]`); one
    in the native layout, one per replica in the legacy one."""
    problems = [f"{name}: not created yet" if lws is None else _lws_ready(lws)
                for lws, name in zip(sets, names, strict=True)]
    found = [p for p in problems if p]
    subject = "LeaderWorkerSet is" if len(names) == 1 else "LeaderWorkerSets are"
    if found:
        return Readiness(False, LWS_NOT_READY, f"{subject} not ready: " + "; ".join(found))
    return Readiness(True, LWS_READY, f"{subject} ready")


def lws_service_status(sets: list[Json]) -> Json | None:
    """ServiceReplicaStatus of a multinode DCD, as the original reads it from its one
    LeaderWorkerSet (group counts, burst groups included, as LWS counts them); in the legacy
    layout summed over the LeaderWorkerSets, named by the first."""
    if not sets:
        return None
    statuses = [s.get("status") or {} for s in sets]
    return {
        "componentKind": "LeaderWorkerSet",
        "componentName": sets[0]["metadata"]["name"],
        "componentNames": [sets[0]["metadata"]["name"]],
        "replicas": sum(_int(s.get("replicas")) for s in statuses),
        "updatedReplicas": sum(_int(s.get("updatedReplicas")) for s in statuses),
        "readyReplicas": sum(_int(s.get("readyReplicas")) for s in statuses),
    }
