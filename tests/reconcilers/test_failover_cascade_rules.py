"""Which pods the failover cascade controller acts on, and the group it deletes (pure rules;
the deletion itself runs end to end in e2e/test_gpu_memory_service_inter_pod.py)."""

from __future__ import annotations

from typing import Any

from reconcilers.failover_cascade.reconciler import became_terminal, ended, group_of

Json = dict[str, Any]
GROVE = {"grove.io/podcliquescalinggroup": "g-0-worker",
         "grove.io/podcliquescalinggroup-replica-index": "0",
         "grove.io/podclique-pod-index": "1"}


def pod(phase: str, *, member: bool = True, deleting: bool = False,
        labels: dict[str, str] | None = None) -> Json:
    meta: Json = {"name": "p", "labels": {**GROVE, **(labels or {})}}
    if member:
        meta["labels"]["nvidia.com/dynamo-failover-engine-group-member"] = "true"
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {"metadata": meta, "status": {"phase": phase}}


def test_only_failover_engines_in_a_terminal_phase_have_ended() -> None:
    assert ended(pod("Failed")) and ended(pod("Succeeded"))
    assert not ended(pod("Running"))
    assert not ended(pod("Failed", member=False))
    assert not ended(pod("Failed", deleting=True))


def test_an_update_wakes_the_controller_only_on_the_way_to_the_end() -> None:
    assert became_terminal(pod("Running"), pod("Failed"))
    assert not became_terminal(pod("Failed"), pod("Failed"))  # a later metadata write
    assert not became_terminal(pod("Running"), pod("Running"))


def test_the_group_is_the_same_pod_index_of_the_same_group_replica() -> None:
    assert group_of(pod("Failed")) == {
        "nvidia.com/dynamo-failover-engine-group-member": "true", **GROVE}
    assert group_of(pod("Failed", labels={"grove.io/podclique-pod-index": ""})) is None
