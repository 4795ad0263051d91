"""The simulated scheduler: binding, GPU accounting, unschedulable pods and their events."""

from __future__ import annotations

from pathlib import Path

from kubernetes_asyncio import client
from simulation_support import condition, eventually, pod

from hack.localcluster.operations import WriteOptions
from hack.localcluster.simulation import NodeSpec, SimulationConfig
from hack.localcluster.testing import api_client, running_cluster

NS = "default"


async def bound(core: client.CoreV1Api, name: str) -> client.V1Pod | None:
    p = await core.read_namespaced_pod(name, NS)
    scheduled = condition(p, "PodScheduled")
    return p if p.spec.node_name and scheduled and scheduled.status == "True" else None


async def test_pod_is_bound_with_pod_scheduled(core: client.CoreV1Api) -> None:
    await core.create_namespaced_pod(NS, pod("one"))
    p = await eventually(lambda: bound(core, "one"))
    assert p.spec.node_name.startswith("gpu-node-")
    events = (await core.list_namespaced_event(NS)).items
    scheduled = [e for e in events if e.reason == "Scheduled"]
    assert scheduled and scheduled[0].message == f"Successfully assigned {NS}/one to " \
                                                 f"{p.spec.node_name}"
    assert scheduled[0].source.component == "default-scheduler"


async def test_gpu_pods_spread_and_fill_nodes(core: client.CoreV1Api) -> None:
    # Four nodes with 8 GPUs: four 8-GPU pods take one node each; a fifth fits nowhere.
    for i in range(5):
        await core.create_namespaced_pod(NS, pod(f"big-{i}", gpus=8))
    placed = []
    for i in range(4):
        p = await eventually(lambda i=i: bound(core, f"big-{i}"))  # type: ignore[misc]
        placed.append(p.spec.node_name)
    assert sorted(placed) == [f"gpu-node-{i}" for i in range(4)]

    async def unschedulable() -> client.V1PodCondition | None:
        c = condition(await core.read_namespaced_pod("big-4", NS), "PodScheduled")
        return c if c is not None and c.reason == "Unschedulable" else None

    cond = await eventually(unschedulable)
    assert cond.status == "False"
    assert cond.message.startswith("0/4 nodes are available: 4 Insufficient nvidia.com/gpu.")
    events = [e for e in (await core.list_namespaced_event(NS)).items
              if e.reason == "FailedScheduling"]
    assert events and events[0].type == "Warning"
    assert events[0].involved_object.name == "big-4"
    p = await core.read_namespaced_pod("big-4", NS)
    assert p.status.phase == "Pending" and p.spec.node_name is None

    # Room frees up: the waiting pod gets the node.
    await core.delete_namespaced_pod("big-1", NS, grace_period_seconds=0)
    p = await eventually(lambda: bound(core, "big-4"))
    assert p.spec.node_name == placed[1]


async def test_requests_limits_and_selectors(core: client.CoreV1Api) -> None:
    body = pod("picky")
    body["spec"]["nodeSelector"] = {"nvidia.com/gpu.product": "NVIDIA-B200"}
    await core.create_namespaced_pod(NS, body)

    async def message() -> str | None:
        c = condition(await core.read_namespaced_pod("picky", NS), "PodScheduled")
        return str(c.message) if c is not None and c.message else None

    text = await eventually(message)
    assert text.startswith("0/4 nodes are available: 4 node(s) didn't match Pod's node"
                           " affinity/selector.")
    assert "4 Preemption is not helpful for scheduling." in text

    hungry = pod("hungry")
    hungry["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "100", "memory": "1Gi"}}
    await core.create_namespaced_pod(NS, hungry)

    async def insufficient() -> str | None:
        c = condition(await core.read_namespaced_pod("hungry", NS), "PodScheduled")
        return str(c.message) if c is not None and c.message else None

    assert (await eventually(insufficient)).startswith(
        "0/4 nodes are available: 4 Insufficient cpu.")


async def test_scheduling_gates_hold_a_pod(core: client.CoreV1Api) -> None:
    body = pod("gated")
    body["spec"]["schedulingGates"] = [{"name": "example.com/wait"}]
    await core.create_namespaced_pod(NS, body)

    async def gated() -> bool:
        c = condition(await core.read_namespaced_pod("gated", NS), "PodScheduled")
        return c is not None and c.reason == "SchedulingGated"

    await eventually(gated)


async def test_untolerated_taint_and_cordon(tmp_path: Path) -> None:
    nodes = [NodeSpec("tainted", taints=({"key": "dedicated", "value": "infer",
                                          "effect": "NoSchedule"},)),
             NodeSpec("cordoned")]
    async with running_cluster(tmp_path, simulation=SimulationConfig(nodes=nodes)) as cluster:
        api = await api_client(tmp_path / "kubeconfig")
        try:
            core = client.CoreV1Api(api)
            await eventually(lambda: cluster.storage.count(("", "nodes")) == 2)
            await core.patch_node("cordoned", {"spec": {"unschedulable": True}})
            await core.create_namespaced_pod(NS, pod("p"))

            async def message() -> str | None:
                c = condition(await core.read_namespaced_pod("p", NS), "PodScheduled")
                return str(c.message) if c is not None and c.message else None

            text = await eventually(message)
            assert text.startswith("0/2 nodes are available: 1 node(s) had untolerated taint"
                                   " {dedicated: infer}, 1 node(s) were unschedulable.")
            tolerant = pod("t")
            tolerant["spec"]["tolerations"] = [{"key": "dedicated", "operator": "Exists"}]
            await core.create_namespaced_pod(NS, tolerant)
            p = await eventually(lambda: bound(core, "t"))
            assert p.spec.node_name == "tainted"
        finally:
            await api.close()


async def test_without_scheduler_pods_stay_pending(tmp_path: Path) -> None:
    config = SimulationConfig().without("scheduler")
    async with running_cluster(tmp_path, simulation=config) as cluster:
        assert cluster.simulation is not None
        rt = cluster.registry.get("", "v1", "pods")
        assert rt is not None
        cluster.ops.create(rt, NS, pod("idle"), WriteOptions(manager="test"))
        await cluster.simulation.settle()
        stored = cluster.storage.get(("", "pods"), NS, "idle")
        assert stored is not None
        assert stored["status"] == {"phase": "Pending", "qosClass": "BestEffort"}
        assert "nodeName" not in stored["spec"]
