"""What makes rollouts observable, on nodesim's kubelets against the local API server (its own
nodes and kubelets off): readiness and stop delays per pod, nodes with a chosen GPU count and
topology labels so that a surge waits for GPUs, and a frontend counting the complete
prefill+decode pairs per worker generation from the pods the watch shows.

Timings are asserted one way only ("not before the delay")."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yaml
from nodesim_support import QUICK_DELAYS

from hack.localcluster.server import LocalCluster
from hack.localcluster.simulation.behaviors import READY_AFTER, STOP_AFTER
from hack.localcluster.simulation.worker_routes import SERVING_PAIRS_PATH
from hack.localcluster.testing import Kubectl, eventually
from hack.nodesim import NodeSim, NodeSimConfig, nodes

NO_GPUS = ("0/1 nodes are available: 1 Insufficient nvidia.com/gpu. preemption: 0/1 nodes are"
           " available: 1 No preemption victims found for incoming pod.")


@pytest.fixture
async def sim(cluster: LocalCluster, tmp_path: Path) -> AsyncIterator[NodeSim]:
    config = NodeSimConfig(nodes=nodes(1, 2), delays=QUICK_DELAYS)
    async with NodeSim(tmp_path / "kubeconfig", config) as running:
        yield running


async def get(kubectl: Kubectl, *args: str) -> Any:
    return json.loads(await kubectl("get", *args, "-o", "json"))


def ready(pod: Any) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or ())


def bare_pod(name: str, annotations: dict[str, str], **spec: Any) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "Pod",
                       "metadata": {"name": name, "labels": {"app": name},
                                    "annotations": annotations},
                       "spec": {"containers": [{"name": "app", "image": "example.com/a:1"}],
                                **spec}})


async def test_ready_after_and_stop_after_on_nodesim(kubectl: Kubectl, sim: NodeSim) -> None:
    created = time.monotonic()
    await kubectl("apply", "-f", "-", stdin=bare_pod("slow", {READY_AFTER: "1.5"}))

    async def is_ready() -> float | None:
        return time.monotonic() if ready(await get(kubectl, "pod", "slow")) else None

    assert await eventually(is_ready, within=30.0, interval=0.05) - created >= 1.5

    await kubectl("apply", "-f", "-", stdin=bare_pod(
        "drain", {STOP_AFTER: "2"}, terminationGracePeriodSeconds=60))
    await kubectl("apply", "-f", "-", stdin=json.dumps({
        "apiVersion": "v1", "kind": "Service", "metadata": {"name": "drain"},
        "spec": {"selector": {"app": "drain"}, "ports": [{"port": 80}]}}))

    async def listed() -> bool:
        subsets = (await get(kubectl, "endpoints", "drain")).get("subsets") or []
        return any(a.get("targetRef", {}).get("name") == "drain"
                   for s in subsets for a in s.get("addresses") or ())

    await eventually(listed, within=30.0)
    deleted = time.monotonic()
    await kubectl("delete", "pod", "drain", "--wait=false")
    await eventually(lambda: _not(listed()), within=30.0)
    await kubectl("wait", "--for=delete", "pod/drain", "--timeout=60s")
    assert time.monotonic() - deleted >= 2.0


async def _not(check: Any) -> bool:
    return not await check


async def test_nodes_have_their_gpus_and_topology_and_a_surge_waits_for_gpus(
        kubectl: Kubectl, sim: NodeSim) -> None:
    node = (await get(kubectl, "nodes"))["items"][0]
    assert node["status"]["allocatable"]["nvidia.com/gpu"] == "2"
    labels = node["metadata"]["labels"]
    assert (labels["topology.kubernetes.io/zone"], labels["topology.kubernetes.io/block"],
            labels["topology.kubernetes.io/rack"]) == ("zone-a", "zone-a-block-0",
                                                        "zone-a-rack-0")
    engine = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "engine"},
              "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "engine"}},
                       "strategy": {"rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
                       "template": {"metadata": {"labels": {"app": "engine"}}, "spec": {
                           "containers": [{"name": "app", "image": "example.com/engine:1",
                                           "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}}}
    await kubectl("apply", "-f", "-", stdin=json.dumps(engine))
    await kubectl("rollout", "status", "deployment/engine", "--timeout=30s")
    await kubectl("set", "image", "deployment/engine", "app=example.com/engine:2")

    async def surge_pending() -> Any:
        for p in (await get(kubectl, "pods", "-l", "app=engine"))["items"]:
            scheduled = [c for c in p["status"].get("conditions") or ()
                         if c["type"] == "PodScheduled"]
            if scheduled and scheduled[0].get("reason") == "Unschedulable":
                return scheduled[0]
        return None

    assert (await eventually(surge_pending, within=30.0))["message"] == NO_GPUS
    old = [p for p in (await get(kubectl, "pods", "-l", "app=engine"))["items"]
           if p["spec"]["containers"][0]["image"] == "example.com/engine:1"]
    assert len(old) == 2 and all(ready(p) for p in old)


def dynamo_pod(name: str, kind: str, generation: str | None = None) -> Any:
    labels = {"nvidia.com/dynamo-component-type": kind,
              "nvidia.com/dynamo-graph-deployment-name": "g"}
    env = [{"name": "DYN_NAMESPACE", "value": "default-g"}]
    if generation:
        labels["nvidia.com/dynamo-worker-hash"] = generation
        env.append({"name": "DYN_NAMESPACE_WORKER_SUFFIX", "value": generation})
    port = {"name": "http", "containerPort": 8000} if kind == "frontend" else {
        "name": "system", "containerPort": 9090}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": labels},
            "spec": {"containers": [{"name": "main", "image": "dynamo:1", "env": env,
                                     "ports": [port]}]}}


async def test_a_frontend_on_nodesim_counts_pairs_per_generation(
        kubectl: Kubectl, sim: NodeSim) -> None:
    pods = [dynamo_pod("fe", "frontend"), dynamo_pod("p-a", "prefill", "a1"),
            dynamo_pod("d-a", "decode", "a1"), dynamo_pod("p-b", "prefill", "b2"),
            dynamo_pod("d-b-0", "decode", "b2"), dynamo_pod("d-b-1", "decode", "b2")]
    await kubectl("apply", "-f", "-", stdin=yaml.safe_dump_all(pods))
    await kubectl("wait", "--for=condition=Ready", "pod", "--all", "--timeout=30s")
    fe = await get(kubectl, "pod", "fe")
    url = f"http://{fe['status']['podIP']}:8000{SERVING_PAIRS_PATH}"

    async def counted() -> Any:
        async with aiohttp.ClientSession() as http, http.get(url) as r:
            view = await r.json()
        return view if view["pairs"] == 2 else None

    view = await eventually(counted, within=30.0)
    got = {ns: (g["prefill"], g["decode"], g["pairs"])
           for ns, g in view["generations"].items()}
    assert got == {"default-g-a1": (1, 1, 1), "default-g-b2": (1, 2, 1)}
    assert view["crossGenerationPairs"] == 0 and view["misplaced"] == []
    in_process = sim.workers.serving_pairs("default", "fe")
    assert in_process is not None and in_process["generations"] == view["generations"]
