"""Worker rollouts of the DCD path: what runs, read from the cluster, and the step to take.

What generation serves and what is rolling comes from the live objects alone: the graph's
worker DCDs (owned by it, named `<graph>-<component>[-<hash>]`, the hash also in their
`nvidia.com/dynamo-worker-hash` label) and their pods (ready ones, and all of them, terminating
too). No annotation is trusted, so a `kubectl replace` or a GitOps sync that drops annotations
mid-rollout loses nothing, and an operator restarted mid-rollout continues where the cluster
stands.

The target is the generation of the graph as it stands (`worker_hash`), except that worker DCDs
made before generations existed are adopted as they are (the legacy generation, plain names)
while they still match the graph: an operator upgrade starts no rollout.

`status.rollingUpdate` (Pending until the target generation holds a pod, InProgress, Completed
once it serves alone, Failed; startTime, endTime, updatedComponents) is carried from the
previous status: a rollout that makes no progress (no
target pod turned ready) for the progress deadline (`nvidia.com/rollout-progress-deadline`,
default 10 minutes) is Failed with its cause, and then nothing more of the old generation is
removed until the graph changes.

A canary (`nvidia.com/rollout-partition`: a count or a percentage of each rolled component's
replicas) holds the target generation at that share while the old one serves the rest;
raising it continues the rollout, removing it finishes it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from backends import constants
from backends.component_deployment import component_deployment
from backends.deployment import deployment_strategy
from backends.errors import GenerationError
from backends.hub_graph import HubGraph
from backends.settings import OperatorSettings
from backends.worker_generation import (
    LEGACY,
    WorkerPlan,
    rolled_workers,
    worker_dcd_name,
    worker_hash,
)
from controller.store import OWNER_UID_INDEX
from reconcilers.graph.readiness import restart_token
from reconcilers.graph.rollout_plan import (
    Budget,
    Generation,
    RolloutStep,
    ServiceState,
    budget,
    plan_step,
)
from reconcilers.machinery.children import HASH_ANNOTATION, spec_hash
from reconcilers.machinery.conditions import get_condition
from reconcilers.machinery.context import OperatorContext
from reconcilers.machinery.pod_problems import COMPONENT_INDEX, first_problem
from reconcilers.machinery.resources import COMPONENT_DEPLOYMENTS, PODS

Json = dict[str, Any]

PENDING, IN_PROGRESS, COMPLETED, FAILED = "Pending", "InProgress", "Completed", "Failed"
DEFAULT_DEADLINE = timedelta(minutes=10)
#: The graph controller's event source (`reconciler.NAME`).
EVENT_SOURCE = "dynamographdeployment"
#: How often a rolling graph looks again (its progress deadline; stopping worker pods and its
#: DCDs wake it meanwhile).
RECHECK_SECONDS = 5.0
_DURATION = re.compile(r"^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$")


@dataclass(frozen=True)
class Rollout:
    """One reconcile's view of the graph's worker generations and the step to take."""

    step: RolloutStep
    target: str
    #: DCD names per rolled component, old generations first, the target last.
    names: Mapping[str, tuple[str, ...]]
    #: The status.rollingUpdate to hold (None: no rollout ever, keep none).
    status: Json | None
    #: Why the rollout failed, when it did.
    failure: str = ""
    #: Each rolled component's desired replicas, budgets and generations.
    services: Mapping[str, ServiceState] = field(default_factory=dict)

    @property
    def plan(self) -> WorkerPlan:
        return self.step.plan

    def target_name(self, graph: str, service: str) -> str:
        return worker_dcd_name(graph, service, self.target)


def provider_rollout(status: Json | None) -> Rollout:
    """A rollout Grove or LeaderWorkerSet runs: only its status is ours to hold."""
    return Rollout(RolloutStep(WorkerPlan(), rolling=False, waiting=False, updated=()), LEGACY,
                   {}, status)


async def observe_rollout(ctx: OperatorContext, live: Json, graph: HubGraph,
                          settings: OperatorSettings, *, now: datetime | None = None
                          ) -> Rollout | None:
    """The rollout step for this reconcile; None when the graph rolls no worker by
    generation. Raises GenerationError for budgets that make no sense."""
    services = rolled_workers(graph)
    if not services:
        return None
    now = now or datetime.now(UTC)
    namespace, name = graph.namespace, graph.name
    owned = await ctx.cache.by_index(COMPONENT_DEPLOYMENTS, OWNER_UID_INDEX,
                                     live["metadata"]["uid"])
    dcds = _worker_dcds(owned, name, services)
    states: dict[str, ServiceState] = {}
    pods_by_dcd: dict[str, list[Json]] = {}
    for service in services:
        generations = {}
        for generation, dcd in dcds[service].items():
            dcd_name = dcd["metadata"]["name"]
            pods = await ctx.cache.by_index(PODS, COMPONENT_INDEX, f"{namespace}/{dcd_name}")
            pods_by_dcd[dcd_name] = pods
            replicas = (dcd.get("spec") or {}).get("replicas")
            generations[generation] = Generation(
                replicas=1 if replicas is None else int(replicas),
                ready=sum(1 for p in pods if _ready(p)), pods=len(pods))
        desired = _desired(graph, service)
        states[service] = ServiceState(desired, _budget(graph, service), generations,
                                       partition=_partition(graph, desired))
    target = _target(graph, settings, dcds)
    previous = (live.get("status") or {}).get("rollingUpdate")
    previous = previous if isinstance(previous, dict) else None
    spec_generation = int(live["metadata"].get("generation") or 0)
    observed = int((live.get("status") or {}).get("observedGeneration") or 0)
    hold = bool(previous and previous.get("phase") == FAILED and observed == spec_generation)
    prefix = target != LEGACY or any(g != LEGACY for s in states.values()
                                     for g, st in s.generations.items() if st.holds)
    step = plan_step(states, target, hold=hold, frontend_prefix=prefix)
    names = {s: tuple(worker_dcd_name(name, s, d.generation) for d in sorted(
        step.plan.dcds[s], key=lambda d: (d.target, d.generation))) for s in services}
    target_created = [str(by[target]["metadata"].get("creationTimestamp") or "")
                      for by in dcds.values() if target in by]
    status, failure = await _status(ctx, live, previous, step, target, states, pods_by_dcd,
                                    target_created, hold, now, progress_deadline(graph))
    await _tell(ctx, live, previous, status, target, states)
    return Rollout(step, target, names, status, failure, states)


async def _tell(ctx: OperatorContext, live: Json, previous: Json | None, status: Json | None,
                target: str, states: Mapping[str, ServiceState]) -> None:
    """A Normal event when a rollout starts (naming the components Recreate replaces without
    surge, with an outage) and when it completes."""
    before = (previous or {}).get("phase")
    after = (status or {}).get("phase")
    if before == after or after not in (PENDING, COMPLETED):
        return
    recorder = ctx.recorder(EVENT_SOURCE)
    if after == COMPLETED:
        await recorder.normal(live, "RollingUpdateCompleted",
                              f"Worker generation {target or 'legacy'} serves alone")
        return
    if before in (IN_PROGRESS, FAILED):
        return
    message = (f"Rolling workers {', '.join(sorted(states))} out to generation "
               f"{target or 'legacy'}")
    recreated = sorted(name for name, s in states.items() if s.budget.recreate)
    if recreated:
        message += (f"; Recreate: {', '.join(recreated)} replaced without surge, their old "
                    "pods stop before new ones start (those components are down meanwhile)")
    await recorder.normal(live, "RollingUpdateStarted", message)


def _worker_dcds(owned: list[Json], graph: str, services: list[str]
                 ) -> dict[str, dict[str, Json]]:
    """The graph's DCDs of each rolled component, by generation: only those whose name is
    exactly `<graph>-<component>[-<hash>]` for the hash they are labelled with."""
    out: dict[str, dict[str, Json]] = {s: {} for s in services}
    for dcd in owned:
        meta = dcd["metadata"]
        labels = meta.get("labels") or {}
        service = labels.get(constants.LABEL_COMPONENT)
        if service not in out or meta.get("deletionTimestamp"):
            continue
        generation = str(labels.get(constants.LABEL_WORKER_HASH) or LEGACY)
        if meta["name"] == worker_dcd_name(graph, service, generation):
            out[service][generation] = dcd
    return out


def _target(graph: HubGraph, settings: OperatorSettings,
            dcds: Mapping[str, Mapping[str, Json]]) -> str:
    """The graph's generation, or the legacy one while its DCDs match the graph."""
    wanted = worker_hash(graph)
    present = {g for by_generation in dcds.values() for g in by_generation}
    if wanted in present or present != {LEGACY}:
        return wanted
    for service, by_generation in dcds.items():
        legacy = by_generation.get(LEGACY)
        if legacy is None or not _unchanged(graph, settings, service, legacy):
            return wanted
    return LEGACY


def _unchanged(graph: HubGraph, settings: OperatorSettings, service: str, live: Json) -> bool:
    """The live legacy DCD is what the graph renders for it (at its own replicas and
    restart token), by the hash it was last written with."""
    desired = component_deployment(graph, service, settings, token=restart_token(live),
                                   replicas=(live.get("spec") or {}).get("replicas"))
    if (live.get("spec") or {}).get("replicas") is None:
        desired["spec"].pop("replicas", None)
    written = ((live["metadata"].get("annotations") or {}).get(HASH_ANNOTATION))
    return written == spec_hash(desired)


def _desired(graph: HubGraph, service: str) -> int:
    replicas = dict(graph.components())[service].replicas
    return 1 if replicas is None else int(replicas)


def _budget(graph: HubGraph, service: str) -> Budget:
    annotations = {**(graph.model.metadata.get("annotations") or {}),
                   **(graph.inputs.component(service).annotations or {})}
    strategy = deployment_strategy(annotations)
    desired = _desired(graph, service)
    if strategy["type"] == "Recreate":
        return Budget(0, desired, recreate=True)
    rolling = strategy["rollingUpdate"]
    return budget(desired, rolling["maxSurge"], rolling["maxUnavailable"])


def _partition(graph: HubGraph, desired: int) -> int | None:
    """The canary's share of a component (`nvidia.com/rollout-partition`: a count, or a
    percentage of its replicas rounded up); None without one. GenerationError for another
    value."""
    value = (graph.model.metadata.get("annotations") or {}).get(
        constants.ANNOTATION_ROLLOUT_PARTITION)
    if value is None or value == "":
        return None
    text = value.strip()
    if text.isdigit():
        return int(text)
    if text.endswith("%") and text[:-1].isdigit() and int(text[:-1]) <= 100:
        return math.ceil(int(text[:-1]) * desired / 100)
    raise GenerationError(
        f'invalid {constants.ANNOTATION_ROLLOUT_PARTITION} "{value}": use a count of '
        "replicas or a percentage (0% to 100%)")


def _ready(pod: Json) -> bool:
    if pod["metadata"].get("deletionTimestamp"):
        return False
    ready = get_condition((pod.get("status") or {}).get("conditions"), "Ready")
    return ready is not None and ready.get("status") == "True"


def progress_deadline(graph: HubGraph) -> timedelta:
    """`nvidia.com/rollout-progress-deadline` (a Go duration such as 10m or 90s, or seconds),
    default 10 minutes. GenerationError for another value."""
    value = (graph.model.metadata.get("annotations") or {}).get(
        constants.ANNOTATION_ROLLOUT_PROGRESS_DEADLINE)
    if not value:
        return DEFAULT_DEADLINE
    text = value.strip()
    if text.isdigit():
        return timedelta(seconds=int(text))
    match = _DURATION.match(text)
    if not match or not any(match.groups()):
        raise GenerationError(
            f'invalid {constants.ANNOTATION_ROLLOUT_PROGRESS_DEADLINE} "{value}": use a '
            "duration such as 10m, 90s or 1h30m")
    hours, minutes, seconds = (int(g or 0) for g in match.groups())
    return timedelta(hours=hours, minutes=minutes, seconds=seconds)


async def _status(ctx: OperatorContext, live: Json, previous: Json | None, step: RolloutStep,
                  target: str, states: Mapping[str, ServiceState],
                  pods_by_dcd: Mapping[str, list[Json]], target_created: list[str],
                  hold: bool, now: datetime, deadline: timedelta) -> tuple[Json | None, str]:
    stamp = now.strftime("%Y-%m-%dT%H:%M:%SZ")
    phase = (previous or {}).get("phase")
    done = len(step.updated) == len(states)
    if not step.rolling and (done or phase not in (PENDING, IN_PROGRESS)):
        if previous is None or phase == COMPLETED:
            return previous, ""
        return {**_without(previous, "endTime"), "phase": COMPLETED, "endTime": stamp,
                "updatedComponents": sorted(states)}, ""
    graph_name = live["metadata"]["name"]
    # A failed rollout the graph has changed since is a new attempt, with a new start.
    carried = phase in (PENDING, IN_PROGRESS) or (phase == FAILED and hold)
    status = dict(previous or {}) if carried else {}
    if not status:
        status = {"startTime": stamp}
    status.pop("endTime", None)
    status["updatedComponents"] = list(step.updated)
    if hold:
        status["phase"] = FAILED
        return status, await _cause_found_since(ctx, live, states, target, deadline)
    # Pending until the target holds a pod: its DCDs are being made, or it waits its turn.
    started = any(st.generations.get(target, Generation()).pods > 0 for st in states.values())
    status["phase"] = IN_PROGRESS if started and not step.waiting else PENDING
    target_pods = [p for s in states for p in
                   pods_by_dcd.get(worker_dcd_name(graph_name, s, target), [])]
    # Progress counts from the start, the target's DCDs (made later on a change on top of a
    # rollout), and the last target pod that turned ready.
    last = _parse(status.get("startTime")) or now
    for created in target_created:
        last = max(last, _parse(created) or last)
    for pod in target_pods:
        ready = get_condition((pod.get("status") or {}).get("conditions"), "Ready") or {}
        if ready.get("status") == "True":
            last = max(last, _parse(ready.get("lastTransitionTime")) or last)
    if step.waiting or now - last < deadline:
        return status, ""
    status["phase"] = FAILED
    return status, _failure(target, deadline, await _cause(ctx, live, states, target))


async def _cause(ctx: OperatorContext, live: Json, states: Mapping[str, ServiceState],
                 target: str) -> str:
    """What blocks the target generation's pods (a crash loop, an image pull, no room), by
    component, or that they are not ready for no reason the pods show yet."""
    problems = []
    for service in sorted(states):
        name = worker_dcd_name(live["metadata"]["name"], service, target)
        problem = await first_problem(ctx.cache, live["metadata"]["namespace"], name)
        if problem is not None:
            problems.append(f"{name}: {problem.message}")
    return "; ".join(problems) or _NO_CAUSE_YET


async def _cause_found_since(ctx: OperatorContext, live: Json,
                             states: Mapping[str, ServiceState], target: str,
                             deadline: timedelta) -> str:
    """A held failure told without a cause (the deadline came before a container crashed)
    is told again once the pods show one; one that named its cause stays as told, so a
    crash loop's growing back-off writes nothing."""
    ready = get_condition((live.get("status") or {}).get("conditions"), "Ready") or {}
    if _NO_CAUSE_YET not in str(ready.get("message") or ""):
        return ""
    cause = await _cause(ctx, live, states, target)
    return "" if cause == _NO_CAUSE_YET else _failure(target, deadline, cause)


def _failure(target: str, deadline: timedelta, cause: str) -> str:
    return (f"the new worker generation {target} made no progress for {_text(deadline)}: "
            f"{cause}; the old generation keeps serving")


_NO_CAUSE_YET = "its pods did not become ready"


def _text(deadline: timedelta) -> str:
    seconds = int(deadline.total_seconds())
    if seconds < 60 or seconds % 60:
        return f"{seconds // 60}m{seconds % 60}s" if seconds >= 60 else f"{seconds}s"
    return f"{seconds // 60}m"


def _without(obj: Json, key: str) -> Json:
    return {k: v for k, v in obj.items() if k != key}


def _parse(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    except ValueError:
        return None


__all__ = ["COMPLETED", "FAILED", "IN_PROGRESS", "PENDING", "RECHECK_SECONDS",
           "Rollout", "observe_rollout", "progress_deadline", "provider_rollout"]
