"""Simulated nodes: GPU labels, capacity, conditions, addresses, leases, YAML node lists."""

from __future__ import annotations

from pathlib import Path

import pytest
from kubernetes_asyncio import client
from simulation_support import eventually

from hack.localcluster.server import LocalCluster
from hack.localcluster.simulation import NodeSpec, SimulationConfig, load_nodes
from hack.localcluster.testing import running_cluster


async def test_default_cluster_has_four_gpu_nodes(core: client.CoreV1Api) -> None:
    nodes = await eventually(lambda: _ready_nodes(core))
    assert [n.metadata.name for n in nodes] == [f"gpu-node-{i}" for i in range(4)]
    node = nodes[0]
    labels = node.metadata.labels
    assert labels["nvidia.com/gpu.product"] == "NVIDIA-H100-80GB-HBM3"
    assert labels["nvidia.com/gpu.count"] == "8"
    assert labels["nvidia.com/gpu.memory"] == "81559"
    assert labels["nvidia.com/gpu.present"] == "true"
    assert labels["kubernetes.io/hostname"] == "gpu-node-0"
    assert node.status.capacity["nvidia.com/gpu"] == "8"
    assert node.status.allocatable["cpu"] == "64"
    assert node.status.allocatable["pods"] == "110"
    assert {c.type: c.status for c in node.status.conditions} == {
        "MemoryPressure": "False", "DiskPressure": "False", "PIDPressure": "False",
        "Ready": "True"}
    ready = next(c for c in node.status.conditions if c.type == "Ready")
    assert (ready.reason, ready.message) == ("KubeletReady", "kubelet is posting ready status")
    addresses = {a.type: a.address for a in node.status.addresses}
    assert addresses == {"InternalIP": "127.0.0.2", "Hostname": "gpu-node-0"}
    assert node.status.node_info.kubelet_version.startswith("v1.")
    assert node.status.node_info.container_runtime_version.startswith("containerd://")
    assert node.spec.provider_id == "localcluster://gpu-node-0"


async def _ready_nodes(core: client.CoreV1Api) -> list[client.V1Node] | None:
    nodes = (await core.list_node()).items
    if len(nodes) == 4 and all(n.status and n.status.conditions for n in nodes):
        return sorted(nodes, key=lambda n: n.metadata.name)
    return None


async def test_each_node_holds_a_lease(sim_api: client.ApiClient) -> None:
    coordination = client.CoordinationV1Api(sim_api)

    async def leases() -> list[client.V1Lease] | None:
        items = (await coordination.list_namespaced_lease("kube-node-lease")).items
        return items if len(items) == 4 else None

    lease = (await eventually(leases))[0]
    assert lease.spec.holder_identity == lease.metadata.name
    assert lease.spec.lease_duration_seconds == 40
    assert lease.metadata.owner_references[0].kind == "Node"


async def test_a_deleted_node_registers_again(core: client.CoreV1Api) -> None:
    await eventually(lambda: _ready_nodes(core))
    old = await core.read_node("gpu-node-1")
    await core.delete_node("gpu-node-1")

    async def back() -> bool:
        try:
            node = await core.read_node("gpu-node-1")
        except client.ApiException:
            return False
        return bool(node.metadata.uid != old.metadata.uid)

    await eventually(back)


def test_nodes_from_yaml(tmp_path: Path) -> None:
    path = tmp_path / "nodes.yaml"
    path.write_text("""
nodes:
  - name: a100
    count: 2
    gpus: 4
    gpuProduct: NVIDIA-A100-SXM4-80GB
    gpuFamily: ampere
    cpu: "32"
    labels: {pool: train}
    taints: [{key: nvidia.com/gpu, effect: NoSchedule}]
  - name: cpu-only
    gpus: 0
""")
    nodes = load_nodes(path)
    assert [n.name for n in nodes] == ["a100-0", "a100-1", "cpu-only"]
    assert nodes[0].gpus == 4 and nodes[0].gpu_product == "NVIDIA-A100-SXM4-80GB"
    assert nodes[0].labels == {"pool": "train"}
    assert nodes[0].taints == ({"key": "nvidia.com/gpu", "effect": "NoSchedule"},)
    assert nodes[2].gpus == 0
    path.write_text("nodes: [{name: x, gpu: 1}]")
    with pytest.raises(ValueError, match="unknown keys"):
        load_nodes(path)


async def test_cpu_node_has_no_gpu_labels(tmp_path: Path) -> None:
    config = SimulationConfig(nodes=[NodeSpec("cpu-0", gpus=0)])
    async with running_cluster(tmp_path, simulation=config) as cluster:
        await _settled(cluster)
        node = cluster.storage.get(("", "nodes"), "", "cpu-0")
        assert node is not None
        assert "nvidia.com/gpu" not in node["status"]["capacity"]
        assert not any(k.startswith("nvidia.com/") for k in node["metadata"]["labels"])


async def _settled(cluster: LocalCluster) -> None:
    assert cluster.simulation is not None
    await eventually(lambda: cluster.storage.count(("", "nodes")) > 0)
    await cluster.simulation.settle()
