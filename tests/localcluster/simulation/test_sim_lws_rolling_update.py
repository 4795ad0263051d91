"""The LeaderWorkerSet controller's rolling update, as kubernetes-sigs/lws rolls groups: the
leader StatefulSet's partition and replicas step by step (`lws_rollout`, pure), and a
rollout sampled every 50 ms on the simulated cluster under LWS's default budgets and under
maxSurge 1 / maxUnavailable 0."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest
from kubernetes_asyncio import client
from simulation_support import eventually, install_crds, pod_template, status_condition

from hack.localcluster.simulation.lws_rollout import (
    Budgets,
    GroupState,
    Leaders,
    budgets,
    rolling_update_parameters,
    status_counts,
)

NS = "default"
GROUP, VERSION, PLURAL = "leaderworkerset.x-k8s.io", "v1", "leaderworkersets"
MERGE = "application/merge-patch+json"
Json = dict[str, Any]
OLD, NEW, DOWN_NEW = GroupState(True, False), GroupState(True, True), GroupState(False, True)
DOWN_OLD = GroupState(False, False)


def test_budgets_scale_as_lws_does() -> None:
    assert budgets({}, 4) == Budgets(0, 1, 0)
    assert budgets({"maxSurge": "25%", "maxUnavailable": "25%"}, 3) == Budgets(1, 0, 0)
    assert budgets({"maxSurge": 9, "maxUnavailable": 0, "partition": 2}, 3) == Budgets(3, 0, 2)
    assert Budgets(0, 0, 0).statefulset_max_unavailable == 1


def _step(states: list[GroupState], partition: int, b: Budgets, replicas: int = 3
          ) -> tuple[int, int]:
    return rolling_update_parameters(replicas=replicas, b=b, sts_replicas=len(states),
                                     sts_partition=partition, states=states,
                                     original_replicas=replicas, updated=False)


def test_default_budgets_replace_one_group_at_a_time_from_the_top() -> None:
    b = Budgets(0, 1, 0)
    # A new template: the partition starts at the replicas, nothing bursts.
    assert rolling_update_parameters(replicas=3, b=b, sts_replicas=3, sts_partition=0,
                                     states=[OLD] * 3, original_replicas=3,
                                     updated=True) == (3, 3)
    assert _step([OLD, OLD, OLD], 3, b) == (2, 3)
    assert _step([OLD, OLD, DOWN_NEW], 2, b) == (2, 3)  # waits for group 2
    assert _step([OLD, OLD, NEW], 2, b) == (1, 3)
    assert _step([OLD, NEW, NEW], 1, b) == (0, 3)
    assert _step([NEW, NEW, NEW], 0, b) == (0, 3)


def test_a_surge_group_comes_first_and_goes_last() -> None:
    b = Budgets(1, 0, 0)
    assert rolling_update_parameters(replicas=3, b=b, sts_replicas=3, sts_partition=0,
                                     states=[OLD] * 3, original_replicas=3,
                                     updated=True) == (3, 4)
    # The surge group (index 3) not ready yet: nothing of the desired groups goes down.
    assert _step([OLD, OLD, OLD, DOWN_NEW], 3, b) == (3, 4)
    assert _step([OLD, OLD, OLD, NEW], 3, b) == (2, 4)
    assert _step([OLD, OLD, NEW, NEW], 2, b) == (1, 4)
    assert _step([OLD, NEW, NEW, NEW], 1, b) == (0, 4)
    # One desired group left to come up: the surge group stays until it is.
    assert _step([DOWN_NEW, NEW, NEW, NEW], 0, b) == (0, 4)
    assert _step([NEW, NEW, NEW, NEW], 0, b) == (0, 3)


def test_a_group_down_below_the_partition_spends_the_unavailable_budget() -> None:
    b = Budgets(0, 1, 0)
    assert _step([DOWN_OLD, OLD, NEW], 2, b) == (2, 3)  # group 0 is the one unavailable
    assert _step([OLD, DOWN_OLD, NEW], 2, b) == (1, 3)  # the next one is down anyway


def test_lws_partition_holds_a_canary() -> None:
    b = Budgets(0, 1, 2)
    assert _step([OLD, OLD, NEW], 2, b) == (2, 3)


def test_status_counts_burst_groups_and_sets_lws_conditions() -> None:
    rolling = [Leaders(0, True, False), Leaders(1, True, True), Leaders(2, True, True),
               Leaders(3, False, True)]
    counts = status_counts(rolling, 3, 0)
    assert (counts.ready, counts.updated) == (3, 3)
    assert counts.conditions == ("UpdateInProgress", "Progressing")
    done = [Leaders(0, True, True), Leaders(1, True, True), Leaders(2, True, True),
            Leaders(3, False, True)]
    assert status_counts(done, 3, 0).conditions == ("Available",)
    assert status_counts(done[:2], 3, 0).conditions == ("Progressing",)


# --- on the simulated cluster -------------------------------------------------------------
def _lws(name: str, replicas: int, image: str, rolling: Json | None = None) -> Json:
    slow = {"localcluster.dev/ready-after": "1"}
    spec: Json = {"replicas": replicas, "leaderWorkerTemplate": {
        "size": 2,
        "leaderTemplate": pod_template({"role": "leader"}, image=image, annotations=slow),
        "workerTemplate": pod_template({"role": "worker"}, image=image, gpus=1,
                                       annotations=slow)}}
    if rolling is not None:
        spec["rolloutStrategy"] = {"type": "RollingUpdate", "rollingUpdateConfiguration": rolling}
    return {"apiVersion": f"{GROUP}/{VERSION}", "kind": "LeaderWorkerSet",
            "metadata": {"name": name}, "spec": spec}


def _ready_groups(pods: list[Any]) -> tuple[int, int, set[str]]:
    """(ready groups, groups, images): a group is ready when both its pods, not terminating,
    are."""
    groups: dict[str, list[Any]] = {}
    for pod in pods:
        if pod.metadata.deletion_timestamp is None:
            key = pod.metadata.labels["leaderworkerset.sigs.k8s.io/group-index"]
            groups.setdefault(key, []).append(pod)

    def ready(pod: Any) -> bool:
        return any(c.type == "Ready" and c.status == "True"
                   for c in (pod.status.conditions or []))

    whole = [m for m in groups.values() if len(m) == 2]
    images = {p.spec.containers[0].image for p in pods if p.metadata.deletion_timestamp is None}
    return sum(1 for m in whole if all(ready(p) for p in m)), len(groups), images


@contextlib.asynccontextmanager
async def _sampled(core: client.CoreV1Api, name: str) -> AsyncIterator[list[tuple[int, int]]]:
    samples: list[tuple[int, int]] = []

    async def sample() -> None:
        while True:
            pods = (await core.list_namespaced_pod(
                NS, label_selector=f"leaderworkerset.sigs.k8s.io/name={name}")).items
            ready, groups, _ = _ready_groups(pods)
            samples.append((ready, groups))
            await asyncio.sleep(0.05)

    task = asyncio.create_task(sample())
    try:
        yield samples
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def _done(custom: client.CustomObjectsApi, core: client.CoreV1Api, name: str,
                replicas: int, image: str) -> Json | None:
    obj: Json = await custom.get_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, name)
    status = obj.get("status") or {}
    available = status_condition(obj, "Available") or {}
    pods = (await core.list_namespaced_pod(
        NS, label_selector=f"leaderworkerset.sigs.k8s.io/name={name}")).items
    ready, groups, images = _ready_groups(pods)
    if (available.get("status") == "True" and status.get("updatedReplicas") == replicas
            and status.get("replicas") == replicas and ready == groups == replicas
            and images == {image}):
        return obj
    return None


@pytest.mark.parametrize(("rolling", "floor", "ceiling"), [
    (None, 2, 3),  # LWS's default: one group down at a time, no surge
    ({"maxSurge": 1, "maxUnavailable": 0}, 3, 4),
], ids=["default", "surge"])
async def test_an_image_change_keeps_the_budgets(
        sim_api: client.ApiClient, custom: client.CustomObjectsApi, core: client.CoreV1Api,
        rolling: Json | None, floor: int, ceiling: int) -> None:
    await install_crds(sim_api, "leaderworkerset.yaml")
    await custom.create_namespaced_custom_object(GROUP, VERSION, NS, PLURAL,
                                                 _lws("r", 3, "vllm:1", rolling))
    await eventually(lambda: _done(custom, core, "r", 3, "vllm:1"), within=30)
    async with _sampled(core, "r") as samples:
        body = _lws("r", 3, "vllm:2", rolling)
        await custom.patch_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "r",
                                                    {"spec": body["spec"]},
                                                    _content_type=MERGE)
        obj = await eventually(lambda: _done(custom, core, "r", 3, "vllm:2"), within=60)
    assert len(samples) > 20, samples
    assert min(ready for ready, _ in samples) >= floor, samples
    assert max(groups for _, groups in samples) <= ceiling, samples
    assert any(ready < 3 or groups > 3 for ready, groups in samples), samples  # it rolled
    if rolling is not None:
        assert max(groups for _, groups in samples) == 4, samples  # the surge group ran
    assert (status_condition(obj, "UpdateInProgress") or {}).get("status") == "False"
