"""The invariants of a worker rollout, judged on one sample of a graph and its live pods.

A sample is what a rollout test sees at one instant: the graph's JSON (or None while it is
absent), the live pods of the graph (label `nvidia.com/dynamo-graph-deployment-name`), the
desired replicas of each worker component and each component's resolved budget. `observe`
turns it into an `Observation`:

- **generations**: a worker pod belongs to the generation of its `nvidia.com/dynamo-worker-hash`
  label, or to `LEGACY` without one (pods made before generations existed);
- **serving capacity**: the sum over generations of the smallest, over worker components, of
  (ready pods of that component in that generation / its desired replicas); for an
  aggregated graph (one worker component) that is ready / desired. Ready is the simulated
  frontend's notion (`generations.ready_worker`: Running, Ready, not terminating);
- **surge**: per component, its pods above its desired replicas, terminating ones included
  (they still hold their GPUs); pods that ended (Succeeded, Failed) hold nothing and count
  nowhere;
- **isolation violations**: worker pods registered in a Dynamo namespace that is not theirs,
  as the simulated frontend judges them (`generations.frontend_view`'s `misplaced`);
- **Ready beside old pods** (`ready_beside_old_pods`, over a series): the graph's current
  status Ready while two generations hold pods, which a rollout must never report;
- **breaches**: the capacity below `capacity_floor` (1 - maxUnavailable, the tightest
  component), a surge above a component's `maxSurge`, more than two generations holding pods,
  and any isolation violation.

Budgets (`resolve_budget`) are the original's: `nvidia.com/deployment-rolling-update-max-surge`
and `-max-unavailable` on the graph, 25% by default, a count or a percentage of the
component's desired replicas; surge rounds up, unavailable down, and zero/zero becomes one
surge. Pure functions over JSON.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from backends.constants import (
    ANNOTATION_MAX_SURGE,
    ANNOTATION_MAX_UNAVAILABLE,
    LABEL_COMPONENT,
    WORKER_TYPES,
)
from hack.localcluster.simulation.generations import (
    COMPONENT_TYPE_LABEL,
    GRAPH_LABEL,
    NAMESPACE_ENV,
    PREFIX_ENV,
    WORKER_HASH_LABEL,
    frontend_view,
    pod_env,
    ready_worker,
    worker_role,
)

Json = dict[str, Any]

#: The generation of worker pods without the worker-hash label (made before generations).
LEGACY = "legacy"
#: The budgets when the graph names none.
DEFAULT_BUDGET = "25%"
#: More generations than this holding pods at once is a breach (a third waits).
MAX_GENERATIONS = 2
_ENDED = ("Succeeded", "Failed")


@dataclass(frozen=True)
class Budget:
    """One component's resolved rollout budget, in pods."""

    surge: int
    unavailable: int


@dataclass(frozen=True)
class Sample:
    """What one instant of a rollout holds (see the module)."""

    graph: Json | None
    pods: Sequence[Json]
    desired: Mapping[str, int]
    budgets: Mapping[str, Budget]


@dataclass(frozen=True)
class Observation:
    """The invariants' values for one sample, and what breaks them."""

    #: generation -> worker component -> ready pods.
    ready: dict[str, dict[str, int]]
    capacity: float
    floor: float
    #: worker component -> pods above its desired replicas (0 when none).
    surge: dict[str, int]
    #: The generations holding worker pods, sorted.
    generations: tuple[str, ...]
    #: `frontend_view`'s misplaced workers.
    violations: tuple[Json, ...]
    phase: str | None
    ready_condition: str | None
    breaches: tuple[str, ...] = field(default=())
    #: The graph's status has observed its spec (observedGeneration is its generation).
    observed: bool = True


# --- budgets --------------------------------------------------------------------------------


def resolve_budget(max_surge: str | int | None, max_unavailable: str | int | None,
                   desired: int) -> Budget:
    """The budget of a component with `desired` replicas: each value a count (`1`, `"1"`) or
    a percentage (`"25%"`) of `desired`, None for the default 25%; surge rounds up,
    unavailable down, and zero/zero becomes one surge. ValueError names a bad value."""
    surge = _scaled(DEFAULT_BUDGET if max_surge is None else max_surge, desired, round_up=True)
    unavailable = _scaled(DEFAULT_BUDGET if max_unavailable is None else max_unavailable,
                          desired, round_up=False)
    if surge == 0 and unavailable == 0:
        surge = 1
    return Budget(surge, unavailable)


def _scaled(value: str | int, desired: int, *, round_up: bool) -> int:
    text = str(value).strip()
    percent = text.endswith("%")
    digits = text[:-1].strip() if percent else text
    if not (digits.isascii() and digits.isdigit()):
        raise ValueError(f"rollout budget {value!r}: not a count or a percentage")
    number = int(digits)
    if not percent:
        return number
    return -(-number * desired // 100) if round_up else number * desired // 100


def graph_budgets(graph: Json | None, desired: Mapping[str, int]) -> dict[str, Budget]:
    """Each worker component's budget from the graph's annotations (defaults without)."""
    annotations = ((graph or {}).get("metadata") or {}).get("annotations") or {}
    return {name: resolve_budget(annotations.get(ANNOTATION_MAX_SURGE),
                                 annotations.get(ANNOTATION_MAX_UNAVAILABLE), replicas)
            for name, replicas in desired.items()}


def desired_replicas(graph: Json | None) -> dict[str, int]:
    """The desired replicas of the graph's worker components, in either version's shape
    (`v1beta1` `spec.components[].type`, `v1alpha1` `spec.services.*.componentType`)."""
    spec = (graph or {}).get("spec") or {}
    found: dict[str, int] = {}
    for component in spec.get("components") or ():
        if component.get("type") in WORKER_TYPES:
            found[str(component.get("name"))] = int(component.get("replicas", 1))
    for name, service in (spec.get("services") or {}).items():
        if (service or {}).get("componentType") in WORKER_TYPES:
            found[str(name)] = int(service.get("replicas", 1))
    return found


def capacity_floor(budgets: Mapping[str, Budget], desired: Mapping[str, int]) -> float:
    """The capacity a rollout keeps: 1 - maxUnavailable / desired of the tightest component."""
    shares = [1 - min(budgets[name].unavailable, replicas) / replicas
              for name, replicas in desired.items() if replicas > 0 and name in budgets]
    return min(shares, default=1.0)


# --- one sample -----------------------------------------------------------------------------


def generation_of(pod: Json) -> str:
    """The pod's worker generation: its worker-hash label, or `LEGACY`."""
    return _labels(pod).get(WORKER_HASH_LABEL) or LEGACY


def worker_pods(pods: Iterable[Json]) -> list[Json]:
    """The worker pods (prefill, decode, aggregated) that have not ended."""
    return [p for p in pods if worker_role(p) is not None
            and (p.get("status") or {}).get("phase") not in _ENDED]


def _labels(pod: Json) -> dict[str, str]:
    return dict((pod.get("metadata") or {}).get("labels") or {})


def _component(pod: Json) -> str:
    return _labels(pod).get(LABEL_COMPONENT, "")


def ready_by_generation(pods: Iterable[Json]) -> dict[str, dict[str, int]]:
    """generation -> component -> ready pods, for every generation holding worker pods."""
    ready: dict[str, dict[str, int]] = {}
    for pod in worker_pods(pods):
        counts = ready.setdefault(generation_of(pod), {})
        counts[_component(pod)] = counts.get(_component(pod), 0) + int(ready_worker(pod))
    return ready


def serving_capacity(pods: Iterable[Json], desired: Mapping[str, int]) -> float:
    """The sum over generations of min over worker components of ready / desired (1.0 when
    no component asks for replicas)."""
    wanted = {name: n for name, n in desired.items() if n > 0}
    if not wanted:
        return 1.0
    return sum(min(counts.get(name, 0) / n for name, n in wanted.items())
               for counts in ready_by_generation(pods).values())


def surge(pods: Iterable[Json], desired: Mapping[str, int]) -> dict[str, int]:
    """Per worker component (desired or seen), its pods above desired, terminating included."""
    held = Counter(_component(p) for p in worker_pods(pods))
    return {name: max(0, held.get(name, 0) - desired.get(name, 0))
            for name in sorted({*desired, *held})}


def generations_holding_pods(pods: Iterable[Json]) -> tuple[str, ...]:
    """The generations that hold worker pods (terminating included), sorted."""
    return tuple(sorted({generation_of(p) for p in worker_pods(pods)}))


def isolation_violations(pods: Sequence[Json]) -> tuple[Json, ...]:
    """Worker pods registered outside their generation, as the graph's frontend sees them
    (`frontend_view`); without a live frontend pod, as one in the workers' base namespace
    (their most common `DYN_NAMESPACE`) would."""
    frontend = _frontend(pods)
    return tuple(frontend_view(frontend, pods)["misplaced"]) if frontend is not None else ()


def _frontend(pods: Sequence[Json]) -> Json | None:
    live = sorted((p for p in pods if _labels(p).get(COMPONENT_TYPE_LABEL) == "frontend"
                   and not (p.get("metadata") or {}).get("deletionTimestamp")),
                  key=lambda p: str((p.get("metadata") or {}).get("name")))
    if live:
        return live[0]
    workers = worker_pods(pods)
    if not workers:
        return None
    base = Counter(pod_env(p).get(NAMESPACE_ENV) for p in workers).most_common(1)[0][0]
    graph = _labels(workers[0]).get(GRAPH_LABEL)
    return {"metadata": {"name": "(frontend)",
                         "namespace": (workers[0].get("metadata") or {}).get("namespace"),
                         "labels": {GRAPH_LABEL: graph} if graph else {}},
            "spec": {"containers": [{"name": "frontend", "ports": [{"name": "http"}],
                                     "env": [{"name": PREFIX_ENV, "value": base}] if base
                                     else []}]}}


def rollout_phase(graph: Json | None) -> str | None:
    """The graph's `status.rollingUpdate.phase`, if any."""
    return ((((graph or {}).get("status") or {}).get("rollingUpdate")) or {}).get("phase")


def ready_condition(graph: Json | None) -> str | None:
    """The status of the graph's Ready condition ("True", "False"...), if any."""
    for condition in ((graph or {}).get("status") or {}).get("conditions") or ():
        if condition.get("type") == "Ready":
            return str(condition.get("status"))
    return None


def ready_beside_old_pods(observations: Iterable[Observation]) -> int:
    """Samples in which the graph's status, having observed its spec, was Ready while two
    generations held worker pods, each counted only when the sample before it showed the
    same: one sample's two reads run at once, so its pods may predate the last old pod's end
    that its graph already reflects. (A status not yet observing a change is stale, not
    wrong: the new generation's pods may come before it.)"""
    count, before = 0, False
    for seen in observations:
        now = (seen.observed and seen.ready_condition == "True"
               and len(seen.generations) > 1)
        count += int(now and before)
        before = now
    return count


def observe(sample: Sample) -> Observation:
    """The invariants' values for one sample and their breaches (see the module)."""
    pods = list(sample.pods)
    capacity = serving_capacity(pods, sample.desired)
    floor = capacity_floor(sample.budgets, sample.desired)
    over = surge(pods, sample.desired)
    generations = generations_holding_pods(pods)
    violations = isolation_violations(pods)
    breaches: list[str] = []
    if capacity < floor - 1e-9:
        breaches.append(f"capacity {capacity:.3f} below {floor:.3f}")
    for name, pods_over in over.items():
        budget = sample.budgets.get(name)
        if budget is not None and pods_over > budget.surge:
            breaches.append(f"{name}: surge {pods_over} above {budget.surge}")
    if len(generations) > MAX_GENERATIONS:
        breaches.append(f"{len(generations)} generations hold pods: {', '.join(generations)}")
    breaches.extend(f"{v['pod']} ({v['role']}, {v.get('workerHash') or LEGACY}) registered in "
                    f"{v['dynamoNamespace']}" for v in violations)
    return Observation(ready=ready_by_generation(pods), capacity=capacity, floor=floor,
                       surge=over, generations=generations, violations=violations,
                       phase=rollout_phase(sample.graph),
                       ready_condition=ready_condition(sample.graph), breaches=tuple(breaches),
                       observed=_observed(sample.graph))


def _observed(graph: Json | None) -> bool:
    meta, status = (graph or {}).get("metadata") or {}, (graph or {}).get("status") or {}
    return status.get("observedGeneration") == meta.get("generation")
