"""The scaling adapter controller against the local API server: kubectl scale, hand edits of
the graph, scale to zero, multinode limits, missing targets, and an HPA driving an adapter."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from scaling_support import (
    ADAPTERS,
    GRAPHS,
    NS,
    OPERATOR_AGENT,
    adapter,
    client_for,
    events_of,
    eventually,
    graph,
    graph_replicas,
    install_crds,
    ready_condition,
    running_operator,
    service,
)

from controller.client import KubeClient
from controller.manager import Manager
from controller.resource import Resource
from hack.localcluster.server import LocalCluster
from hack.localcluster.simulation import HpaSettings, SimulationConfig
from hack.localcluster.testing import Kubectl
from hack.our_crds import GRAPH_DEPLOYMENTS
from reconcilers.machinery.resources import GRAPH_DEPLOYMENTS as HUB_GRAPHS
from reconcilers.machinery.resources import SCALING_ADAPTERS

Json = dict[str, object]
HPAS = Resource("autoscaling", "v2", "horizontalpodautoscalers", "HorizontalPodAutoscaler")
GRAPH_RESOURCE = "dynamographdeployments.nvidia.com"
#: kubectl's name of the adapters in v1alpha1 (a short name reads v1beta1, through a
#: conversion webhook these tests do not run).
ADAPTERS_V1ALPHA1 = "dynamographdeploymentscalingadapters.v1alpha1.nvidia.com"


@pytest.fixture
async def kube(cluster: LocalCluster, kubeconfig: Path) -> AsyncIterator[KubeClient]:
    client = await client_for(kubeconfig)
    await install_crds(client, GRAPHS, ADAPTERS)
    try:
        yield client
    finally:
        await client.close()


@pytest.fixture
async def operator(kube: KubeClient, kubeconfig: Path) -> AsyncIterator[Manager]:
    async with running_operator(kubeconfig) as mgr:
        yield mgr


def reconciles(mgr: Manager) -> float:
    """Reconciles the adapter controller finished so far, whatever their result."""
    return sum(mgr.metrics.registry.get_sample_value(
        "controller_runtime_reconcile_total",
        {"controller": SCALING_ADAPTERS.kind, "result": result}) or 0
        for result in ("success", "error", "requeue", "requeue_after"))


async def applied(kube: KubeClient, name: str, replicas: int) -> Json | None:
    """The adapter once its status says `replicas` were applied and it is Ready."""
    obj = await kube.get(SCALING_ADAPTERS, NS, name)
    status = obj.get("status") or {}
    ready = ready_condition(obj)
    if status.get("replicas") == replicas and ready is not None and ready["status"] == "True":
        return obj
    return None


def operator_writes(cluster: LocalCluster, resource: str | None = None) -> int:
    return cluster.stats.writes(user_agent=OPERATOR_AGENT, resource=resource)


async def idle_writes(cluster: LocalCluster, seconds: float = 0.5) -> int:
    """Writes the operator makes while nothing changes."""
    before = operator_writes(cluster)
    await asyncio.sleep(seconds)
    return operator_writes(cluster) - before


@pytest.mark.kubectl
async def test_kubectl_scale_changes_the_graph_once(cluster: LocalCluster, kube: KubeClient,
                                                    kubectl: Kubectl, operator: Manager) -> None:
    await kube.create(GRAPH_DEPLOYMENTS, graph("g", {"decode": service(2)}))
    await kube.create(SCALING_ADAPTERS, adapter("g", "decode", 2))
    first = await eventually(lambda: applied(kube, "g-decode", 2))
    assert first["status"]["selector"] == (  # type: ignore[index]
        "nvidia.com/dynamo-graph-deployment-name=g,nvidia.com/dynamo-component=decode")
    assert await events_of(kube, "g-decode") == []  # a fresh adapter is no hand edit
    assert operator_writes(cluster, GRAPH_RESOURCE) == 0

    await kubectl("scale", f"{ADAPTERS_V1ALPHA1}/g-decode", "--replicas=3")
    await eventually(lambda: applied(kube, "g-decode", 3))
    assert await graph_replicas(kube, "g", "decode") == 3
    assert operator_writes(cluster, GRAPH_RESOURCE) == 1
    [scaled] = await events_of(kube, "g-decode", "Scaled")
    assert scaled["message"] == "Scaled service decode from 2 to 3 replicas"
    assert await events_of(kube, "g-decode", "Synced") == []  # our own write is no hand edit

    wide = (await kubectl("get", ADAPTERS_V1ALPHA1, "-o", "wide")).splitlines()
    assert wide[0].split() == ["NAME", "DGD", "SERVICE", "REPLICAS", "AGE", "DESIRED",
                               "LAST-SCALED", "READY"]
    row = wide[1].split()
    assert row[:4] == ["g-decode", "g", "decode", "3"] and row[5] == "3" and row[-1] == "True"
    assert await idle_writes(cluster) == 0


async def test_hand_edit_of_the_graph_is_adopted_once(cluster: LocalCluster, kube: KubeClient,
                                                      operator: Manager) -> None:
    await kube.create(GRAPH_DEPLOYMENTS, graph("g", {"decode": service(2)}))
    await kube.create(SCALING_ADAPTERS, adapter("g", "decode", 2))
    await eventually(lambda: applied(kube, "g-decode", 2))

    await kube.patch(GRAPH_DEPLOYMENTS, NS, "g", {"spec": {"services": {"decode": {
        "replicas": 5}}}})
    adopted = await eventually(lambda: applied(kube, "g-decode", 5))
    assert adopted["spec"]["replicas"] == 5  # type: ignore[index]
    [synced] = await events_of(kube, "g-decode", "Synced")
    assert synced["message"] == "Synced adapter from DGD manual edit: replicas=5"
    assert await idle_writes(cluster) == 0
    # Adopted, not fought: the graph keeps the hand-set value and was never written back.
    assert await graph_replicas(kube, "g", "decode") == 5
    assert operator_writes(cluster, GRAPH_RESOURCE) == 0
    assert len(await events_of(kube, "g-decode", "Synced")) == 1


@pytest.mark.kubectl
async def test_scale_to_zero_and_back(kube: KubeClient, kubectl: Kubectl,
                                      operator: Manager) -> None:
    await kube.create(GRAPH_DEPLOYMENTS, graph("g", {"decode": service(2)}))
    await kube.create(SCALING_ADAPTERS, adapter("g", "decode", 2))
    await eventually(lambda: applied(kube, "g-decode", 2))
    await kubectl("scale", f"{ADAPTERS_V1ALPHA1}/g-decode", "--replicas=0")
    await eventually(lambda: applied(kube, "g-decode", 0))
    assert await graph_replicas(kube, "g", "decode") == 0
    await kubectl("scale", f"{ADAPTERS_V1ALPHA1}/g-decode", "--replicas=2")
    await eventually(lambda: applied(kube, "g-decode", 2))
    assert await graph_replicas(kube, "g", "decode") == 2


async def test_multinode_service_keeps_one_replica(kube: KubeClient,
                                                   operator: Manager) -> None:
    multinode = service(2, multinode={"nodeCount": 2})
    await kube.create(GRAPH_DEPLOYMENTS, graph("g", {"prefill": multinode}))
    await kube.create(SCALING_ADAPTERS, adapter("g", "prefill", 2))
    await eventually(lambda: applied(kube, "g-prefill", 2))

    await kube.patch(SCALING_ADAPTERS, NS, "g-prefill", {"spec": {"replicas": 0}},
                     subresource="scale")

    async def refused() -> Json | None:
        obj = await kube.get(SCALING_ADAPTERS, NS, "g-prefill")
        ready = ready_condition(obj)
        return obj if ready and ready["reason"] == "ScaleToZeroUnsupported" else None
    obj = await eventually(refused)
    assert obj["status"]["replicas"] == 1  # type: ignore[index]
    assert ready_condition(obj)["status"] == "False"  # type: ignore[index]
    assert await graph_replicas(kube, "g", "prefill") == 1
    await eventually(lambda: events_of(kube, "g-prefill", "ScaleToZeroUnsupported"))

    await kube.patch(SCALING_ADAPTERS, NS, "g-prefill", {"spec": {"replicas": 3}},
                     subresource="scale")
    await eventually(lambda: applied(kube, "g-prefill", 3))
    assert await graph_replicas(kube, "g", "prefill") == 3


async def test_missing_graph_and_service_are_conditions_not_retries(
        cluster: LocalCluster, kube: KubeClient, operator: Manager) -> None:
    await kube.create(SCALING_ADAPTERS, adapter("g", "decode", 3))

    async def reason(expected: str) -> bool:
        ready = ready_condition(await kube.get(SCALING_ADAPTERS, NS, "g-decode"))
        return ready is not None and ready["reason"] == expected
    await eventually(lambda: reason("DGDNotFound"))
    await eventually(lambda: events_of(kube, "g-decode", "DGDNotFound"))
    before = reconciles(operator)
    assert await idle_writes(cluster) == 0  # no retries, no repeated events
    assert reconciles(operator) - before <= 1  # at most the echo of our own status write
    assert len(await events_of(kube, "g-decode", "DGDNotFound")) == 1

    await kube.create(GRAPH_DEPLOYMENTS, graph("g", {"frontend": service(1)}))
    await eventually(lambda: reason("ServiceNotFound"))
    await eventually(lambda: events_of(kube, "g-decode", "ServiceNotFound"))
    assert await idle_writes(cluster) == 0

    # The service appears without replicas (so 1): the adapter's 3 is written in.
    await kube.patch(GRAPH_DEPLOYMENTS, NS, "g", {"spec": {"services": {
        "decode": service()}}})
    await eventually(lambda: applied(kube, "g-decode", 3))
    assert await graph_replicas(kube, "g", "decode") == 3


# --- an HPA on an External metric drives the adapter ------------------------------------


@pytest.fixture
def sim_config() -> SimulationConfig:
    return SimulationConfig(parts=frozenset({"hpa"}),
                            hpa=HpaSettings(sync_period=0.05, time_scale=0.01))


async def test_hpa_scales_an_adapter_up_and_down_without_a_fight(
        sim_cluster: LocalCluster, tmp_path: Path) -> None:
    kubeconfig = tmp_path / "sim" / "kubeconfig"
    kube = await client_for(kubeconfig)
    try:
        await install_crds(kube, GRAPHS, ADAPTERS)
        await kube.create(GRAPH_DEPLOYMENTS, graph("g", {"decode": service(1)}))
        await kube.create(SCALING_ADAPTERS, adapter("g", "decode", 1))
        assert sim_cluster.simulation is not None
        metrics = sim_cluster.simulation.metrics
        selector = {"matchLabels": {"dynamo_namespace": "default-g"}}
        metrics.set_external("queued", "30", labels={"dynamo_namespace": "default-g"})
        async with running_operator(kubeconfig):
            await eventually(lambda: applied(kube, "g-decode", 1))
            await kube.create(HPAS, {
                "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
                "metadata": {"name": "g-decode", "namespace": NS},
                "spec": {"scaleTargetRef": {"apiVersion": "nvidia.com/v1alpha1",
                                            "kind": "DynamoGraphDeploymentScalingAdapter",
                                            "name": "g-decode"},
                         "minReplicas": 1, "maxReplicas": 8,
                         "metrics": [{"type": "External", "external": {
                             "metric": {"name": "queued", "selector": selector},
                             "target": {"type": "AverageValue", "averageValue": "10"}}}],
                         "behavior": {"scaleDown": {"stabilizationWindowSeconds": 0}}}})
            # 30 queued at 10 per replica: 3 replicas.
            await eventually(lambda: applied(kube, "g-decode", 3))
            assert await graph_replicas(kube, "g", "decode") == 3
            metrics.set_external("queued", "10", labels={"dynamo_namespace": "default-g"})
            await eventually(lambda: applied(kube, "g-decode", 1))
            assert await graph_replicas(kube, "g", "decode") == 1

            async def settled() -> Json | None:
                hpa = await kube.get(HPAS, NS, "g-decode")
                status = hpa.get("status") or {}
                return hpa if status.get("currentReplicas") == 1 else None
            await eventually(settled)
            await asyncio.sleep(0.3)  # several HPA syncs: nothing moves any more
            decisions = [e for e in (await kube.list(Resource("", "v1", "events", "Event"),
                                                     NS))["items"]
                         if e["reason"] == "SuccessfulRescale"]
            assert sum(e.get("count", 1) for e in decisions) == 2
            # One graph write per scaling decision: the adapter and the graph never fight.
            assert operator_writes(sim_cluster, GRAPH_RESOURCE) == 2
            assert len(await events_of(kube, "g-decode", "Synced")) == 0
    finally:
        await kube.close()


# --- quick successive scale requests: the last one wins, always ---------------------------


async def scale(kube: KubeClient, name: str, replicas: int) -> None:
    await kube.patch(SCALING_ADAPTERS, NS, name, {"spec": {"replicas": replicas}},
                     subresource="scale")


async def settled_at(kube: KubeClient, name: str, svc: str, replicas: int) -> bool:
    """The adapter asks for, applied and reports `replicas`, and the graph has them."""
    obj = await applied(kube, name, replicas)
    return (obj is not None and obj["spec"]["replicas"] == replicas  # type: ignore[index]
            and await graph_replicas(kube, obj["spec"]["dgdRef"]["name"],  # type: ignore[index]
                                     svc) == replicas)


async def test_back_to_back_scales_end_at_the_last_value(
        cluster: LocalCluster, kube: KubeClient, operator: Manager) -> None:
    """Twenty rounds of two scale writes sent at once: each ends at the second value, and a
    status write that lost its race never makes our own graph write look like a hand edit."""
    await kube.create(GRAPH_DEPLOYMENTS, graph("g", {"decode": service(1)}))
    await kube.create(SCALING_ADAPTERS, adapter("g", "decode", 1))
    await eventually(lambda: applied(kube, "g-decode", 1))
    for round_ in range(20):
        first, second = 2 + 2 * round_, 3 + 2 * round_
        await scale(kube, "g-decode", first)
        await scale(kube, "g-decode", second)
        await eventually(lambda s=second: settled_at(kube, "g-decode", "decode", s))
    await asyncio.sleep(0.3)
    assert await settled_at(kube, "g-decode", "decode", 41)
    assert await events_of(kube, "g-decode", "Synced") == []  # nothing was taken for an edit
    assert await idle_writes(cluster) == 0


async def test_interleaved_scales_and_hand_edit(cluster: LocalCluster, kube: KubeClient,
                                                operator: Manager) -> None:
    """Scale writes racing the adapter's own graph patches, then a real hand edit of the
    graph: the scales end at the last value, the hand edit is still adopted once."""
    await kube.create(GRAPH_DEPLOYMENTS, graph("g", {"decode": service(1)}))
    await kube.create(SCALING_ADAPTERS, adapter("g", "decode", 1))
    await eventually(lambda: applied(kube, "g-decode", 1))
    for replicas in (4, 2, 6, 3):
        await scale(kube, "g-decode", replicas)
        await asyncio.sleep(0.005)
    await eventually(lambda: settled_at(kube, "g-decode", "decode", 3))
    assert await events_of(kube, "g-decode", "Synced") == []

    # In v1beta1, the version the adapter wrote in (the same edit in v1alpha1, which takes the
    # replicas from the adapter's v1beta1 entry: test_scaling_adapter_alpha_edit).
    await kube.patch(HUB_GRAPHS, NS, "g", [{"op": "test", "path": "/spec/components/0/name",
                                           "value": "decode"},
                                          {"op": "replace", "path": "/spec/components/0/replicas",
                                           "value": 7}], patch_type="json")
    await eventually(lambda: settled_at(kube, "g-decode", "decode", 7))
    [synced] = await events_of(kube, "g-decode", "Synced")
    assert synced["message"] == "Synced adapter from DGD manual edit: replicas=7"
    assert await idle_writes(cluster) == 0


async def test_operator_stopped_between_graph_patch_and_status_write(
        cluster: LocalCluster, kube: KubeClient, kubeconfig: Path) -> None:
    """The graph holds the adapter's value but the adapter's status was never written (the
    process died in between); the adapter is scaled again meanwhile. The next operator
    scales to the new value instead of taking its own old write for a hand edit."""
    await kube.create(GRAPH_DEPLOYMENTS, graph("g", {"decode": service(1)}))
    await kube.create(SCALING_ADAPTERS, adapter("g", "decode", 1))
    async with running_operator(kubeconfig):
        await eventually(lambda: applied(kube, "g-decode", 1))
        refused = cluster.faults.error(500, verbs=("patch", "update"),
                                       resources=(f"{ADAPTERS}/status",))
        await scale(kube, "g-decode", 2)
        await eventually(lambda: _graph_at(kube, 2))
    cluster.faults.remove(refused)
    assert refused.hits > 0
    status = (await kube.get(SCALING_ADAPTERS, NS, "g-decode"))["status"]
    assert status["replicas"] == 1  # the write that records the scale never landed
    await scale(kube, "g-decode", 5)
    async with running_operator(kubeconfig):
        await eventually(lambda: settled_at(kube, "g-decode", "decode", 5))
        assert await events_of(kube, "g-decode", "Synced") == []
        assert await idle_writes(cluster) == 0


async def _graph_at(kube: KubeClient, replicas: int) -> bool:
    return await graph_replicas(kube, "g", "decode") == replicas
