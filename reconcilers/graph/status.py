"""The status of a DynamoGraphDeployment, as `v1beta1` holds it: state, the Ready condition,
per-component replica counts (`status.components`).

Pure functions. `summarize` turns the readiness of every service into the state and the Ready
reason and message; `graph_status` builds the whole status from the previous one, so that an
unchanged situation gives an identical status (and no write) and the condition's
lastTransitionTime only moves when Ready flips. `transition_event` says which event, if any, a
status change deserves; `is_intermediate` whether a status is only a step on the way.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from backends.dra_demand import ClaimContext
from backends.gpu_demand import replica_gpus
from reconcilers.graph.readiness import ServiceReadiness
from reconcilers.machinery.availability import (
    CAPACITY_REASONS,
    FAILURE_REASONS,
    IMAGE_PULL_REASONS,
)
from reconcilers.machinery.conditions import get_condition, set_condition
from reconcilers.machinery.replica_status import on_hub

Json = dict[str, Any]

PENDING, SUCCESSFUL, FAILED = "pending", "successful", "failed"
READY = "Ready"

# Ready reasons; the first four and the last two are the original operator's.
ALL_READY = "all_resources_are_ready"
NOT_READY = "some_resources_are_not_ready"
ROLLING_UPDATE = "rolling_update_in_progress"
IMAGE_PULL_FAILED = "image_pull_failed"
INSUFFICIENT_CAPACITY = "insufficient_capacity"
VALIDATION_FAILED = "ValidationFailed"
RECONCILE_FAILED = "failed_to_reconcile_the_resources"
#: Ours: the new worker generation made no progress within the deadline.
ROLLOUT_FAILED = "rollout_failed"


@dataclass(frozen=True)
class Verdict:
    """What the graph's state is and why."""

    state: str
    reason: str
    message: str


def failed(reason: str, message: str) -> Verdict:
    return Verdict(FAILED, reason, message)


def summarize(services: Iterable[ServiceReadiness]) -> Verdict:
    """The state of a graph from the readiness of its services."""
    waiting = sorted((s for s in services if not s.ready), key=lambda s: s.service)
    if not waiting:
        return Verdict(SUCCESSFUL, ALL_READY, "All resources are ready")
    items = []
    for s in waiting:
        item = f"{s.service}: {s.detail or 'not ready'}"
        items.append(f"{item} ({s.problem})" if s.problem else item)
    message = "Resources not ready: " + "; ".join(items)
    problems = {s.problem_reason for s in waiting}
    if problems & FAILURE_REASONS:
        # A component that failed for good (its spec is refused, say): the graph has failed.
        return Verdict(FAILED, RECONCILE_FAILED, message)
    if problems & IMAGE_PULL_REASONS:
        reason = IMAGE_PULL_FAILED
    elif problems & CAPACITY_REASONS:
        reason = INSUFFICIENT_CAPACITY
    elif all(s.updating for s in waiting):
        reason = ROLLING_UPDATE
    else:
        reason = NOT_READY
    return Verdict(PENDING, reason, message)


def graph_status(
    previous: Json | None,
    verdict: Verdict,
    generation: int,
    services: Iterable[ServiceReadiness] | None,
    restart: Json | None,
    gpus: Json | None = None,
) -> Json:
    """The status to hold now. `services` None keeps the previous per-service counts (nothing
    was read, e.g. the spec is invalid), `gpus` None the previous GPU counts."""
    status = copy.deepcopy(previous) if previous else {}
    status["observedGeneration"] = generation
    status["state"] = verdict.state
    status["conditions"] = set_condition(
        list(status.get("conditions") or []), READY, verdict.state == SUCCESSFUL,
        verdict.reason, verdict.message, observed_generation=generation)
    if services is not None:
        counts = {s.service: on_hub(s.replica_status) for s in services if s.replica_status}
        if counts:
            status["components"] = counts
        else:
            status.pop("components", None)
    if restart is not None:
        status["restart"] = restart
    else:
        status.pop("restart", None)
    if gpus is not None:
        status["gpus"] = gpus
    return status


def with_rolling_update(status: Json, rolling_update: Json | None) -> None:
    """Set (or, for None, remove) `status.rollingUpdate` in place."""
    if rolling_update is None:
        status.pop("rollingUpdate", None)
    else:
        status["rollingUpdate"] = rolling_update


def graph_gpus(graph: Json, services: Iterable[ServiceReadiness],
               claims: ClaimContext | None = None,
               surge: Mapping[str, int] | None = None,
               ready_replicas: Mapping[str, int] | None = None) -> Json:
    """`status.gpus` of a graph as stored: the GPUs of its components' desired replicas (plus
    `surge` replicas per component while a rollout may hold them), and of the replicas its
    services report ready (`ready_replicas` where they do not tell it all: a rollout's
    generations together); the devices of its pods' DRA claims through `claims`, a claim
    its pods share counted once."""
    per_replica = replica_gpus(graph, claims)
    desired = {str(c.get("name", "")): c.get("replicas", 1)
               for c in (graph.get("spec") or {}).get("components") or []
               if isinstance(c, dict)}
    ready = {s.service: _count((s.replica_status or {}).get("readyReplicas")) for s in services}
    ready.update(ready_replicas or {})
    requested = running = 0
    shared: dict[str, int] = {}
    running_shared: dict[str, int] = {}
    for name, gpus in per_replica.items():
        wanted = _count(desired.get(name)) + (surge or {}).get(name, 0)
        requested += gpus.total * wanted
        running += gpus.total * ready.get(name, 0)
        for claim, pools in gpus.shared.items():
            if wanted:
                shared[claim] = sum(pools.values())
            if ready.get(name):
                running_shared[claim] = sum(pools.values())
    return {"requested": requested + sum(shared.values()),
            "running": running + sum(running_shared.values())}


def _count(value: object) -> int:
    return value if isinstance(value, int) and value > 0 else 0


def transition_event(previous: Json | None, status: Json) -> tuple[bool, str, str] | None:
    """(warning, reason, message) of the event a status change deserves, or None.

    A new state is always told; a failure also when its reason or message changes; progress
    within a state (replica counts moving) is not.
    """
    before = previous or {}
    old_ready = get_condition(before.get("conditions"), READY) or {}
    new_ready = get_condition(status.get("conditions"), READY) or {}
    state = status.get("state")
    message = str(new_ready.get("message") or "")
    if state == FAILED:
        if (before.get("state"), old_ready.get("reason"), old_ready.get("message")) == (
                state, new_ready.get("reason"), new_ready.get("message")):
            return None
        reason = VALIDATION_FAILED if new_ready.get("reason") == VALIDATION_FAILED else (
            "ReconcileFailed")
        return True, reason, message
    if before.get("state") == state:
        return None
    return (False, "Ready", message) if state == SUCCESSFUL else (False, "NotReady", message)


#: Ready reasons of a graph that is only on its way: nothing failed, nothing is stuck.
ON_THE_WAY = frozenset({NOT_READY, ROLLING_UPDATE})


def is_intermediate(current: Json, status: Json) -> bool:
    """Whether `status` is a step on the way, worth holding for a moment before it is written
    (`machinery.status_pacer`): the graph is pending and was pending (or had no status) at
    the same generation, with nothing wrong before or now, and no restart or rollout news. A
    new state, generation, restart or rollout phase, and any failure or problem, are written
    at once."""
    if status.get("state") != PENDING or current.get("state") not in (None, PENDING):
        return False
    if current.get("observedGeneration") not in (None, status.get("observedGeneration")):
        return False
    if current.get("restart") != status.get("restart"):
        return False
    if current.get("rollingUpdate") != status.get("rollingUpdate"):
        return False  # a rollout's phase is news (and its events follow the written phase)
    new = get_condition(status.get("conditions"), READY) or {}
    old = get_condition(current.get("conditions"), READY)
    return new.get("reason") in ON_THE_WAY and (old is None or old.get("reason") in ON_THE_WAY)
