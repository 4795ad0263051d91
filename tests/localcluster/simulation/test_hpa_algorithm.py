"""The HPA arithmetic on plain values: per-metric proposals, stabilization, rate policies."""

from __future__ import annotations

from typing import Any

import pytest

from hack.localcluster.simulation import hpa_algorithm as algo

Json = dict[str, Any]
TOL = 0.1


def pod(name: str, phase: str = "Running", ready: bool = True) -> Json:
    return {"metadata": {"name": name}, "status": {
        "phase": phase, "conditions": [{"type": "Ready", "status": str(ready)}]}}


def usage(values: dict[str, int]) -> Any:
    return lambda p: values.get(p["metadata"]["name"])


def util_ratio(target: int, requests: dict[str, int]) -> Any:
    return lambda samples: algo.utilization(samples, requests)[0] / target


def test_utilization_proposal_and_tolerance() -> None:
    requests = {"a": 100, "b": 100}
    group = algo.group_pods([pod("a"), pod("b")], usage({"a": 100, "b": 100}), cpu=True)
    assert algo.pod_metric_replicas(2, group, util_ratio(50, requests), requests.get, TOL) == 4
    # 105 % of a 100 % target is within the 10 % tolerance: no change.
    group = algo.group_pods([pod("a"), pod("b")], usage({"a": 105, "b": 105}), cpu=True)
    assert algo.pod_metric_replicas(2, group, util_ratio(100, requests), requests.get, TOL) == 2


def test_missing_pods_damp_a_scale_down_and_can_cancel_it() -> None:
    requests = {"a": 100, "b": 100, "c": 100}
    # a at 20 % wants 1 pod; b and c have no metrics and count as 100 % on the way down.
    group = algo.group_pods([pod("a"), pod("b"), pod("c")], usage({"a": 20}), cpu=True)
    assert group.missing == {"b", "c"}
    assert algo.pod_metric_replicas(3, group, util_ratio(50, requests), requests.get, TOL) == 3


def test_unready_pods_count_as_idle_on_a_scale_up() -> None:
    requests = {"a": 100, "b": 100}
    group = algo.group_pods([pod("a"), pod("b", ready=False)], usage({"a": 200, "b": 200}),
                            cpu=True)
    assert group.ignored == {"b"}
    # Alone a is at 400 % of 50 % (ratio 4: 4 pods); with b at 0 the average is 200 %
    # (ratio 2 over 2 pods: 4 pods).
    assert algo.pod_metric_replicas(2, group, util_ratio(50, requests), requests.get, TOL) == 4


def test_deleted_failed_and_pending_pods() -> None:
    terminating = pod("t")
    terminating["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    group = algo.group_pods([terminating, pod("f", "Failed"), pod("p", "Pending"), pod("a")],
                            lambda p: 10, cpu=False)
    assert (group.samples, group.ignored, group.missing) == ({"a": 10}, {"p"}, frozenset())
    with pytest.raises(algo.MetricError, match="did not receive metrics"):
        algo.pod_metric_replicas(1, algo.group_pods([], lambda p: 1, cpu=True),
                                 lambda s: 1.0, lambda p: 0, TOL)


def test_external_value_and_average_value() -> None:
    assert algo.external_value_replicas(0, 2500, 1000, None, TOL) == 3  # from zero
    assert algo.external_value_replicas(4, 1050, 1000, 4, TOL) == 4
    assert algo.external_value_replicas(4, 1500, 1000, 3, TOL) == 5  # ready pods, not spec
    with pytest.raises(algo.MetricError, match="no pods"):
        algo.external_value_replicas(2, 3000, 1000, None, TOL)
    assert algo.external_average_replicas(2, 40_000, 5000, TOL) == (8, 20_000)
    assert algo.external_average_replicas(8, 41_000, 5000, TOL) == (8, 5125)
    assert algo.external_average_replicas(0, 1000, 5000, TOL) == (1, 1000)


def rules(direction: str, behavior: Json | None = None, window: float = 300) -> algo.Rules:
    return algo.rules(behavior, direction, window, 1.0)


def test_default_rules() -> None:
    assert rules(algo.SCALE_UP) == algo.Rules(0.0, "Max", (("Percent", 100, 15.0),
                                                          ("Pods", 4, 15.0)))
    assert rules(algo.SCALE_DOWN) == algo.Rules(300.0, "Max", (("Percent", 100, 15.0),))
    assert algo.rules({"scaleDown": {"stabilizationWindowSeconds": 30}}, algo.SCALE_DOWN,
                      300, 0.1).stabilization == pytest.approx(3.0)


def test_scale_down_is_stabilized_over_the_window() -> None:
    history = algo.History(recommendations=[(6, 0.0)])
    up, down = rules(algo.SCALE_UP), rules(algo.SCALE_DOWN, window=60)
    out = algo.normalize_with_behavior(history, 10.0, 6, 2, 1, 10, up, down)
    assert out.replicas == 6 and out.able[0] == "ScaleDownStabilized"
    # Once the high recommendation is older than the window, the low one wins.
    out = algo.normalize_with_behavior(history, 65.0, 6, 2, 1, 10, up, down)
    assert out.replicas == 2 and out.able[0] == "ReadyForNewScale"


def test_scale_up_rate_policies() -> None:
    history = algo.History()
    pods_per_minute = rules(algo.SCALE_UP, {"scaleUp": {"policies": [
        {"type": "Pods", "value": 2, "periodSeconds": 60}]}})
    down = rules(algo.SCALE_DOWN)
    out = algo.normalize_with_behavior(history, 0.0, 2, 10, 1, 20, pods_per_minute, down)
    assert out.replicas == 4 and out.limited == (
        True, "ScaleUpLimit",
        "the desired replica count is increasing faster than the maximum scale rate")
    history.record_scale(2, 4, 0.0, 60)
    # Within the same minute the two pods added already use the budget.
    assert algo.normalize_with_behavior(history, 30.0, 4, 10, 1, 20, pods_per_minute,
                                        down).replicas == 4
    assert algo.normalize_with_behavior(history, 61.0, 4, 10, 1, 20, pods_per_minute,
                                        down).replicas == 6
    disabled = rules(algo.SCALE_UP, {"scaleUp": {"selectPolicy": "Disabled"}})
    assert algo.normalize_with_behavior(algo.History(), 0.0, 2, 10, 1, 20, disabled,
                                        down).replicas == 2


def test_min_select_policy_and_bounds() -> None:
    both = {"scaleDown": {"stabilizationWindowSeconds": 0, "selectPolicy": "Min", "policies": [
        {"type": "Pods", "value": 1, "periodSeconds": 60},
        {"type": "Percent", "value": 50, "periodSeconds": 60}]}}
    out = algo.normalize_with_behavior(algo.History(), 0.0, 10, 1, 1, 20,
                                       rules(algo.SCALE_UP), rules(algo.SCALE_DOWN, both))
    assert out.replicas == 9  # the smaller change of "1 pod" and "half"
    out = algo.normalize_with_behavior(algo.History(), 0.0, 3, 1, 2, 20, rules(algo.SCALE_UP),
                                       rules(algo.SCALE_DOWN, {"scaleDown": {
                                           "stabilizationWindowSeconds": 0}}))
    assert out.replicas == 2 and out.limited[1] == "TooFewReplicas"


def test_legacy_normalization_without_behavior() -> None:
    history = algo.History()
    out = algo.normalize_legacy(history, 0.0, 1, 10, 1, 20, 300)
    assert out.replicas == 4 and out.limited[1] == "ScaleUpLimit"  # max(2 x 1, 4)
    out = algo.normalize_legacy(history, 1.0, 4, 1, 1, 20, 300)
    # The earlier recommendation of 10 holds the scale-down; the rate limit allows 8.
    assert out.replicas == 8 and out.able[0] == "ScaleDownStabilized"
