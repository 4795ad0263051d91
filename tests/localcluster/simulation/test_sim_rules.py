"""The pure rules under the simulation: fitting pods to nodes and rollout arithmetic."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from hack.localcluster.simulation.fit import misfit_reasons, pod_requests, unschedulable_message
from hack.localcluster.simulation.objects import int_or_percent
from hack.localcluster.simulation.rollout import (
    fenceposts,
    new_rs_replicas,
    old_scale_down,
    template_hash,
)

Json = dict[str, Any]


def test_requests_take_limits_and_init_containers() -> None:
    pod = {"spec": {"containers": [
        {"resources": {"limits": {"nvidia.com/gpu": "2", "cpu": "1"},
                       "requests": {"cpu": "500m"}}},
        {"resources": {"requests": {"memory": "1Gi"}}}],
        "initContainers": [{"resources": {"requests": {"cpu": "4"}}}]}}
    assert pod_requests(pod) == {"nvidia.com/gpu": Fraction(2), "cpu": Fraction(4),
                                 "memory": Fraction(1024 ** 3)}


def test_misfit_reasons_and_message() -> None:
    node = {"metadata": {"labels": {"pool": "a"}}, "spec": {},
            "status": {"allocatable": {"cpu": "4", "nvidia.com/gpu": "8", "pods": "110"}}}
    pod = {"spec": {"containers": [{"resources": {"limits": {"nvidia.com/gpu": "4",
                                                             "cpu": "2"}}}]}}
    assert misfit_reasons(pod, node, {}, 0) == []
    used = {"nvidia.com/gpu": Fraction(6), "cpu": Fraction(3)}
    assert misfit_reasons(pod, node, used, 2) == ["Insufficient cpu", "Insufficient nvidia.com/gpu"]
    message = unschedulable_message(3, [["Insufficient nvidia.com/gpu"],
                                        ["Insufficient nvidia.com/gpu"],
                                        ["node(s) didn't match Pod's node affinity/selector"]])
    assert message == (
        "0/3 nodes are available: 2 Insufficient nvidia.com/gpu, 1 node(s) didn't match Pod's"
        " node affinity/selector. preemption: 0/3 nodes are available: 2 No preemption victims"
        " found for incoming pod, 1 Preemption is not helpful for scheduling.")


def test_template_hash_is_label_safe_and_stable() -> None:
    a = template_hash({"spec": {"containers": [{"image": "x"}]}})
    assert a == template_hash({"spec": {"containers": [{"image": "x"}]}})
    assert a != template_hash({"spec": {"containers": [{"image": "y"}]}})
    assert len(a) <= 10 and set(a) <= set("bcdfghjklmnpqrstvwxz2456789")


def deploy(replicas: int, surge: Any = "25%", unavailable: Any = "25%") -> Json:
    return {"spec": {"replicas": replicas, "strategy": {"type": "RollingUpdate", "rollingUpdate": {
        "maxSurge": surge, "maxUnavailable": unavailable}}}, "metadata": {"generation": 1}}


def rs(name: str, replicas: int, available: int, created: str = "2026-01-01T00:00:00Z") -> Json:
    return {"metadata": {"name": name, "creationTimestamp": created},
            "spec": {"replicas": replicas}, "status": {"availableReplicas": available}}


def test_fenceposts() -> None:
    assert fenceposts(deploy(10)) == (3, 2)  # surge rounds up, unavailable down
    assert fenceposts(deploy(1, 0, 0)) == (0, 1)
    assert int_or_percent("50%", 3, round_up=True) == 2


def test_one_rolling_step() -> None:
    d = deploy(4, surge=1, unavailable=0)
    old, new = rs("old", 4, 4), rs("new", 0, 0, "2026-01-02T00:00:00Z")
    assert new_rs_replicas(d, [old, new], new) == 1  # one above 4 allowed
    new = rs("new", 1, 0, "2026-01-02T00:00:00Z")
    assert old_scale_down(d, [old, new], new, [old]) == {}  # nothing until the new one is up
    new = rs("new", 1, 1, "2026-01-02T00:00:00Z")
    assert old_scale_down(d, [old, new], new, [old]) == {"old": 3}
    # Unavailable old replicas go first, at no cost to availability, within what the total
    # pod count allows (5 pods - 3 that must stay available - 1 new one not yet available).
    old = rs("old", 4, 2)
    assert old_scale_down(deploy(4, 1, 1), [old, rs("n", 1, 0)], rs("n", 1, 0), [old]) == \
        {"old": 3}
