"""The rollout invariants (`e2e/rollout_invariants.py`) on hand-built pods: budgets, serving
capacity, surge, generations and isolation, with properties over drawn pod sets."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rollout_pods_support import BASE, A, B, frontend, pod

from e2e.rollout_invariants import (
    LEGACY,
    Budget,
    Observation,
    Sample,
    capacity_floor,
    desired_replicas,
    generations_holding_pods,
    graph_budgets,
    isolation_violations,
    observe,
    ready_beside_old_pods,
    ready_by_generation,
    resolve_budget,
    serving_capacity,
    surge,
)

Json = dict[str, Any]


# --- budgets --------------------------------------------------------------------------------


@pytest.mark.parametrize(("surge_", "unavailable", "desired", "expected"), [
    (None, None, 1, Budget(1, 0)),     # the original's page: 25%/25% of 1 or 2 -> 1 and 0
    (None, None, 2, Budget(1, 0)),
    (None, None, 4, Budget(1, 1)),     # ... of 4 -> 1 and 1
    ("50%", "50%", 3, Budget(2, 1)),   # surge up, unavailable down
    ("0", "0", 5, Budget(1, 0)),       # zero/zero becomes one surge
    ("0%", "0%", 5, Budget(1, 0)),
    (0, 2, 5, Budget(0, 2)),
    ("3", "10%", 10, Budget(3, 1)),
    (" 100% ", "100%", 7, Budget(7, 7)),
])
def test_budgets_resolve_as_the_original(surge_: str | int | None, unavailable: str | int | None,
                                         desired: int, expected: Budget) -> None:
    assert resolve_budget(surge_, unavailable, desired) == expected


@pytest.mark.parametrize("bad", ["", "x", "-1", "1.5", "%", "25 %x", "1.5%", "²"])
def test_a_bad_budget_is_named(bad: str) -> None:
    with pytest.raises(ValueError, match="rollout budget"):
        resolve_budget(bad, None, 4)


@given(st.integers(0, 200), st.integers(0, 100), st.integers(0, 100))
def test_percent_budgets_round_surge_up_and_unavailable_down(
        desired: int, surge_pct: int, unavailable_pct: int) -> None:
    b = resolve_budget(f"{surge_pct}%", f"{unavailable_pct}%", desired)
    assert b.surge + b.unavailable >= 1
    assert b.unavailable <= desired
    assert b.unavailable * 100 <= unavailable_pct * desired < (b.unavailable + 1) * 100
    if surge_pct * desired == 0 and unavailable_pct * desired < 100:
        assert b == Budget(1, 0)  # zero/zero
    else:
        assert (b.surge - 1) * 100 < surge_pct * desired <= b.surge * 100


def test_graph_budgets_and_desired_replicas_in_both_versions() -> None:
    beta = {"metadata": {"annotations": {
        "nvidia.com/deployment-rolling-update-max-surge": "50%",
        "nvidia.com/deployment-rolling-update-max-unavailable": "1"}},
        "spec": {"components": [{"name": "Frontend", "type": "frontend", "replicas": 2},
                                {"name": "P", "type": "prefill", "replicas": 3},
                                {"name": "D", "type": "decode"}]}}
    alpha = {"spec": {"services": {"Frontend": {"componentType": "frontend"},
                                   "W": {"componentType": "worker", "replicas": 4}}}}
    assert desired_replicas(beta) == {"P": 3, "D": 1}
    assert desired_replicas(alpha) == {"W": 4}
    assert desired_replicas(None) == {}
    assert graph_budgets(beta, {"P": 3, "D": 1}) == {"P": Budget(2, 1), "D": Budget(1, 1)}
    assert graph_budgets(alpha, {"W": 4}) == {"W": Budget(1, 1)}
    assert capacity_floor({"W": Budget(1, 1)}, {"W": 4}) == 0.75
    assert capacity_floor({"P": Budget(2, 1), "D": Budget(1, 1)}, {"P": 3, "D": 1}) == 0.0
    assert capacity_floor({}, {}) == 1.0


# --- one sample -----------------------------------------------------------------------------


def test_a_disaggregated_rollout_midway() -> None:
    """Old generation A: 2 of 2 prefill, 1 of 2 decode ready (one terminating); new B: 1
    prefill ready, 1 decode starting."""
    pods = [pod("a-p0", "P", A), pod("a-p1", "P", A), pod("a-d0", "D", A),
            pod("a-d1", "D", A, terminating=True),
            pod("b-p0", "P", B), pod("b-d0", "D", B, ready=False),
            pod("old", "D", A, phase="Succeeded", ready=False), frontend()]
    desired = {"P": 2, "D": 2}
    assert ready_by_generation(pods) == {A: {"P": 2, "D": 1}, B: {"P": 1, "D": 0}}
    assert serving_capacity(pods, desired) == 0.5  # min(1, .5) + min(.5, 0)
    assert surge(pods, desired) == {"D": 1, "P": 1}  # the terminating pod counts, the ended not
    assert generations_holding_pods(pods) == (A, B)
    assert isolation_violations(pods) == ()
    budgets = {"P": Budget(1, 0), "D": Budget(1, 0)}
    seen = observe(Sample({"status": {"rollingUpdate": {"phase": "InProgress"}, "conditions": [
        {"type": "Ready", "status": "False", "reason": "updating"}]}}, pods, desired, budgets))
    assert (seen.phase, seen.ready_condition, seen.floor) == ("InProgress", "False", 1.0)
    assert seen.breaches == ("capacity 0.500 below 1.000",)


def test_an_aggregated_graph_is_ready_over_desired() -> None:
    pods = [pod("w0", "W", None), pod("w1", "W", None), pod("w2", "W", B, ready=False),
            pod("w3", "W", B)]
    assert ready_by_generation(pods) == {LEGACY: {"W": 2}, B: {"W": 1}}
    assert serving_capacity(pods, {"W": 4}) == 0.75
    assert surge(pods, {"W": 4}) == {"W": 0}
    assert generations_holding_pods(pods) == (B, LEGACY)
    assert serving_capacity(pods, {"W": 0}) == 1.0  # nothing asked, nothing missing
    seen = observe(Sample(None, pods, {"W": 4}, {"W": Budget(1, 1)}))
    assert (seen.breaches, seen.phase, seen.ready_condition) == ((), None, None)


def test_misplaced_workers_are_isolation_violations_with_or_without_a_frontend() -> None:
    pods = [pod("a-p0", "P", A), pod("a-d0", "D", A),
            pod("b-p0", "P", B, registers_in=A),  # a new prefill in the old generation
            pod("b-d0", "D", B)]
    for seen in (pods, [*pods, frontend()]):
        violations = isolation_violations(seen)
        assert [(v["pod"], v["dynamoNamespace"]) for v in violations] == [
            ("b-p0", f"{BASE}-{A}")]
    sample = observe(Sample(None, pods, {"P": 1, "D": 1}, {"P": Budget(1, 0),
                                                            "D": Budget(1, 0)}))
    assert sample.breaches == (f"b-p0 (prefill, {B}) registered in {BASE}-{A}",)
    assert isolation_violations([]) == ()


def test_breaches_name_surge_and_a_third_generation() -> None:
    pods = [pod("a", "W", A), pod("b", "W", B), pod("c", "W", "cccc3333")]
    seen = observe(Sample(None, pods, {"W": 1}, {"W": Budget(1, 0)}))
    assert seen.breaches == ("W: surge 2 above 1",
                             f"3 generations hold pods: {A}, {B}, cccc3333")


# --- properties -----------------------------------------------------------------------------

pod_states = st.tuples(st.sampled_from(["P", "D"]), st.sampled_from([A, B, None]),
                       st.booleans(), st.booleans())


@given(st.lists(pod_states, max_size=14), st.integers(1, 4), st.integers(1, 4),
       st.randoms(use_true_random=False))
def test_capacity_and_surge_properties(states: list[tuple[str, str | None, bool, bool]],
                                       want_p: int, want_d: int, rng: random.Random) -> None:
    pods = [pod(f"p{i}", c, g, ready=r, terminating=t)
            for i, (c, g, r, t) in enumerate(states)]
    desired = {"P": want_p, "D": want_d}
    capacity = serving_capacity(pods, desired)
    # the order of the pods does not matter
    shuffled = list(pods)
    rng.shuffle(shuffled)
    assert serving_capacity(shuffled, desired) == capacity
    # a sum of per-generation minima never exceeds the minimum of the totals
    routable = [p for p in pods if not p["metadata"].get("deletionTimestamp")
                and p["status"]["conditions"][0]["status"] == "True"]
    totals = {c: sum(p["metadata"]["labels"]["nvidia.com/dynamo-component"] == c
                     for p in routable) for c in desired}
    assert capacity <= min(totals[c] / n for c, n in desired.items()) + 1e-9
    # terminating pods never serve, but they hold their place in the surge
    assert serving_capacity([p for p in pods if not p["metadata"].get("deletionTimestamp")],
                            desired) == capacity
    held = {c: sum(s[0] == c for s in states) for c in desired}
    assert surge(pods, desired) == {c: max(0, held[c] - desired[c]) for c in sorted(desired)}
    # one more ready pod never lowers the capacity
    for component, generation in (("P", A), ("D", B), ("D", None)):
        more = [*pods, pod("extra", component, generation)]
        assert serving_capacity(more, desired) >= capacity
    # exactly the desired pods of one generation, all ready: full capacity, no surge
    whole = [pod(f"{c}{i}", c, A) for c, n in desired.items() for i in range(n)]
    assert serving_capacity(whole, desired) == 1.0
    assert set(surge(whole, desired).values()) == {0}


def test_ready_beside_old_pods_counts_only_what_two_samples_in_a_row_show() -> None:
    def seen(ready: str, *generations: str, observed: bool = True) -> Observation:
        return Observation(ready={}, capacity=1.0, floor=1.0, surge={},
                           generations=generations, violations=(), phase=None,
                           ready_condition=ready, observed=observed)
    one_sample = [seen("True", A), seen("True", A, B), seen("True", B)]
    assert ready_beside_old_pods(one_sample) == 0  # its reads straddled the last old pod's end
    rolling = [seen("False", A, B), seen("True", A, B), seen("True", A, B), seen("True", A, B)]
    assert ready_beside_old_pods(rolling) == 2
    stale = [seen("True", A, B, observed=False)] * 3  # the change not observed yet
    assert ready_beside_old_pods(stale) == 0
    graph = {"metadata": {"generation": 2}, "status": {"observedGeneration": 1}}
    assert not observe(Sample(graph, [], {}, {})).observed
