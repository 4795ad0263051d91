"""A multinode DCD that an older operator laid out as one LeaderWorkerSet per replica (the
legacy layout) keeps it through an operator upgrade and through scaling and budget changes,
restarting no pod, and moves to the one native LeaderWorkerSet `<dcd>-0` at its first template
change: `<dcd>-0` takes every replica, the other indexed LeaderWorkerSets and the legacy
PodGroups are deleted. On the simulated cluster, over HTTP.

The older operator is played by the child writer applying the legacy rendering (what the
operator before the native layout wrote: the upgrade differential test holds the legacy
rendering to it byte for byte).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from operator_harness import (
    CRDS,
    DCD_CRD,
    condition,
    eventually,
    get_or_none,
    install_crds,
    running_operator,
    setup_client,
    wait_for,
)

from backends.leader_worker_set import LwsLayout
from backends.settings import OperatorSettings
from controller.client import KubeClient
from controller.resource import Resource
from hack.localcluster.server import LocalCluster
from hack.our_crds import COMPONENT_DEPLOYMENTS
from reconcilers.component import reconciler as component_deployment
from reconcilers.component.children import ClusterInputs, desired_children
from reconcilers.machinery.resources import COMPONENT_DEPLOYMENTS as HUB_DCDS
from reconcilers.machinery.resources import LEADER_WORKER_SETS, PODS, VOLCANO_POD_GROUPS
from reconcilers.machinery.spec_views import component_of

Json = dict[str, Any]
NS = "default"
ROOT = Path(__file__).resolve().parents[2]
LWS_CRD = ROOT / "hack" / "crds" / "leaderworkerset.yaml"
IMAGE = "nvcr.io/x/worker:1"
#: Volcano's PodGroup as far as these tests need it (the local cluster has no Volcano).
POD_GROUP_CRD: Json = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "podgroups.scheduling.volcano.sh"},
    "spec": {"group": "scheduling.volcano.sh", "scope": "Namespaced",
             "names": {"plural": "podgroups", "singular": "podgroup", "kind": "PodGroup",
                       "listKind": "PodGroupList"},
             "versions": [{"name": "v1beta1", "served": True, "storage": True,
                           "schema": {"openAPIV3Schema": {
                               "type": "object", "x-kubernetes-preserve-unknown-fields": True}},
                           "subresources": {"status": {}}}]}}


def dcd(name: str, replicas: int) -> Json:
    return {
        "apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoComponentDeployment",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"componentType": "worker", "replicas": replicas,
                 "multinode": {"nodeCount": 2}, "resources": {"limits": {"gpu": "1"}},
                 "extraPodSpec": {"mainContainer": {"image": IMAGE, "command": ["python3"],
                                                    "args": ["-m", "dynamo.vllm"]}}},
    }


@pytest.fixture
def sim_kubeconfig(sim_cluster: LocalCluster, tmp_path: Path) -> Path:
    return tmp_path / "sim" / "kubeconfig"


@pytest.fixture
async def kube(sim_kubeconfig: Path) -> AsyncIterator[KubeClient]:
    client = await setup_client(sim_kubeconfig)
    await install_crds(client, DCD_CRD)
    await client.create(CRDS, yaml.safe_load(LWS_CRD.read_text()))
    try:
        yield client
    finally:
        await client.close()


async def _served(kube: KubeClient, resource: Resource) -> None:
    async def served() -> bool:
        try:
            await kube.list(resource, NS)
        except Exception:
            return False
        return True

    await eventually(served)


async def _older_operator_writes_the_legacy_layout(sim_kubeconfig: Path, kube: KubeClient,
                                                   name: str,
                                                   settings: OperatorSettings) -> None:
    """The DCD's children as the operator before the native layout applied them."""
    async with running_operator(sim_kubeconfig, [], settings) as op:
        live = await kube.get(HUB_DCDS, NS, name)
        desired = desired_children(settings, component_of(live), ClusterInputs({}, "default"),
                                   lws_layout=LwsLayout.LEGACY)
        synced = await op.ctx.children("older-operator").sync(live, desired)
        assert not synced.not_owned and not synced.missing


async def _pods(kube: KubeClient, name: str) -> dict[str, str]:
    """name -> uid of the DCD's pods that are not terminating."""
    pods = (await kube.list(PODS, NS))["items"]
    return {p["metadata"]["name"]: p["metadata"]["uid"] for p in pods
            if p["metadata"]["name"].startswith(f"{name}-")
            and not p["metadata"].get("deletionTimestamp")}


async def _generations(kube: KubeClient, names: list[str]) -> dict[str, int]:
    return {n: (await kube.get(LEADER_WORKER_SETS, NS, n))["metadata"]["generation"]
            for n in names}


def _available(message: str, ready: int | None = None) -> Any:
    def check(obj: Json) -> bool:
        c = condition(obj, "Available")
        service = (obj.get("status") or {}).get("service") or {}
        return (c.get("status") == "True" and c.get("message") == message
                and (ready is None or service.get("readyReplicas") == ready))
    return check


async def test_the_legacy_layout_is_kept_until_the_templates_change(
        kube: KubeClient, sim_kubeconfig: Path) -> None:
    await _served(kube, LEADER_WORKER_SETS)
    settings = OperatorSettings(lws_enabled=True, volcano_enabled=False)
    await kube.create(COMPONENT_DEPLOYMENTS, dcd("mn", 2))
    await _older_operator_writes_the_legacy_layout(sim_kubeconfig, kube, "mn", settings)

    async def groups_ready() -> bool:
        sets = [await get_or_none(kube, LEADER_WORKER_SETS, NS, f"mn-{i}") for i in range(2)]
        return all(s is not None and (s.get("status") or {}).get("readyReplicas") == 1
                   for s in sets)

    await eventually(groups_ready, within=20)
    pods = await _pods(kube, "mn")
    assert len(pods) == 4
    generations = await _generations(kube, ["mn-0", "mn-1"])

    async with running_operator(sim_kubeconfig, [component_deployment.register], settings):
        # The upgrade: the DCD is reconciled, its legacy LeaderWorkerSets are left alone.
        obj = await wait_for(kube, COMPONENT_DEPLOYMENTS, NS, "mn",
                             _available("LeaderWorkerSets are ready", 2), within=20)
        assert condition(obj, "Available")["reason"] == "LeaderWorkerSetReady"
        await asyncio.sleep(1)
        assert await _generations(kube, ["mn-0", "mn-1"]) == generations
        assert await _pods(kube, "mn") == pods

        # Scaling keeps the layout: one more indexed LeaderWorkerSet, nothing restarted.
        await kube.patch(COMPONENT_DEPLOYMENTS, NS, "mn", {"spec": {"replicas": 3}})
        third = await wait_for(kube, LEADER_WORKER_SETS, NS, "mn-2")
        assert third["metadata"]["labels"]["instance-id"] == "2"
        assert third["spec"]["replicas"] == 1
        await wait_for(kube, COMPONENT_DEPLOYMENTS, NS, "mn",
                       _available("LeaderWorkerSets are ready", 3), within=20)
        assert await _generations(kube, ["mn-0", "mn-1"]) == generations
        now = await _pods(kube, "mn")
        assert {k: v for k, v in now.items() if k in pods} == pods and len(now) == 6
        pods = now

        # Rollout budgets alone restart nothing either: the layout stays, budgets in place.
        await kube.patch(COMPONENT_DEPLOYMENTS, NS, "mn", {"spec": {"annotations": {
            "nvidia.com/deployment-rolling-update-max-unavailable": "1"}}})

        async def budgets_written() -> bool:
            sets = [await kube.get(LEADER_WORKER_SETS, NS, f"mn-{i}") for i in range(3)]
            return all(((s["spec"].get("rolloutStrategy") or {}).get(
                "rollingUpdateConfiguration") or {}).get("maxUnavailable") == 1 for s in sets)

        await eventually(budgets_written)
        await asyncio.sleep(1)
        assert await _pods(kube, "mn") == pods

        # The first template change moves the DCD to the native layout.
        await kube.patch(COMPONENT_DEPLOYMENTS, NS, "mn", {"spec": {"extraPodSpec": {
            "mainContainer": {"image": "nvcr.io/x/worker:2"}}}})

        async def native() -> bool:
            rest = [await get_or_none(kube, LEADER_WORKER_SETS, NS, f"mn-{i}") for i in (1, 2)]
            first = await kube.get(LEADER_WORKER_SETS, NS, "mn-0")
            return rest == [None, None] and first["spec"]["replicas"] == 3

        await eventually(native)
        lws = await kube.get(LEADER_WORKER_SETS, NS, "mn-0")
        assert "instance-id" not in lws["metadata"]["labels"]
        for role in ("leaderTemplate", "workerTemplate"):
            template = lws["spec"]["leaderWorkerTemplate"][role]
            assert "instance-id" not in template["metadata"]["labels"]
        obj = await wait_for(kube, COMPONENT_DEPLOYMENTS, NS, "mn",
                             _available("LeaderWorkerSet is ready", 3), within=30)
        assert obj["status"]["service"]["componentNames"] == ["mn-0"]
        images = {p["spec"]["containers"][0]["image"] for p in (await kube.list(PODS, NS))["items"]
                  if p["metadata"]["name"].startswith("mn-")
                  and not p["metadata"].get("deletionTimestamp")}
        assert images == {"nvcr.io/x/worker:2"}


async def test_legacy_pod_groups_stay_until_the_move_to_the_native_layout(
        kube: KubeClient, sim_kubeconfig: Path) -> None:
    await kube.create(CRDS, POD_GROUP_CRD)
    await _served(kube, LEADER_WORKER_SETS)
    await _served(kube, VOLCANO_POD_GROUPS)
    settings = OperatorSettings(lws_enabled=True, volcano_enabled=True)
    await kube.create(COMPONENT_DEPLOYMENTS, dcd("vg", 2))
    await _older_operator_writes_the_legacy_layout(sim_kubeconfig, kube, "vg", settings)
    groups = sorted(g["metadata"]["name"] for g in (await kube.list(VOLCANO_POD_GROUPS, NS))[
        "items"])
    assert groups == ["vg-0", "vg-1"]
    generations = await _generations(kube, ["vg-0", "vg-1"])

    async with running_operator(sim_kubeconfig, [component_deployment.register], settings):
        def reconciled(obj: Json) -> bool:
            status = obj.get("status") or {}
            return (status.get("observedGeneration") == obj["metadata"]["generation"]
                    and bool(condition(obj, "Available")))

        # (Its pods wait for a Volcano scheduler the local cluster does not have.)
        obj = await wait_for(kube, COMPONENT_DEPLOYMENTS, NS, "vg", reconciled)
        assert condition(obj, "Available")["reason"] == "LeaderWorkerSetNotReady"
        await asyncio.sleep(1)
        assert await _generations(kube, ["vg-0", "vg-1"]) == generations
        assert sorted(g["metadata"]["name"] for g in (await kube.list(
            VOLCANO_POD_GROUPS, NS))["items"]) == groups

        await kube.patch(COMPONENT_DEPLOYMENTS, NS, "vg", {"spec": {"extraPodSpec": {
            "mainContainer": {"image": "nvcr.io/x/worker:2"}}}})

        async def native() -> bool:
            left = [g for g in (await kube.list(VOLCANO_POD_GROUPS, NS))["items"]
                    if not g["metadata"].get("deletionTimestamp")]
            rest = await get_or_none(kube, LEADER_WORKER_SETS, NS, "vg-1")
            first = await kube.get(LEADER_WORKER_SETS, NS, "vg-0")
            return not left and rest is None and first["spec"]["replicas"] == 2

        await eventually(native)
        lws = await kube.get(LEADER_WORKER_SETS, NS, "vg-0")
        leader = lws["spec"]["leaderWorkerTemplate"]["leaderTemplate"]
        assert leader["spec"]["schedulerName"] == "volcano"
        assert "scheduling.k8s.io/group-name" not in (leader["metadata"].get("annotations")
                                                      or {})


async def test_a_new_multinode_dcd_gets_the_native_layout(
        kube: KubeClient, sim_kubeconfig: Path) -> None:
    await _served(kube, LEADER_WORKER_SETS)
    settings = OperatorSettings(lws_enabled=True, volcano_enabled=False)
    async with running_operator(sim_kubeconfig, [component_deployment.register], settings):
        await kube.create(COMPONENT_DEPLOYMENTS, dcd("fresh", 2))
        await wait_for(kube, COMPONENT_DEPLOYMENTS, NS, "fresh",
                       _available("LeaderWorkerSet is ready", 2), within=20)
        sets = [s["metadata"]["name"] for s in (await kube.list(LEADER_WORKER_SETS, NS))["items"]]
        assert sets == ["fresh-0"]
