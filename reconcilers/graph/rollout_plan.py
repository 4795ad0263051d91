"""One step of a worker rollout, as a pure function of what runs.

The rolled workers of a graph (`backends.worker_generation`) move from their old generations to
the target one together, within each component's budgets:

- **surge**: a component never has more than `desired + maxSurge` pods, counting every
  generation's pods (terminating ones too) or replicas, whichever is larger;
- **serving capacity**: per generation, the smallest of its components' shares (ready pods
  over desired replicas), summed over the generations; old replicas are removed only while
  it stays at or above the floor, the smallest `(desired - maxUnavailable) / desired` of the
  components. A prefill is therefore removed only when a decode of its generation goes too, or
  when the new generation serves in its place;
- **two generations at most hold pods**: with two old generations holding pods (a change on
  top of a rollout), the one serving more becomes the interim target and the other drains into
  it before the target starts;
- **Recreate** (per component): its old replicas go to zero first, then the target scales up;
- **hold** (a failed rollout): the old generations keep what they have;
- **canary** (a partition per component): the target holds at most that many replicas and the
  old generations keep the rest, until the partition is raised or removed;
- an old generation is dropped from the plan (its DCDs deleted) once none of its components
  has replicas or pods.

Removing a replica lets the Deployment delete one pod; it deletes not-ready pods first, so a
replica with an unready pod costs no capacity. Ready pods beyond a DCD's replicas (scaled down,
not deleted yet) are not counted: they are about to go.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from backends.worker_generation import WorkerDCD, WorkerPlan

__all__ = ["Budget", "Generation", "RolloutStep", "ServiceState", "budget", "plan_step"]


@dataclass(frozen=True)
class Budget:
    """A component's budgets in replicas, and whether it is replaced by Recreate."""

    surge: int
    unavailable: int
    recreate: bool = False


def budget(desired: int, max_surge: int | str, max_unavailable: int | str,
           recreate: bool = False) -> Budget:
    """Budgets in replicas: percentages of `desired`, surge rounded up and unavailable down;
    zero and zero becomes one surge (as the original and Deployments do)."""
    surge = _resolve(max_surge, desired, up=True)
    unavailable = _resolve(max_unavailable, desired, up=False)
    if surge == 0 and unavailable == 0:
        surge = 1
    return Budget(surge, unavailable, recreate)


def _resolve(value: int | str, desired: int, *, up: bool) -> int:
    if isinstance(value, int):
        return value
    percent = int(value.rstrip("%"))
    exact = percent * desired / 100
    return math.ceil(exact) if up else math.floor(exact)


@dataclass(frozen=True)
class Generation:
    """One generation's DCD of one component: its replicas, ready pods and all pods."""

    replicas: int = 0
    ready: int = 0
    pods: int = 0

    @property
    def footprint(self) -> int:
        """Pods it has or is about to have."""
        return max(self.replicas, self.pods)

    @property
    def holds(self) -> bool:
        return self.replicas > 0 or self.pods > 0


@dataclass(frozen=True)
class ServiceState:
    """One rolled component: its desired replicas, budgets and generations by hash."""

    desired: int
    budget: Budget
    generations: Mapping[str, Generation] = field(default_factory=dict)
    #: A canary: the target holds at most this many replicas, the old generations the rest.
    partition: int | None = None


@dataclass(frozen=True)
class RolloutStep:
    """The plan of the worker DCDs, and what it says of the rollout."""

    plan: WorkerPlan
    #: Old generations remain (or the target waits): the rollout is not over.
    rolling: bool
    #: The target is not created yet: a third generation waits, or Recreate drains.
    waiting: bool
    #: Components whose target serves all desired replicas with no old replica or pod left.
    updated: tuple[str, ...]


def plan_step(services: Mapping[str, ServiceState], target: str, *, hold: bool = False,
              frontend_prefix: bool = True) -> RolloutStep:
    """The replicas of every generation's DCD for this step of the rollout to `target`."""
    generations = {g for s in services.values() for g in s.generations}
    holding = {g for s in services.values() for g, state in s.generations.items()
               if state.holds}
    old_holding = holding - {target}
    step_target = target
    if len(old_holding) >= 2:
        step_target = max(sorted(old_holding), key=lambda g: _capacity(services, g))
    replicas = {name: {g: s.generations[g].replicas for g in s.generations}
                for name, s in services.items()}
    waiting = step_target != target
    for name, service in services.items():
        if service.budget.recreate:
            waiting |= _recreate(service, replicas[name], step_target, hold)
        else:
            _surge(service, replicas[name], step_target)
    if not hold:
        _scale_down(services, replicas, step_target)
    plan: dict[str, tuple[WorkerDCD, ...]] = {}
    for name, service in services.items():
        dcds = []
        for g in sorted(generations | {target}):
            state = service.generations.get(g)
            count = replicas[name].get(g, 0)
            if g == target:
                if state is None and waiting:
                    continue  # created once its turn comes
                dcds.append(WorkerDCD(g, count, target=True))
            elif state is not None and _generation_holds(services, g):
                dcds.append(WorkerDCD(g, count, target=False))
        plan[name] = tuple(dcds)
    rolling = waiting or any(g != target and _generation_holds(services, g)
                             for g in generations)
    updated = tuple(sorted(name for name, s in services.items() if _updated(s, target)))
    return RolloutStep(WorkerPlan(plan, frontend_prefix), rolling, waiting, updated)


def _generation_holds(services: Mapping[str, ServiceState], generation: str) -> bool:
    return any(s.generations.get(generation, Generation()).holds for s in services.values())


def _updated(service: ServiceState, target: str) -> bool:
    own = service.generations.get(target)
    others = any(state.holds for g, state in service.generations.items() if g != target)
    return own is not None and own.ready >= service.desired and not others


def _recreate(service: ServiceState, counts: dict[str, int], target: str, hold: bool) -> bool:
    """Old replicas to zero, then the target up; True while the target waits."""
    old = [g for g in service.generations if g != target]
    if hold:
        return False
    for g in old:
        counts[g] = 0
    if any(service.generations[g].pods > 0 for g in old):
        counts[target] = min(counts.get(target, 0), 0)
        return True
    counts[target] = service.desired
    return False


def _surge(service: ServiceState, counts: dict[str, int], target: str) -> None:
    """The target's replicas: up to desired, within desired + surge pods in all."""
    own = service.generations.get(target, Generation())
    others = sum(state.footprint for g, state in service.generations.items() if g != target)
    terminating = max(0, own.pods - own.replicas)
    room = service.desired + service.budget.surge - others - terminating
    # A canary holds only while an old generation serves the rest.
    cap = service.desired if service.partition is None or others == 0 else min(
        service.partition, service.desired)
    counts[target] = min(cap, max(min(own.replicas, cap), room))


def _canary_floor(service: ServiceState, counts: Mapping[str, int], target: str) -> bool:
    """The old generations are down to what a canary leaves them."""
    if service.partition is None:
        return False
    old = sum(n for g, n in counts.items() if g != target)
    return old <= service.desired - min(service.partition, service.desired)


def _capacity(services: Mapping[str, ServiceState], generation: str,
              ready: Mapping[tuple[str, str], int] | None = None) -> float:
    shares = []
    for name, service in services.items():
        if service.desired <= 0:
            continue
        state = service.generations.get(generation, Generation())
        count = state.ready if ready is None else ready.get((name, generation), state.ready)
        shares.append(count / service.desired)
    return min(shares) if shares else 0.0


def _scale_down(services: Mapping[str, ServiceState], counts: dict[str, dict[str, int]],
                target: str) -> None:
    """Remove old replicas one at a time while the serving capacity stays at the floor."""
    rolled = {n: s for n, s in services.items() if not s.budget.recreate and s.desired > 0}
    if not rolled:
        return
    floor = min((s.desired - s.budget.unavailable) / s.desired for s in rolled.values())
    generations = {g for s in services.values() for g in s.generations}
    # Pods beyond a DCD's replicas are on their way out (the Deployment has not deleted them
    # yet): they serve for no longer than that.
    ready = {(n, g): min(st.ready, counts[n].get(g, st.replicas))
             for n, s in services.items() for g, st in s.generations.items()}

    def total(candidate: Mapping[tuple[str, str], int]) -> float:
        return sum(_capacity(rolled, g, candidate) for g in generations)

    while True:
        best: tuple[float, str, str, bool] | None = None
        for name in sorted(rolled):
            for g in sorted(generations - {target}):
                if counts[name].get(g, 0) <= 0 or _canary_floor(rolled[name], counts[name],
                                                                target):
                    continue
                # Unready pods go first: removing one costs nothing.
                unready = counts[name][g] > ready[(name, g)]
                trial = dict(ready)
                if not unready:
                    trial[(name, g)] = max(0, ready[(name, g)] - 1)
                after = total(trial)
                if after + 1e-9 < floor and not unready:
                    continue
                key = (after, name, g, unready)
                if best is None or (unready, after) > (best[3], best[0]):
                    best = key
        if best is None:
            return
        _, name, g, unready = best
        counts[name][g] -= 1
        if not unready:
            ready[(name, g)] = max(0, ready[(name, g)] - 1)

