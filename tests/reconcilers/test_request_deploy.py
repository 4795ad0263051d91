"""The DGDR controller after profiling, with autoApply: the graph created without an owner,
followed to Ready and back on degradation, a deleted graph, a name already taken, spec
changes once profiling started, and silence in terminal states (spec/controllers.md
§8.3, §8.8, §8.9)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from operator_harness import (
    OPERATOR_AGENT,
    Operator,
    condition,
    eventually,
    get_or_none,
    install_crds,
    running_operator,
    setup_client,
    wait_for,
)
from request_support import (
    EVENTS,
    NAMESPACES,
    NS,
    Json,
    extra_config_map,
    finish_job,
    generated_graph,
    reasons_of,
    request,
    stream,
    write_output,
)

from controller.client import KubeClient
from hack.localcluster.server import LocalCluster
from hack.our_crds import DEPLOYMENT_REQUESTS, GRAPH_DEPLOYMENTS
from reconcilers import request as dgdr_controller
from reconcilers.machinery.resources import CONFIG_MAPS, JOBS
from reconcilers.machinery.resources import DEPLOYMENT_REQUESTS as HUB_REQUESTS

#: How long "idle" lasts in these tests: long enough for any stray write to show.
IDLE = 0.5


@pytest.fixture
async def kube(cluster: LocalCluster, kubeconfig: Path) -> AsyncIterator[KubeClient]:
    client = await setup_client(kubeconfig)
    await install_crds(client, "*dynamographdeploy*.yaml")
    await client.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace",
                                     "metadata": {"name": NS}})
    try:
        yield client
    finally:
        await client.close()


@pytest.fixture
async def operator(kube: KubeClient, kubeconfig: Path) -> AsyncIterator[Operator]:
    async with running_operator(kubeconfig, [dgdr_controller.register]) as op:
        yield op


async def in_state(kube: KubeClient, name: str, state: str) -> Json:
    return await wait_for(kube, DEPLOYMENT_REQUESTS, NS, name,
                          lambda o: (o.get("status") or {}).get("state") == state)


async def profiled(kube: KubeClient, name: str, **spec: object) -> Json:
    """A request whose profiling has completed with a graph and one extra ConfigMap."""
    await kube.create(DEPLOYMENT_REQUESTS, request(name, **spec))
    await in_state(kube, name, "Profiling")
    await write_output(kube, name, {
        "config_with_planner.yaml": stream(generated_graph(), extra_config_map()),
        "profiler_status.yaml": "status: success\n"})
    return await finish_job(kube, name)


async def set_graph_state(kube: KubeClient, name: str, state: str) -> None:
    await kube.patch(GRAPH_DEPLOYMENTS, NS, name, {"status": {"state": state}},
                     subresource="status")


async def test_auto_apply_creates_follows_and_loses_the_graph(
        kube: KubeClient, operator: Operator, cluster: LocalCluster) -> None:
    await profiled(kube, "r", autoApply=True,
                   deploymentOverrides={"name": "prod", "labels": {"team": "x"},
                                        "annotations": {"note": "n"}})
    obj = await wait_for(kube, DEPLOYMENT_REQUESTS, NS, "r",
                         lambda o: bool(condition(o, "DeploymentReady")))
    # v1alpha1 reads the v1beta1 status as the conversion maps it: Deploying, the graph's name.
    assert obj["status"]["state"] == "Deploying"
    assert obj["status"]["deployment"] == {"name": "prod"}
    ready = condition(obj, "DeploymentReady")
    assert (ready["status"], ready["reason"], ready["message"]) == (
        "False", "DeploymentCreated", "DGD prod created, waiting for Ready")
    graph = await wait_for(kube, GRAPH_DEPLOYMENTS, NS, "prod")
    assert graph["metadata"]["labels"] == {
        "from": "profiler", "dgdr.nvidia.com/name": "r", "dgdr.nvidia.com/namespace": NS,
        "nvidia.com/managed-by": "dynamo-operator", "team": "x"}
    assert graph["metadata"]["annotations"]["note"] == "n"
    assert "ownerReferences" not in graph["metadata"]
    assert graph["spec"]["services"]["decode"]["replicas"] == 1
    assert await wait_for(kube, CONFIG_MAPS, NS, "planner-profile-data")
    assert {"SpecGenerated", "DeploymentCreated"} <= set(await reasons_of(kube, "r"))

    # The graph's own state decides: `successful` is Deployed, which v1alpha1 reads as Ready
    # with a created deployment.
    await set_graph_state(kube, "prod", "pending")
    await set_graph_state(kube, "prod", "successful")
    obj = await in_state(kube, "r", "Ready")
    assert obj["status"]["deployment"] == {"name": "prod", "created": True}
    assert (await kube.get(HUB_REQUESTS, NS, "r"))["status"]["phase"] == "Deployed"
    assert (condition(obj, "DeploymentReady")["status"],
            condition(obj, "DeploymentReady")["reason"]) == ("True", "DeploymentReady")

    # Degradation goes back to Deploying, with a warning and a condition.
    await set_graph_state(kube, "prod", "failed")
    obj = await in_state(kube, "r", "Deploying")
    degraded = condition(obj, "DeploymentReady")
    assert (degraded["status"], degraded["reason"], degraded["message"]) == (
        "False", "DeploymentDegraded", "Deployment degraded to failed")
    assert "DeploymentDegraded" in await reasons_of(kube, "r")
    await set_graph_state(kube, "prod", "successful")
    await in_state(kube, "r", "Ready")

    # A deleted graph is not recreated: the request fails, as the original's v1beta1 does.
    await kube.delete(GRAPH_DEPLOYMENTS, NS, "prod")
    obj = await in_state(kube, "r", "Failed")
    assert "deployment" not in obj["status"]
    deleted = condition(obj, "DeploymentReady")
    assert (deleted["status"], deleted["reason"]) == ("False", "DeploymentDeleted")
    assert "DeploymentDeleted" in await reasons_of(kube, "r")
    await asyncio.sleep(IDLE)
    assert await get_or_none(kube, GRAPH_DEPLOYMENTS, NS, "prod") is None

    # Terminal: a touch of the object wakes the controller, which writes nothing.
    cluster.stats.reset()
    await kube.patch(DEPLOYMENT_REQUESTS, NS, "r", {"metadata": {"labels": {"poke": "1"}}})
    await asyncio.sleep(IDLE)
    assert cluster.stats.writes(user_agent=OPERATOR_AGENT) == 0, cluster.stats.snapshot()


async def test_deleting_the_request_leaves_the_graph(kube: KubeClient,
                                                     operator: Operator) -> None:
    await profiled(kube, "keep", autoApply=True)
    await wait_for(kube, GRAPH_DEPLOYMENTS, NS, "qwen-disagg")
    await kube.delete(DEPLOYMENT_REQUESTS, NS, "keep")

    async def gone() -> bool:
        return await get_or_none(kube, DEPLOYMENT_REQUESTS, NS, "keep") is None

    await wait_for(kube, GRAPH_DEPLOYMENTS, NS, "qwen-disagg")
    await eventually(gone)
    assert await get_or_none(kube, GRAPH_DEPLOYMENTS, NS, "qwen-disagg") is not None


async def test_graph_name_already_taken(kube: KubeClient, operator: Operator) -> None:
    await kube.create(GRAPH_DEPLOYMENTS, {**generated_graph("taken"),
                                          "metadata": {"name": "taken", "namespace": NS}})
    await profiled(kube, "t1", autoApply=True, deploymentOverrides={"name": "taken"})
    obj = await wait_for(kube, DEPLOYMENT_REQUESTS, NS, "t1",
                         lambda o: bool(condition(o, "DeploymentReady")))
    assert obj["status"]["deployment"]["name"] == "taken"
    assert "DeploymentCreated" not in await reasons_of(kube, "t1")


async def test_without_auto_apply_ready_is_final(kube: KubeClient, operator: Operator,
                                                 cluster: LocalCluster) -> None:
    await profiled(kube, "plain")
    await in_state(kube, "plain", "Ready")
    await asyncio.sleep(IDLE)
    cluster.stats.reset()
    await kube.patch(DEPLOYMENT_REQUESTS, NS, "plain", {"metadata": {"labels": {"poke": "1"}}})
    await asyncio.sleep(IDLE)
    assert cluster.stats.writes(user_agent=OPERATOR_AGENT) == 0, cluster.stats.snapshot()
    assert await get_or_none(kube, GRAPH_DEPLOYMENTS, NS, "qwen-disagg") is None


SPEC_CHANGE = {"spec": {"profilingConfig": {"config": {"sla": {"ttft": 50}}}}}


async def test_spec_changes_once_profiling_started_are_rejected(
        kube: KubeClient, operator: Operator) -> None:
    await kube.create(DEPLOYMENT_REQUESTS, request("frozen"))
    before = await in_state(kube, "frozen", "Profiling")
    await kube.patch(DEPLOYMENT_REQUESTS, NS, "frozen", SPEC_CHANGE)

    async def rejected() -> bool:
        return "SpecChangeRejected" in await reasons_of(kube, "frozen")

    await eventually(rejected)
    obj = await kube.get(DEPLOYMENT_REQUESTS, NS, "frozen")
    assert obj["status"]["state"] == "Profiling"
    assert obj["status"]["observedGeneration"] == before["status"]["observedGeneration"]
    assert obj["metadata"]["generation"] > obj["status"]["observedGeneration"]
    [event] = [e for e in (await kube.list(EVENTS, NS))["items"]
               if e["reason"] == "SpecChangeRejected"]
    assert event["type"] == "Warning"
    assert event["message"].startswith("Cannot modify spec in phase 'Profiling'.")


async def test_spec_change_in_failed_is_ignored(kube: KubeClient, operator: Operator) -> None:
    await kube.create(DEPLOYMENT_REQUESTS, request("bad", profilingConfig={
        "profilerImage": "img", "config": {"x": 1}, "configMapRef": {"name": "missing"}}))
    await in_state(kube, "bad", "Failed")
    await kube.patch(DEPLOYMENT_REQUESTS, NS, "bad", SPEC_CHANGE)
    await asyncio.sleep(IDLE)
    obj = await kube.get(DEPLOYMENT_REQUESTS, NS, "bad")
    assert obj["status"]["state"] == "Failed"
    assert await get_or_none(kube, JOBS, NS, "profile-bad") is None


async def test_spec_change_rejected_in_ready_and_deploying(
        kube: KubeClient, operator: Operator) -> None:
    await profiled(kube, "late")
    await in_state(kube, "late", "Ready")
    await kube.patch(DEPLOYMENT_REQUESTS, NS, "late", SPEC_CHANGE)

    async def rejected(name: str, state: str) -> bool:
        return any(e["reason"] == "SpecChangeRejected" and f"phase '{state}'" in e["message"]
                   for e in (await kube.list(EVENTS, NS))["items"]
                   if e["involvedObject"].get("name") == name)

    await eventually(lambda: rejected("late", "Ready"))
    assert (await kube.get(DEPLOYMENT_REQUESTS, NS, "late"))["status"]["state"] == "Ready"

    await profiled(kube, "del", autoApply=True)
    await wait_for(kube, GRAPH_DEPLOYMENTS, NS, "qwen-disagg")
    await in_state(kube, "del", "Deploying")
    await kube.delete(GRAPH_DEPLOYMENTS, NS, "qwen-disagg")
    await in_state(kube, "del", "Failed")

    await profiled(kube, "dep", autoApply=True, deploymentOverrides={"name": "dep-graph"})
    await wait_for(kube, GRAPH_DEPLOYMENTS, NS, "dep-graph")
    await in_state(kube, "dep", "Deploying")
    await kube.patch(DEPLOYMENT_REQUESTS, NS, "dep", SPEC_CHANGE)
    await eventually(lambda: rejected("dep", "Deploying"))
    assert (await kube.get(DEPLOYMENT_REQUESTS, NS, "dep"))["status"]["state"] == "Deploying"


async def test_profiling_waits_without_writing(kube: KubeClient, operator: Operator,
                                               cluster: LocalCluster) -> None:
    await kube.create(DEPLOYMENT_REQUESTS, request("busy"))
    await in_state(kube, "busy", "Profiling")
    await asyncio.sleep(IDLE)
    cluster.stats.reset()
    # Job progress wakes the request; nothing changes for it until the Job ends.
    await kube.patch(JOBS, NS, "profile-busy", {"status": {"active": 1}}, subresource="status")
    await asyncio.sleep(IDLE)
    assert cluster.stats.writes(user_agent=OPERATOR_AGENT) == 0, cluster.stats.snapshot()
