"""Whether each service of a graph is ready, read from the child that runs it.

Pure functions over objects as the API server returns them. A service is ready only when its
child has observed its latest spec, every replica runs the current revision (no old pods left
over from a rollout) and the desired number of replicas is ready; "ready" counts from old pods
during a rollout never make a graph look done.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from api.conversion import HUB
from backends.constants import ANNOTATION_RESTART_AT
from reconcilers.machinery.availability import NOT_READY_YET
from reconcilers.machinery.conditions import get_condition
from reconcilers.machinery.spec_views import inputs_of

Json = dict[str, Any]

_REPLICA_FIELDS = ("componentKind", "componentName", "componentNames", "replicas",
                   "updatedReplicas", "readyReplicas", "availableReplicas")


@dataclass(frozen=True)
class ServiceReadiness:
    """One service: ready or not, why not, and its ServiceReplicaStatus when reported."""

    service: str
    ready: bool
    #: Only a rollout is in progress (the spec is not observed yet or old replicas remain).
    updating: bool = False
    #: Human-readable reason when not ready, e.g. "1/2 replicas ready".
    detail: str = ""
    #: What the child reports as blocking it: the reason of its Available condition (e.g.
    #: ImagePullBackOff), and that reason with its message for people.
    problem_reason: str = ""
    problem: str = ""
    replica_status: Json | None = None


def component_readiness(service: str, dcd: Json | None, desired: int,
                        workload: Json | None = None) -> ServiceReadiness:
    """Readiness of a service on the DCD path, from its DynamoComponentDeployment.

    `workload` is the DCD's Deployment when the cache holds it: its pod template must carry the
    DCD's restart token before the service counts as rolled out.
    """
    if dcd is None:
        return ServiceReadiness(service, False, detail="DynamoComponentDeployment not created yet")
    name = dcd["metadata"]["name"]
    if dcd["metadata"].get("deletionTimestamp"):
        return ServiceReadiness(service, False, detail=f"{name} is being deleted")
    status = dcd.get("status") or {}
    replica_status = _replica_status(status.get("component") or status.get("service"))
    generation = int(dcd["metadata"].get("generation") or 0)
    observed = status.get("observedGeneration")
    if observed is None:
        # Never reported: starting, not a rollout.
        return ServiceReadiness(service, False, detail=f"{name} has not reported a status yet")
    if int(observed) < generation:
        return ServiceReadiness(service, False, updating=True, replica_status=replica_status,
                                detail=f"{name} has not observed generation {generation} yet")
    if workload is not None and not _workload_current(dcd, workload):
        return ServiceReadiness(service, False, updating=True, replica_status=replica_status,
                                detail=f"Deployment {name} is rolling out")
    available = get_condition(status.get("conditions"), "Available")
    reason, problem = _problem(available)
    counted = _counts(replica_status, desired)
    if counted is not None:
        return ServiceReadiness(service, counted[0] and _is_true(available),
                                updating=counted[1], problem_reason=reason, problem=problem,
                                replica_status=replica_status,
                                detail=counted[2] or _condition_detail(available))
    if not _is_true(available):
        return ServiceReadiness(service, False, problem_reason=reason, problem=problem,
                                replica_status=replica_status,
                                detail=_condition_detail(available))
    return ServiceReadiness(service, True, replica_status=replica_status)


def clique_readiness(service: str, kind: str, obj: Json | None,
                     desired: int | None = None) -> ServiceReadiness:
    """Readiness of a service on the Grove path, from its PodClique (single-node) or
    PodCliqueScalingGroup (multinode or inter-pod GMS) `<graph>-0-<service>`; `desired`
    defaults to the object's own spec.replicas (the service leaves replicas to whoever scales
    the clique)."""
    if obj is None:
        return ServiceReadiness(service, False, detail=f"{kind} not created yet")
    meta, spec, status = obj["metadata"], obj.get("spec") or {}, obj.get("status") or {}
    if desired is None:
        desired = int(spec.get("replicas") or 0)
    replica_status: Json = {
        "componentKind": kind,
        "componentName": meta["name"],
        "componentNames": [meta["name"]],
        "replicas": int(status.get("replicas") or 0),
        "updatedReplicas": int(status.get("updatedReplicas") or 0),
    }
    if kind == "PodClique":
        replica_status["readyReplicas"] = int(status.get("readyReplicas") or 0)
    else:
        replica_status["availableReplicas"] = int(status.get("availableReplicas") or 0)
    observed = status.get("observedGeneration")
    if observed is not None and int(observed) < int(meta.get("generation") or 0):
        return ServiceReadiness(service, False, updating=True, replica_status=replica_status,
                                detail=f"{kind} {meta['name']} has not observed its spec yet")
    counted = _counts(replica_status, desired)
    assert counted is not None
    ready, updating, detail = counted
    return ServiceReadiness(service, ready, updating=updating, detail=detail,
                            replica_status=replica_status)


def _counts(replica_status: Json | None, desired: int) -> tuple[bool, bool, str] | None:
    """(ready, only updating, detail) from replica counts; None when none are reported."""
    if replica_status is None:
        return None
    if desired == 0:
        return True, False, ""
    replicas = int(replica_status.get("replicas") or 0)
    updated = int(replica_status.get("updatedReplicas") or 0)
    ready_count = replica_status.get("readyReplicas")
    if ready_count is None:
        ready_count = replica_status.get("availableReplicas")
    ready = int(ready_count or 0)
    if updated < desired or replicas > updated:
        # Nothing running yet is a start, not a rolling update.
        return False, replicas > 0, f"{updated}/{desired} replicas updated, {ready} ready"
    if ready < desired:
        return False, False, f"{ready}/{desired} replicas ready"
    return True, False, ""


def restart_token(dcd: Json) -> str | None:
    """The restart token a DCD carries in its own `annotations` (a `v1alpha1` field: read
    from its render inputs)."""
    name = (dcd.get("spec") or {}).get("name")
    if dcd.get("apiVersion") != HUB or not isinstance(name, str):
        annotations = (dcd.get("spec") or {}).get("annotations") or {}
    else:
        annotations = inputs_of(dcd).component(name).annotations or {}
    value = annotations.get(ANNOTATION_RESTART_AT)
    return str(value) if value else None


def _workload_current(dcd: Json, deployment: Json) -> bool:
    """The Deployment runs the DCD's restart token and has rolled out its latest template."""
    token = restart_token(dcd)
    template = (((deployment.get("spec") or {}).get("template") or {}).get("metadata") or {})
    if token and (template.get("annotations") or {}).get(ANNOTATION_RESTART_AT) != token:
        return False
    status = deployment.get("status") or {}
    generation = int(deployment["metadata"].get("generation") or 0)
    return int(status.get("observedGeneration") or 0) >= generation


def _replica_status(value: Any) -> Json | None:
    # An entry without a kind would put "" into an enum and get the whole status rejected;
    # unknown keys would be pruned by the server and make every status look changed.
    if isinstance(value, dict) and value.get("componentKind"):
        out = {k: v for k, v in value.items() if k in _REPLICA_FIELDS and v is not None}
        # A DCD written by an older operator has the name alone; the hub stores the list.
        if "componentName" in out and "componentNames" not in out:
            out["componentNames"] = [out["componentName"]]
        return out
    return None


def _is_true(condition: Json | None) -> bool:
    return condition is not None and condition.get("status") == "True"


def _condition_detail(condition: Json | None) -> str:
    if condition is None:
        return "no Available condition reported yet"
    return str(condition.get("message") or "Available condition not true")


def _problem(condition: Json | None) -> tuple[str, str]:
    """(reason, "reason: message") of what the child says blocks it, beyond "not ready yet"
    (a stuck pod, a failure of its own); empty when nothing does."""
    if condition is None or condition.get("status") == "True":
        return "", ""
    reason = str(condition.get("reason") or "")
    if reason in NOT_READY_YET:
        return "", ""
    message = str(condition.get("message") or "")
    return reason, f"{reason}: {message}" if message else reason
