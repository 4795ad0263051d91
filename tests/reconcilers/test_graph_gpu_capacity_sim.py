"""A graph whose GPUs cannot fit says so with the numbers before its pods sit Pending, and
stops saying so when capacity appears; `status.gpus` counts DRA claims. Against the simulated
cluster (two nodes of eight GPUs, the simulated DRA driver and scheduler), with every
controller of the operator."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from operator_harness import (
    condition,
    eventually,
    install_crds,
    running_operator,
    setup_client,
    wait_for,
)

from backends.constants import ANNOTATION_MAX_SURGE, ANNOTATION_MAX_UNAVAILABLE
from backends.settings import OperatorSettings
from controller.client import KubeClient
from controller.resource import Resource
from hack.localcluster.server import LocalCluster
from hack.localcluster.simulation.config import SimulationConfig, default_nodes
from reconcilers.machinery.resources import (
    COMPONENT_DEPLOYMENTS,
    DEPLOYMENTS,
    DEVICE_CLASSES,
    GRAPH_DEPLOYMENTS,
    PODS,
    RESOURCE_CLAIM_TEMPLATES,
    RESOURCE_CLAIMS,
)
from reconcilers.operator.registry import REGISTRATIONS

Json = dict[str, Any]
NS = "default"
IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.0.0"
EVENTS = Resource("", "v1", "events", "Event")
SETTINGS = OperatorSettings(lws_enabled=False, volcano_enabled=False, dra_enabled=True)


@pytest.fixture
def sim_config() -> SimulationConfig:
    return SimulationConfig(nodes=default_nodes(2))


@pytest.fixture
async def kube(sim_cluster: LocalCluster, tmp_path: Path) -> AsyncIterator[KubeClient]:
    client = await setup_client(tmp_path / "sim" / "kubeconfig")
    await install_crds(client)
    try:
        yield client
    finally:
        await client.close()


def graph(name: str, replicas: int, *, gpus: int = 0, template: str = "") -> Json:
    main: Json = {"name": "main", "image": IMAGE, "command": ["python3"],
                  "args": ["-m", "dynamo.vllm"]}
    spec: Json = {"containers": [main]}
    if gpus:
        main["resources"] = {"limits": {"nvidia.com/gpu": str(gpus)}}
    if template:
        spec["resourceClaims"] = [{"name": "gpus", "resourceClaimTemplateName": template}]
        main["resources"] = {"claims": [{"name": "gpus"}]}
    return {"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment",
            "metadata": {"name": name, "namespace": NS},
            "spec": {"backendFramework": "vllm", "components": [
                {"name": "Worker", "type": "worker", "replicas": replicas,
                 "podTemplate": {"spec": spec}}]}}


def claim_template(name: str, count: int) -> Json:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": NS},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpus", "exactly": {
                "deviceClassName": "gpu.nvidia.com", "count": count}}]}}}}


def filler(replicas: int, gpus: int) -> Json:
    labels = {"app": "filler"}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "filler", "namespace": NS},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels}, "spec": {"containers": [{
                         "name": "main", "image": "busybox",
                         "resources": {"limits": {"nvidia.com/gpu": str(gpus)}}}]}}}}


def ready(obj: Json) -> Json:
    return condition(obj, "Ready")


async def running_fillers(kube: KubeClient, count: int) -> None:
    async def placed() -> bool:
        pods = (await kube.list(PODS, NS, label_selector="app=filler"))["items"]
        return sum(1 for p in pods if (p.get("status") or {}).get("phase") == "Running"
                   and not p["metadata"].get("deletionTimestamp")) == count
    await eventually(placed, within=20, what=f"{count} filler pods running")


async def test_more_gpus_than_free_is_told_at_once_and_clears_when_they_free(
        kube: KubeClient, sim_cluster: LocalCluster, tmp_path: Path) -> None:
    await kube.create(DEPLOYMENTS, filler(2, 6))  # 12 of the 16 GPUs taken
    await running_fillers(kube, 2)
    async with running_operator(tmp_path / "sim" / "kubeconfig", REGISTRATIONS, SETTINGS):
        await kube.create(GRAPH_DEPLOYMENTS, graph("big", 2, gpus=4))
        warned = await wait_for(kube, GRAPH_DEPLOYMENTS, NS, "big",
                                lambda o: ready(o).get("reason") == "insufficient_capacity")
        message = ready(warned)["message"]
        # One 4-GPU pod fits: placed before the status is written, it holds its GPUs.
        assert re.match(r"Not enough GPUs: needs 8 GPUs \(nvidia\.com/gpu\)(, its pods hold 4, 0|"
                        r", 4) free of 16 allocatable\. Resources not ready", message), message
        first = await first_pending_message(kube, "big")  # the graph's first status
        assert first.startswith("Not enough GPUs: needs 8 GPUs") and (
            "unschedulable" not in first), first
        assert warned["status"]["gpus"] == {"requested": 8, "running": 0}

        # A filler pod goes: 10 free, the graph fits, the warning goes.
        await kube.patch(DEPLOYMENTS, NS, "filler", {"spec": {"replicas": 1}})
        await running_fillers(kube, 1)
        await wait_for(kube, GRAPH_DEPLOYMENTS, NS, "big",
                       lambda o: ready(o).get("reason") != "insufficient_capacity")
        await eventually(lambda: _state(kube, "big", "successful"), within=20,
                         what="the graph to become ready")
        done = await kube.get(GRAPH_DEPLOYMENTS, NS, "big")
        assert done["status"]["gpus"] == {"requested": 8, "running": 8}


async def test_a_warned_graph_is_not_rewritten_while_only_the_numbers_move(
        kube: KubeClient, sim_cluster: LocalCluster, tmp_path: Path) -> None:
    await kube.create(DEPLOYMENTS, filler(4, 4))  # every GPU taken, four on each half node
    await running_fillers(kube, 4)
    async with running_operator(tmp_path / "sim" / "kubeconfig", REGISTRATIONS, SETTINGS):
        await kube.create(GRAPH_DEPLOYMENTS, graph("late", 1, gpus=8))
        warned = await wait_for(kube, GRAPH_DEPLOYMENTS, NS, "late",
                                lambda o: ready(o).get("reason") == "insufficient_capacity")
        assert "needs 8 GPUs (nvidia.com/gpu), 0 free of 16 allocatable" in (
            ready(warned)["message"])
        version = await _settled(kube, "late")
        # Four GPUs free up and are taken again: the numbers move, the 8-GPU pod still fits
        # nowhere, and the status is not written.
        for replicas in (3, 4):
            await kube.patch(DEPLOYMENTS, NS, "filler", {"spec": {"replicas": replicas}})
            await running_fillers(kube, replicas)
            await asyncio.sleep(0.5)
        after = await kube.get(GRAPH_DEPLOYMENTS, NS, "late")
        assert after["metadata"]["resourceVersion"] == version, ready(after)
        assert ready(after)["reason"] == "insufficient_capacity"
        # The GPUs free: the pod is placed, the warning goes.
        await kube.patch(DEPLOYMENTS, NS, "filler", {"spec": {"replicas": 0}})
        await eventually(lambda: _state(kube, "late", "successful"), within=20,
                         what="the graph to become ready")


async def test_more_dra_gpus_than_exist_is_told_and_counted(
        kube: KubeClient, sim_cluster: LocalCluster, tmp_path: Path) -> None:
    await kube.create(RESOURCE_CLAIM_TEMPLATES, claim_template("four-gpus", 4))
    async with running_operator(tmp_path / "sim" / "kubeconfig", REGISTRATIONS, SETTINGS):
        await kube.create(GRAPH_DEPLOYMENTS, graph("dra", 5, template="four-gpus"))
        warned = await wait_for(kube, GRAPH_DEPLOYMENTS, NS, "dra",
                                lambda o: ready(o).get("reason") == "insufficient_capacity")
        assert re.match(r"Not enough GPUs: needs 20 GPUs \(DRA device class gpu\.nvidia\.com\)"
                        r"(, its pods hold \d+)?, \d+ free of 16 devices\. ",
                        ready(warned)["message"]), ready(warned)
        assert warned["status"]["gpus"] == {"requested": 20, "running": 0}
        # Told in the graph's first status, before any pod waited.
        first = await first_pending_message(kube, "dra")
        assert first.startswith("Not enough GPUs: needs 20 GPUs") and (
            "unschedulable" not in first), first

        # Four replicas fit the sixteen devices: the warning goes, the claims are allocated.
        await kube.patch(GRAPH_DEPLOYMENTS, NS, "dra", {"spec": {"components": [
            {**graph("dra", 4, template="four-gpus")["spec"]["components"][0]}]}})
        await eventually(lambda: _state(kube, "dra", "successful"), within=30,
                         what="the DRA graph to become ready")
        done = await kube.get(GRAPH_DEPLOYMENTS, NS, "dra")
        assert done["status"]["gpus"] == {"requested": 16, "running": 16}
        claims = (await kube.list(RESOURCE_CLAIMS, NS))["items"]
        allocated = [c for c in claims if (c.get("status") or {}).get("allocation")]
        assert len(allocated) == 4, claims


async def first_pending_message(kube: KubeClient, name: str) -> str:
    """The message of the graph's NotReady event: its first pending status, as written."""
    async def told() -> list[Json]:
        return [e for e in (await kube.list(EVENTS, NS))["items"]
                if e["involvedObject"].get("name") == name and e["reason"] == "NotReady"]
    events = await eventually(told, what="the graph's NotReady event")
    return str(events[0]["message"])


async def _settled(kube: KubeClient, name: str) -> str:
    """The graph's resourceVersion once it has not moved for a second."""
    seen: list[str] = []

    async def still() -> bool:
        version = (await kube.get(GRAPH_DEPLOYMENTS, NS, name))["metadata"]["resourceVersion"]
        seen.append(version)
        return len(seen) > 4 and len(set(seen[-5:])) == 1
    await eventually(still, within=20, interval=0.25, what="the graph's status to settle")
    return seen[-1]


async def _state(kube: KubeClient, name: str, state: str) -> bool:
    obj = await kube.get(GRAPH_DEPLOYMENTS, NS, name)
    return (obj.get("status") or {}).get("state") == state


async def test_a_rollouts_surge_is_in_the_gpus_it_requests(
        kube: KubeClient, sim_cluster: LocalCluster, tmp_path: Path) -> None:
    rolled = graph("roll", 2, gpus=1)
    rolled["metadata"]["annotations"] = {ANNOTATION_MAX_SURGE: "1",
                                         ANNOTATION_MAX_UNAVAILABLE: "0"}
    async with running_operator(tmp_path / "sim" / "kubeconfig", REGISTRATIONS, SETTINGS):
        await kube.create(GRAPH_DEPLOYMENTS, rolled)
        await eventually(lambda: _state(kube, "roll", "successful"), within=20,
                         what="the graph to become ready")
        done = await kube.get(GRAPH_DEPLOYMENTS, NS, "roll")
        assert done["status"]["gpus"] == {"requested": 2, "running": 2}
        # A new worker generation whose pods never get ready: the rollout holds its surge.
        worker = rolled["spec"]["components"][0]
        worker["podTemplate"]["metadata"] = {"annotations": {"localcluster.dev/ready": "false"}}
        worker["podTemplate"]["spec"]["containers"][0]["image"] = IMAGE + "-new"
        await kube.patch(GRAPH_DEPLOYMENTS, NS, "roll", {"spec": {"components": [worker]}})
        rolling = await wait_for(
            kube, GRAPH_DEPLOYMENTS, NS, "roll",
            lambda o: (o.get("status") or {}).get("gpus", {}).get("requested") == 3, within=20)
        assert rolling["status"]["rollingUpdate"]["phase"] in ("Pending", "InProgress"), (
            rolling["status"])
        # The old generation's two ready replicas still run their GPUs.
        assert rolling["status"]["gpus"]["running"] == 2, rolling["status"]


async def test_a_gpu_memory_service_asking_more_devices_than_exist_is_told(
        kube: KubeClient, sim_cluster: LocalCluster, tmp_path: Path) -> None:
    """A GMS component's GPUs come through its claim of the device class: 3 pods of 8 are 24
    devices, where the two nodes publish 16."""
    gms = graph("gms", 3, gpus=8)
    gms["spec"]["components"][0]["experimental"] = {"gpuMemoryService": {"mode": "IntraPod"}}
    async with running_operator(tmp_path / "sim" / "kubeconfig", REGISTRATIONS, SETTINGS):
        await kube.create(GRAPH_DEPLOYMENTS, gms)
        warned = await wait_for(kube, GRAPH_DEPLOYMENTS, NS, "gms",
                                lambda o: ready(o).get("reason") == "insufficient_capacity")
        assert re.match(r"Not enough GPUs: needs 24 GPUs \(DRA device class gpu\.nvidia\.com\)"
                        r"(, its pods hold \d+)?, \d+ free of 16 devices\. ",
                        ready(warned)["message"]), ready(warned)
        assert warned["status"]["gpus"]["requested"] == 24


async def test_graphs_that_fit_exactly_are_never_told_they_do_not(
        kube: KubeClient, sim_cluster: LocalCluster, tmp_path: Path) -> None:
    """Every Ready reason each graph is written with, from a watch, while it takes all of a
    pool: the 16 devices of the class, the 16 nvidia.com/gpu."""
    await kube.create(RESOURCE_CLAIM_TEMPLATES, claim_template("four-gpus", 4))
    listed = await kube.list(GRAPH_DEPLOYMENTS, NS)
    reasons: dict[str, list[str]] = {"dra-fits": [], "fits": []}

    async def record() -> None:
        async with kube.watch(GRAPH_DEPLOYMENTS, NS,
                              resource_version=listed["metadata"]["resourceVersion"],
                              timeout_seconds=120, read_timeout=130) as events:
            async for event in events:
                obj = event.get("object") or {}
                reason = ready(obj).get("reason")
                name = (obj.get("metadata") or {}).get("name")
                if reason and name in reasons and reasons[name][-1:] != [reason]:
                    reasons[name].append(reason)

    watcher = asyncio.create_task(record())
    try:
        async with running_operator(tmp_path / "sim" / "kubeconfig", REGISTRATIONS, SETTINGS):
            for fitting in (graph("dra-fits", 4, template="four-gpus"),
                            graph("fits", 4, gpus=4)):
                # Placed pods get ready slowly: the graphs reconcile while their pods hold
                # what they asked, before they are ready.
                fitting["spec"]["components"][0]["podTemplate"]["metadata"] = {
                    "annotations": {"localcluster.dev/ready-after": "3"}}
                await kube.create(GRAPH_DEPLOYMENTS, fitting)
            for name in reasons:
                await eventually(partial(_state, kube, name, "successful"), within=40,
                                 what=f"{name} to become ready")
    finally:
        watcher.cancel()
    assert all(r and r[-1] == "all_resources_are_ready" for r in reasons.values()), reasons
    assert not any("insufficient_capacity" in r for r in reasons.values()), reasons


async def test_a_gpu_memory_service_of_a_class_no_device_class_defines_waits_for_it(
        kube: KubeClient, sim_cluster: LocalCluster, tmp_path: Path) -> None:
    """As the original syncing the GMS ResourceClaimTemplate: Ready False, reason
    failed_to_reconcile_the_resources in its words with our numbers, and no child written;
    the DeviceClass appearing wakes the graph, which then runs."""
    gms = graph("fast", 2, gpus=4)
    gms["spec"]["components"][0]["experimental"] = {"gpuMemoryService": {
        "mode": "IntraPod", "deviceClassName": "fast-gpus"}}
    async with running_operator(tmp_path / "sim" / "kubeconfig", REGISTRATIONS, SETTINGS):
        await kube.create(GRAPH_DEPLOYMENTS, gms)
        failed = await wait_for(
            kube, GRAPH_DEPLOYMENTS, NS, "fast",
            lambda o: ready(o).get("reason") == "failed_to_reconcile_the_resources")
        assert ready(failed)["status"] == "False" and failed["status"]["state"] == "failed"
        assert ready(failed)["message"] == (
            'failed to sync GMS ResourceClaimTemplate for Worker: DeviceClass "fast-gpus" not '
            "found: ensure the GPU DRA driver is installed and the device class is registered "
            "(Worker needs 8 GPUs (DRA device class fast-gpus))")
        assert (await kube.list(RESOURCE_CLAIM_TEMPLATES, NS))["items"] == []
        # The administrator registers the class (the driver's own, under another name).
        nvidia = await kube.get(DEVICE_CLASSES, None, "gpu.nvidia.com")
        await kube.create(DEVICE_CLASSES, {
            "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
            "metadata": {"name": "fast-gpus"}, "spec": nvidia["spec"]})
        await eventually(lambda: _state(kube, "fast", "successful"), within=30,
                         what="the GMS graph to run once its class exists")


async def test_a_dcd_of_its_own_with_gms_waits_for_its_device_class_too(
        kube: KubeClient, sim_cluster: LocalCluster, tmp_path: Path) -> None:
    """As the original's DCD controller: Available False with its words, no child written,
    until the DeviceClass appears."""
    dcd = {"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoComponentDeployment",
           "metadata": {"name": "lone", "namespace": NS},
           "spec": {"backendFramework": "vllm", "type": "worker", "name": "lone",
                    "replicas": 1,
                    "experimental": {"gpuMemoryService": {"deviceClassName": "lone-gpus"}},
                    "podTemplate": graph("x", 1, gpus=2)["spec"]["components"][0][
                        "podTemplate"]}}
    async with running_operator(tmp_path / "sim" / "kubeconfig", REGISTRATIONS, SETTINGS):
        await kube.create(COMPONENT_DEPLOYMENTS, dcd)
        failed = await wait_for(
            kube, COMPONENT_DEPLOYMENTS, NS, "lone",
            lambda o: condition(o, "Available").get("reason") == "ReconcileFailed")
        assert condition(failed, "Available")["message"] == (
            "Failed to reconcile DynamoComponentDeployment: failed to sync GMS "
            'ResourceClaimTemplate for lone: DeviceClass "lone-gpus" not found: ensure the GPU '
            "DRA driver is installed and the device class is registered (lone needs 2 GPUs "
            "(DRA device class lone-gpus))")
        assert (await kube.list(DEPLOYMENTS, NS))["items"] == []
        nvidia = await kube.get(DEVICE_CLASSES, None, "gpu.nvidia.com")
        await kube.create(DEVICE_CLASSES, {
            "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
            "metadata": {"name": "lone-gpus"}, "spec": nvidia["spec"]})
        await wait_for(kube, COMPONENT_DEPLOYMENTS, NS, "lone",
                       lambda o: condition(o, "Available").get("status") == "True", within=30)
