"""Node capacity makes a rollout's surge fail for lack of GPUs, as on a full GPU cluster: the
surge pod stays Pending with the scheduler's FailedScheduling message while the old pods
serve on. The GPUs per node are the test's to choose (`default_nodes(count, gpus)`)."""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes_asyncio import client
from simulation_support import condition, deployment, eventually

from hack.localcluster.simulation import SimulationConfig, default_nodes

NS = "default"
#: What the default scheduler says of a pod no node has the GPUs for.
NO_GPUS = ("0/1 nodes are available: 1 Insufficient nvidia.com/gpu. preemption: 0/1 nodes are"
           " available: 1 No preemption victims found for incoming pod.")


@pytest.fixture
def sim_config() -> SimulationConfig:
    return SimulationConfig(nodes=default_nodes(1, gpus=2))


async def test_a_surge_pod_is_pending_for_lack_of_gpus(core: client.CoreV1Api,
                                                       apps: client.AppsV1Api) -> None:
    node = (await core.list_node()).items[0]
    assert node.status.allocatable["nvidia.com/gpu"] == "2"
    assert {k: v for k, v in node.metadata.labels.items() if k.startswith("topology.")} == {
        "topology.kubernetes.io/region": "local", "topology.kubernetes.io/zone": "zone-a",
        "topology.kubernetes.io/block": "zone-a-block-0",
        "topology.kubernetes.io/rack": "zone-a-rack-0"}
    body: Any = deployment("engine", replicas=2, gpus=1, image="engine:1")
    body["spec"]["strategy"] = {"type": "RollingUpdate",
                                "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}
    await apps.create_namespaced_deployment(NS, body)

    async def available() -> bool:
        d = await apps.read_namespaced_deployment("engine", NS)
        return (d.status.available_replicas or 0) == 2

    await eventually(available, within=30.0)
    patch: Any = {"spec": {"template": {"spec": {"containers": [
        {"name": "app", "image": "engine:2"}]}}}}
    await apps.patch_namespaced_deployment("engine", NS, patch)

    async def surge_pending() -> client.V1Pod | None:
        for p in (await core.list_namespaced_pod(NS, label_selector="app=engine")).items:
            c = condition(p, "PodScheduled")
            if p.spec.containers[0].image == "engine:2" and c is not None \
                    and c.reason == "Unschedulable":
                return p
        return None

    surge = await eventually(surge_pending, within=30.0)
    assert surge.status.phase == "Pending" and surge.spec.node_name is None
    assert condition(surge, "PodScheduled").message == NO_GPUS
    events = [e for e in (await core.list_namespaced_event(NS)).items
              if e.reason == "FailedScheduling" and e.involved_object.name == surge.metadata.name]
    assert events and events[0].type == "Warning" and events[0].message == NO_GPUS
    # The old generation keeps serving: nothing was taken down to make room.
    old = [p for p in (await core.list_namespaced_pod(NS, label_selector="app=engine")).items
           if p.spec.containers[0].image == "engine:1"]
    assert len(old) == 2 and all(condition(p, "Ready").status == "True" for p in old)
    d = await apps.read_namespaced_deployment("engine", NS)
    assert d.status.available_replicas == 2
