"""DRA in the simulated cluster: the NVIDIA driver's slices and class, claims from templates,
allocation at scheduling, FailedScheduling when GPUs run out, release on pod deletion; and the
nodes' topology labels."""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes_asyncio import client
from simulation_support import eventually

from hack.localcluster.simulation import NodeSpec, SimulationConfig

Json = dict[str, Any]
NS = "default"
GROUP, VERSION = "resource.k8s.io", "v1"


@pytest.fixture
def sim_config() -> SimulationConfig:
    # Two GPU nodes of 2 GPUs and a CPU node: GPUs run out after four.
    return SimulationConfig(nodes=[
        NodeSpec(name="gpu-a", gpus=2, zone="zone-a", block="zone-a-block-0",
                 rack="zone-a-rack-0"),
        NodeSpec(name="gpu-b", gpus=2, zone="zone-b", rack="zone-b-rack-0"),
        NodeSpec(name="cpu", gpus=0)])


def template(name: str, count: int = 1) -> Json:
    return {"apiVersion": f"{GROUP}/{VERSION}", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name},
            "spec": {"metadata": {"labels": {"team": "infer"}},
                     "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                         "deviceClassName": "gpu.nvidia.com", "count": count}}]}}}}


def gpu_pod(name: str, template_name: str) -> Json:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "app", "image": "nginx:1.27",
                                     "resources": {"claims": [{"name": "gpus"}]}}],
                     "resourceClaims": [{"name": "gpus",
                                         "resourceClaimTemplateName": template_name}]}}


async def test_driver_publishes_class_and_slices(sim_api: client.ApiClient) -> None:
    resource = client.ResourceV1Api(sim_api)

    async def slices() -> list[Any] | None:
        items = (await resource.list_resource_slice()).items
        return items if len(items) == 2 else None

    found = {s.spec.node_name: s for s in await eventually(slices)}
    assert sorted(found) == ["gpu-a", "gpu-b"]
    a = found["gpu-a"]
    assert a.spec.driver == "gpu.nvidia.com" and a.spec.pool.name == "gpu-a"
    assert [d.name for d in a.spec.devices] == ["gpu-0", "gpu-1"]
    attributes = a.spec.devices[1].attributes
    assert attributes["type"].string == "gpu" and attributes["index"].int == 1
    assert attributes["productName"].string == "NVIDIA H100 80GB HBM3"
    assert a.metadata.owner_references[0].kind == "Node"
    klass = await resource.read_device_class("gpu.nvidia.com")
    assert klass.spec.selectors[0].cel.expression == 'device.driver == "gpu.nvidia.com"'


async def test_claims_allocated_then_gpus_run_out_then_freed(sim_api: client.ApiClient,
                                                             core: client.CoreV1Api) -> None:
    resource = client.ResourceV1Api(sim_api)
    await resource.create_namespaced_resource_claim_template(NS, template("one-gpu"))
    await resource.create_namespaced_resource_claim_template(NS, template("two-gpus", 2))
    for name, tmpl in (("p1", "two-gpus"), ("p2", "one-gpu"), ("p3", "one-gpu")):
        await core.create_namespaced_pod(NS, gpu_pod(name, tmpl))

    async def bound(name: str) -> client.V1Pod | None:
        pod = await core.read_namespaced_pod(name, NS)
        return pod if pod.spec.node_name else None

    pods = {n: await eventually(lambda n=n: bound(n)) for n in ("p1", "p2", "p3")}
    p1 = pods["p1"]
    [status] = p1.status.resource_claim_statuses
    assert status.name == "gpus" and status.resource_claim_name.startswith("p1-gpus-")
    claim = await resource.read_namespaced_resource_claim(status.resource_claim_name, NS)
    assert claim.metadata.annotations["resource.kubernetes.io/pod-claim-name"] == "gpus"
    assert claim.metadata.labels == {"team": "infer"}
    owner = claim.metadata.owner_references[0]
    assert (owner.kind, owner.name, owner.uid, owner.controller) == ("Pod", "p1",
                                                                     p1.metadata.uid, True)
    assert claim.metadata.finalizers == ["resource.kubernetes.io/delete-protection"]
    results = claim.status.allocation.devices.results
    assert sorted(r.device for r in results) == ["gpu-0", "gpu-1"]
    assert {(r.request, r.driver, r.pool) for r in results} == {
        ("gpu", "gpu.nvidia.com", p1.spec.node_name)}
    term = claim.status.allocation.node_selector.node_selector_terms[0]
    assert term.match_fields[0].values == [p1.spec.node_name]
    assert [(r.resource, r.name, r.uid) for r in claim.status.reserved_for] == [
        ("pods", "p1", p1.metadata.uid)]
    # Four GPUs, four taken: no two pods share a device, and the CPU node got nothing.
    devices = set()
    for pod in pods.values():
        name = pod.status.resource_claim_statuses[0].resource_claim_name
        allocated = (await resource.read_namespaced_resource_claim(name, NS)).status.allocation
        devices |= {(r.pool, r.device) for r in allocated.devices.results}
        assert pod.spec.node_name != "cpu"
    assert len(devices) == 4

    await core.create_namespaced_pod(NS, gpu_pod("p4", "one-gpu"))

    async def failed() -> str | None:
        events = [e for e in (await core.list_namespaced_event(NS)).items
                  if e.reason == "FailedScheduling" and e.involved_object.name == "p4"]
        return str(events[0].message) if events else None

    assert await eventually(failed) == (
        "0/3 nodes are available: 3 cannot allocate all claims. preemption: 0/3 nodes are"
        " available: 3 No preemption victims found for incoming pod.")
    p4 = await core.read_namespaced_pod("p4", NS)
    assert p4.status.phase == "Pending" and not p4.spec.node_name

    # p2 goes: its claim is deallocated and deleted, and p4 gets its GPU.
    p2_claim = pods["p2"].status.resource_claim_statuses[0].resource_claim_name
    await core.delete_namespaced_pod("p2", NS, grace_period_seconds=0)
    placed = await eventually(lambda: bound("p4"), within=10)
    assert placed.spec.node_name == pods["p2"].spec.node_name

    async def claim_gone() -> bool:
        names = [c.metadata.name for c in
                 (await resource.list_namespaced_resource_claim(NS)).items]
        return p2_claim not in names
    await eventually(claim_gone)


async def test_node_topology_labels(core: client.CoreV1Api) -> None:
    async def nodes() -> dict[str, dict[str, str]] | None:
        items = (await core.list_node()).items
        return {n.metadata.name: n.metadata.labels for n in items} if len(items) == 3 else None

    labels = await eventually(nodes)
    a = labels["gpu-a"]
    assert (a["topology.kubernetes.io/region"], a["topology.kubernetes.io/zone"],
            a["topology.kubernetes.io/block"], a["topology.kubernetes.io/rack"],
            a["kubernetes.io/hostname"]) == ("local", "zone-a", "zone-a-block-0",
                                             "zone-a-rack-0", "gpu-a")
    assert "topology.kubernetes.io/block" not in labels["gpu-b"]
    assert "topology.kubernetes.io/rack" not in labels["cpu"]


def test_default_nodes_topology_is_deterministic() -> None:
    from hack.localcluster.simulation import default_nodes

    nodes = default_nodes(8)
    assert [(n.name, n.zone, n.block, n.rack) for n in nodes[:4]] == [
        ("gpu-node-0", "zone-a", "zone-a-block-0", "zone-a-rack-0"),
        ("gpu-node-1", "zone-b", "zone-b-block-0", "zone-b-rack-0"),
        ("gpu-node-2", "zone-a", "zone-a-block-0", "zone-a-rack-0"),
        ("gpu-node-3", "zone-b", "zone-b-block-0", "zone-b-rack-0")]
    assert (nodes[4].rack, nodes[6].rack) == ("zone-a-rack-1", "zone-a-rack-1")
    assert default_nodes(8) == nodes
