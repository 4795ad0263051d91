"""Simulated Dynamo workers publish their DynamoWorkerMetadata as the runtime does: while the
pod runs with Kubernetes discovery and the CRD is installed, one object named after the pod,
owned by it, holding its endpoint and model card; gone with the pod. A pod with etcd
discovery, a frontend, or a cluster without the CRD gets none."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from kubernetes_asyncio import client
from simulation_support import eventually, pod

from controller.client import ClientConfig, KubeClient
from controller.metrics import Metrics
from hack.localcluster.server import LocalCluster
from hack.localcluster.simulation.worker_metadata import instance_id
from hack.our_crds import install_our_crds

Json = dict[str, Any]
NS = "default"
GROUP, VERSION, PLURAL = "nvidia.com", "v1alpha1", "dynamoworkermetadatas"
SYSTEM = [{"name": "system", "containerPort": 9090}]


def dynamo_pod(name: str, kind: str = "worker", backend: str = "kubernetes") -> Json:
    p = pod(name, ports=SYSTEM)
    p["metadata"]["labels"] = {"app": name, "nvidia.com/dynamo-component-type": kind}
    p["metadata"]["annotations"] = {"nvidia.com/dynamo-base-model": "Qwen/Qwen3-0.6B"}
    p["spec"]["containers"][0]["env"] = [
        {"name": "DYN_NAMESPACE", "value": "default-g"},
        {"name": "DYN_DISCOVERY_BACKEND", "value": backend}]
    return p


async def install(sim_cluster: LocalCluster, tmp_path: Path) -> None:
    kube = await KubeClient.connect(tmp_path / "sim" / "kubeconfig", ClientConfig(qps=None),
                                    Metrics())
    try:
        await install_our_crds(kube, names=[f"{PLURAL}.{GROUP}"])
    finally:
        await kube.close()


async def metadata_of(custom: client.CustomObjectsApi, name: str) -> Json | None:
    try:
        found: Json = await custom.get_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, name)
    except client.ApiException as err:
        if err.status == 404:
            return None
        raise
    return found


async def running(core: client.CoreV1Api, name: str) -> Any:
    async def up() -> Any:
        p = await core.read_namespaced_pod(name, NS)
        return p if p.status.phase == "Running" else None
    return await eventually(up)


async def test_a_running_worker_publishes_its_metadata_owned_by_its_pod(
        core: client.CoreV1Api, custom: client.CustomObjectsApi, sim_cluster: LocalCluster,
        tmp_path: Path) -> None:
    await install(sim_cluster, tmp_path)
    await core.create_namespaced_pod(NS, dynamo_pod("w0"))
    p = await running(core, "w0")
    dwm = await eventually(lambda: metadata_of(custom, "w0"))
    assert dwm["metadata"]["ownerReferences"] == [{
        "apiVersion": "v1", "kind": "Pod", "name": "w0", "uid": p.metadata.uid,
        "controller": False, "blockOwnerDeletion": False}]
    assert not dwm["metadata"].get("labels")
    ident = instance_id("w0")
    key = "default-g/backend/generate"
    data = dwm["spec"]["data"]
    assert data["endpoints"] == {key: {
        "type": "Endpoint", "namespace": "default-g", "component": "backend",
        "endpoint": "generate", "instance_id": ident,
        "transport": {"nats_tcp": f"default-g_backend.generate-{ident:x}"}}}
    assert data["model_cards"][key]["card_json"] == {"display_name": "Qwen/Qwen3-0.6B"}
    assert data["model_cards"][key]["instance_id"] == ident
    fields = [m["manager"] for m in dwm["metadata"].get("managedFields") or ()]
    assert fields == ["dynamo-worker"]

    # Deleted with its pod, by the garbage collector.
    await core.delete_namespaced_pod("w0", NS)

    async def gone() -> bool:
        return await metadata_of(custom, "w0") is None
    await eventually(gone)


async def test_etcd_discovery_frontends_and_clusters_without_the_crd_publish_nothing(
        core: client.CoreV1Api, custom: client.CustomObjectsApi, sim_cluster: LocalCluster,
        tmp_path: Path) -> None:
    # No CRD yet: the worker runs and writes nothing (the runtime could not either).
    await core.create_namespaced_pod(NS, dynamo_pod("early"))
    await running(core, "early")
    await install(sim_cluster, tmp_path)
    for p in (dynamo_pod("etcd", backend="etcd"), dynamo_pod("fe", kind="frontend"),
              dynamo_pod("w1")):
        await core.create_namespaced_pod(NS, p)
    await eventually(lambda: metadata_of(custom, "w1"))
    await asyncio.sleep(0.3)
    listed = await custom.list_namespaced_custom_object(GROUP, VERSION, NS, PLURAL)
    assert [o["metadata"]["name"] for o in listed["items"]] == ["w1"]
