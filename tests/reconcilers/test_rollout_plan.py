"""The rollout's step function, driven through whole rollouts of a simulated cluster.

Each tick applies the plan as a Deployment would (removed replicas delete unready pods first,
then ready ones; new replicas start unready, removed pods terminate for a while), and makes some
pods ready. Along the way, for every tick: the serving capacity never falls below the floor, no
component has more pods than desired + surge, at most two generations hold pods; and every
rollout ends with the target alone, at its desired counts.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from hypothesis import given, settings
from hypothesis import strategies as st

from backends.worker_generation import WorkerDCD
from reconcilers.graph.rollout_plan import (
    Budget,
    Generation,
    ServiceState,
    budget,
    plan_step,
)


@dataclass
class _Pods:
    ready: int = 0
    starting: int = 0
    terminating: list[int] = field(default_factory=list)  # ticks left
    #: Replicas removed whose pods the Deployment has not deleted yet (still ready, for a
    #: tick: the planner sees them, as it sees a cache that is behind).
    doomed: int = 0

    def total(self) -> int:
        return self.ready + self.starting + len(self.terminating)


class _Cluster:
    """Generations of pods per component, moved by plans."""

    def __init__(self, desired: dict[str, int], budgets: dict[str, Budget], start: str,
                 seed: int) -> None:
        self.desired = desired
        self.budgets = budgets
        self.replicas = {s: {start: n} for s, n in desired.items()}
        self.pods = {s: {start: _Pods(ready=n)} for s, n in desired.items()}
        self.random = random.Random(seed)

    def states(self) -> dict[str, ServiceState]:
        return {s: ServiceState(self.desired[s], self.budgets[s], {
            g: Generation(self.replicas[s][g], p.ready, p.total())
            for g, p in self.pods[s].items()}) for s in self.desired}

    def apply(self, dcds: dict[str, tuple[WorkerDCD, ...]]) -> None:
        for service, planned in dcds.items():
            listed = {d.generation: d.replicas or 0 for d in planned}
            for g in list(self.pods[service]):
                if g not in listed:
                    assert self.pods[service][g].total() == 0, "deleted with pods left"
                    assert self.replicas[service][g] == 0, "deleted with replicas left"
                    del self.pods[service][g]
                    del self.replicas[service][g]
            for g, count in listed.items():
                pods = self.pods[service].setdefault(g, _Pods())
                self.replicas[service][g] = count
                active = pods.ready + pods.starting
                if count > active:
                    pods.starting += count - active
                pods.doomed = max(0, pods.ready + pods.starting - count)

    def delete_doomed(self) -> None:
        for by_generation in self.pods.values():
            for pods in by_generation.values():
                while pods.doomed:
                    pods.doomed -= 1
                    if pods.starting:
                        pods.starting -= 1
                    else:
                        pods.ready -= 1
                    pods.terminating.append(self.random.randint(0, 2))

    def tick(self) -> None:
        if self.random.random() < 0.5:  # else the Deployment is a tick behind
            self.delete_doomed()
        for by_generation in self.pods.values():
            for pods in by_generation.values():
                up = sum(1 for _ in range(pods.starting) if self.random.random() < 0.5)
                pods.starting -= up
                pods.ready += up
                pods.terminating = [t - 1 for t in pods.terminating if t > 0]

    def capacity(self) -> float:
        generations = {g for by in self.pods.values() for g in by}
        return sum(min(self.pods[s].get(g, _Pods()).ready / self.desired[s]
                       for s in self.desired) for g in generations)

    def holding(self) -> int:
        return len({g for by in self.pods.values() for g, p in by.items() if p.total()})


def _floor(cluster: _Cluster) -> float:
    return min((n - cluster.budgets[s].unavailable) / n for s, n in cluster.desired.items())


def _check(cluster: _Cluster, floor: float, now: int) -> None:
    assert cluster.capacity() >= floor - 1e-9, (now, cluster.pods)
    for service, n in cluster.desired.items():
        pods = sum(p.total() for p in cluster.pods[service].values())
        assert pods <= n + cluster.budgets[service].surge, (service, now, cluster.pods)
    assert cluster.holding() <= 2, (now, cluster.pods)


def _roll(cluster: _Cluster, targets: list[tuple[int, str]], ticks: int = 400) -> str:
    """Roll to each (tick, target) in turn; returns the final target."""
    floor = _floor(cluster)
    target = targets[0][1]
    for now in range(ticks):
        target = next((t for at, t in reversed(targets) if at <= now), target)
        step = plan_step(cluster.states(), target)
        cluster.apply(dict(step.plan.dcds))
        _check(cluster, floor, now)
        if not step.rolling and len(step.updated) == len(cluster.desired) and (
                now > targets[-1][0]):
            return target
        cluster.tick()
        _check(cluster, floor, now)
    raise AssertionError(f"rollout did not finish: {cluster.pods}")


_percent = st.sampled_from(["0%", "25%", "50%", "100%", 0, 1, 2])


@settings(max_examples=150, deadline=None)
@given(prefill=st.integers(1, 6), decode=st.integers(1, 6), surge=_percent,
       unavailable=_percent, seed=st.integers(0, 10_000))
def test_a_disaggregated_rollout_keeps_capacity_and_surge(prefill: int, decode: int,
                                                           surge: int | str,
                                                           unavailable: int | str,
                                                           seed: int) -> None:
    desired = {"prefill": prefill, "decode": decode}
    budgets = {s: budget(n, surge, unavailable) for s, n in desired.items()}
    cluster = _Cluster(desired, budgets, "aaaa", seed)
    _roll(cluster, [(0, "bbbb")])
    assert set(cluster.pods["prefill"]) == {"bbbb"}
    assert cluster.pods["decode"]["bbbb"].ready == decode


@settings(max_examples=100, deadline=None)
@given(prefill=st.integers(1, 5), decode=st.integers(1, 5), change_at=st.integers(1, 12),
       revert=st.booleans(), seed=st.integers(0, 10_000))
def test_a_change_or_revert_mid_rollout_keeps_the_budgets(prefill: int, decode: int,
                                                          change_at: int, revert: bool,
                                                          seed: int) -> None:
    desired = {"prefill": prefill, "decode": decode}
    budgets = {s: budget(n, "25%", "25%") for s, n in desired.items()}
    cluster = _Cluster(desired, budgets, "aaaa", seed)
    final = "aaaa" if revert else "cccc"
    assert _roll(cluster, [(0, "bbbb"), (change_at, final)]) == final
    assert set(cluster.pods["decode"]) == {final}


def test_a_revert_never_removes_pods_of_the_generation_returned_to() -> None:
    desired = {"prefill": 2, "decode": 2}
    budgets = {s: budget(2, "25%", "25%") for s in desired}
    states = {s: ServiceState(2, budgets[s], {"aaaa": Generation(2, 2, 2),
                                              "bbbb": Generation(1, 0, 1)})
              for s in desired}
    step = plan_step(states, "aaaa")
    for dcds in step.plan.dcds.values():
        back = next(d for d in dcds if d.generation == "aaaa")
        assert back.target and back.replicas == 2


def test_a_third_generation_waits_while_two_hold_pods() -> None:
    budgets = {"worker": budget(4, "25%", "25%")}
    states = {"worker": ServiceState(4, budgets["worker"], {
        "aaaa": Generation(3, 3, 3), "bbbb": Generation(2, 1, 2)})}
    step = plan_step(states, "cccc")
    assert step.waiting and step.rolling
    assert all(d.generation != "cccc" for d in step.plan.dcds["worker"])


def test_recreate_drains_before_the_target_starts() -> None:
    recreate = Budget(0, 2, recreate=True)
    states = {"worker": ServiceState(2, recreate, {"aaaa": Generation(2, 2, 2)})}
    step = plan_step(states, "bbbb")
    assert [(d.generation, d.replicas) for d in step.plan.dcds["worker"]] == [("aaaa", 0)]
    states = {"worker": ServiceState(2, recreate, {"aaaa": Generation(0, 0, 0)})}
    step = plan_step(states, "bbbb")
    assert [(d.generation, d.replicas) for d in step.plan.dcds["worker"]] == [("bbbb", 2)]


def test_a_held_rollout_removes_nothing_more() -> None:
    budgets = {"worker": budget(2, "25%", "25%")}
    states = {"worker": ServiceState(2, budgets["worker"], {
        "aaaa": Generation(2, 2, 2), "bbbb": Generation(1, 0, 1)})}
    step = plan_step(states, "bbbb", hold=True)
    old = next(d for d in step.plan.dcds["worker"] if d.generation == "aaaa")
    assert old.replicas == 2


def test_budgets_round_as_the_original() -> None:
    assert budget(1, "25%", "25%") == Budget(1, 0)
    assert budget(2, "25%", "25%") == Budget(1, 0)
    assert budget(4, "25%", "25%") == Budget(1, 1)
    assert budget(4, 0, 0) == Budget(1, 0)
    assert budget(10, "0%", "30%") == Budget(0, 3)


@settings(max_examples=60, deadline=None)
@given(replicas=st.integers(1, 6), partition=st.integers(0, 6), seed=st.integers(0, 10_000))
def test_a_canary_holds_its_share_until_removed(replicas: int, partition: int,
                                                 seed: int) -> None:
    desired = {"prefill": replicas, "decode": replicas}
    budgets = {s: budget(replicas, "25%", "25%") for s in desired}
    cluster = _Cluster(desired, budgets, "aaaa", seed)
    floor = _floor(cluster)
    held = min(partition, replicas)
    for now in range(60):
        states = {s: ServiceState(st_.desired, st_.budget, st_.generations, partition=partition)
                  for s, st_ in cluster.states().items()}
        step = plan_step(states, "bbbb")
        cluster.apply(dict(step.plan.dcds))
        _check(cluster, floor, now)
        cluster.tick()
        _check(cluster, floor, now)
    for service in desired:
        assert cluster.replicas[service].get("bbbb", 0) == held
        assert cluster.replicas[service].get("aaaa", 0) == replicas - held
    assert step.rolling == (held < replicas)  # a partition of every replica is no canary
    # Removing the partition finishes the rollout.
    assert _roll(cluster, [(0, "bbbb")]) == "bbbb"
    assert set(cluster.pods["prefill"]) == {"bbbb"}


def test_a_partition_holds_nothing_back_without_an_old_generation() -> None:
    states = {"worker": ServiceState(4, budget(4, "25%", "25%"), {}, partition=1)}
    step = plan_step(states, "aaaa")
    assert [(d.generation, d.replicas) for d in step.plan.dcds["worker"]] == [("aaaa", 4)]


def test_a_worker_scaled_to_zero_still_has_its_dcd() -> None:
    states = {"worker": ServiceState(0, budget(0, "25%", "25%"), {})}
    step = plan_step(states, "aaaa")
    assert [(d.generation, d.replicas) for d in step.plan.dcds["worker"]] == [("aaaa", 0)]
    # Changed while at zero: the old generation (nothing running) goes, the new one is there.
    states = {"worker": ServiceState(0, budget(0, "25%", "25%"), {"aaaa": Generation(0, 0, 0)})}
    step = plan_step(states, "bbbb")
    assert [(d.generation, d.replicas) for d in step.plan.dcds["worker"]] == [("bbbb", 0)]
    assert not step.rolling


@settings(max_examples=100, deadline=None)
@given(replicas=st.integers(1, 8), surge=_percent, unavailable=_percent,
       seed=st.integers(0, 10_000))
def test_an_aggregated_rollout_keeps_the_same_budgets(replicas: int, surge: int | str,
                                                      unavailable: int | str,
                                                      seed: int) -> None:
    """One worker type: the capacity is its ready share, under the same floor and surge."""
    cluster = _Cluster({"worker": replicas}, {"worker": budget(replicas, surge, unavailable)},
                       "aaaa", seed)
    assert _roll(cluster, [(0, "bbbb")]) == "bbbb"
    assert set(cluster.pods["worker"]) == {"bbbb"}
    assert cluster.replicas["worker"] == {"bbbb": replicas}
