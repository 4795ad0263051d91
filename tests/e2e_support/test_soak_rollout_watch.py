"""The soak's rollout judge (`hack/soak/rollout_watch.py`) on hand-built samples: a fall of
capacity below the floor and a surge above the budget are breaches on a graph left alone, and
nothing is judged right after a fault or a scale moved its pods."""

from __future__ import annotations

from typing import Any

from rollout_pods_support import GRAPH, A, B, frontend, pod

from hack.soak.rollout_watch import RolloutWatch

Json = dict[str, Any]


def graph(phase: str = "InProgress") -> Json:
    """An aggregated graph of 2 workers (default budgets: surge 1, unavailable 0)."""
    return {"metadata": {"name": GRAPH},
            "spec": {"services": {"W": {"componentType": "worker", "replicas": 2}}},
            "status": {"rollingUpdate": {"phase": phase}}}


def both_ready() -> list[Json]:
    return [frontend(), pod("a1", "W", A), pod("a2", "W", A), pod("b1", "W", B)]


def test_a_fall_below_the_floor_and_a_surge_above_the_budget_are_breaches() -> None:
    watch = RolloutWatch()
    watch.sample(GRAPH, graph(), both_ready())  # capacity 1.5, surge 1: within the budgets
    watch.sample(GRAPH, graph(), [frontend(), pod("a1", "W", A), pod("b1", "W", B, ready=False)])
    watch.sample(GRAPH, graph(), [*both_ready(), pod("b2", "W", B, ready=False)])
    figures = watch.figures()
    assert figures["rolloutSamplesJudged"] == 3
    assert figures["rolloutCapacityBreaches"] == 1, watch.details()
    assert figures["rolloutSurgeBreaches"] == 1, watch.details()
    assert watch.details()["capacityBreaches"] == [f"{GRAPH}: capacity 0.50 below 1.00 "
                                                   f"({A}, {B})"]


def test_a_disturbed_graph_and_a_graph_not_rolling_are_not_judged() -> None:
    watch = RolloutWatch()
    watch.sample(GRAPH, graph(), both_ready())
    watch.disturb(GRAPH)  # a pod of it killed: its capacity falls, not by the operator
    watch.sample(GRAPH, graph(), [frontend(), pod("a1", "W", A), pod("b1", "W", B, ready=False)])
    only_new = [frontend(), pod("b1", "W", B, ready=False)]
    watch.sample("other", graph(phase="Completed"), only_new)
    assert watch.figures()["rolloutSamplesJudged"] == 1
    assert watch.figures()["rolloutCapacityBreaches"] == 0


def test_a_rollout_that_starts_below_the_floor_breaches_nothing_until_it_reaches_it() -> None:
    watch = RolloutWatch()
    coming_up = [frontend(), pod("a1", "W", A, ready=False), pod("b1", "W", B, ready=False)]
    watch.sample(GRAPH, graph(), coming_up)
    watch.sample(GRAPH, graph(), coming_up)
    assert watch.figures()["rolloutSamplesJudged"] == 2
    assert watch.figures()["rolloutCapacityBreaches"] == 0
