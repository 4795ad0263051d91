"""hack.nodesim against the local API server, whose own nodes and kubelets are switched off:
the same client that runs pods on the real control plane (tests/realcluster/
test_nodesim_kubelets.py) runs them here, with the local scheduler and controllers."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from nodesim_support import QUICK_DELAYS

from hack.localcluster.server import LocalCluster
from hack.localcluster.testing import Kubectl
from hack.nodesim import NodeSim, NodeSimConfig, PodDelays, nodes


@pytest.fixture
async def sim(cluster: LocalCluster, tmp_path: Path) -> AsyncIterator[NodeSim]:
    config = NodeSimConfig(nodes=nodes(2, 4), delays=QUICK_DELAYS)
    async with NodeSim(tmp_path / "kubeconfig", config) as running:
        yield running


async def test_pods_run_on_nodesim_nodes(kubectl: Kubectl, sim: NodeSim) -> None:
    nodes_json = json.loads(await kubectl("get", "nodes", "-o", "json"))["items"]
    assert sorted(n["metadata"]["name"] for n in nodes_json) == sim.node_names
    await kubectl("create", "deployment", "engine", "--image=example.com/engine:1",
                  "--replicas=3")
    await kubectl("rollout", "status", "deployment/engine", "--timeout=30s")
    pods = json.loads(await kubectl("get", "pods", "-o", "json"))["items"]
    assert {p["spec"]["nodeName"] for p in pods} <= set(sim.node_names)
    assert all(p["status"]["phase"] == "Running" for p in pods)
    name = pods[0]["metadata"]["name"]
    await kubectl("delete", "pod", name, "--wait=false")
    await kubectl("wait", "--for=delete", f"pod/{name}", "--timeout=30s")
    assert sim.figures()["pod_deletes"] == 1


async def test_job_completes(kubectl: Kubectl, sim: NodeSim) -> None:
    await kubectl("create", "job", "once", "--image=example.com/tool:1")
    await kubectl("wait", "--for=condition=Complete", "job/once", "--timeout=30s")


async def test_a_restarted_simulator_resumes_running_pods(kubectl: Kubectl, cluster: LocalCluster,
                                                         tmp_path: Path) -> None:
    config = NodeSimConfig(nodes=nodes(1, 4, "keep"), delete_nodes_on_exit=False,
                           delays=PodDelays(pod_start=0.05, ready_delay=0.5))
    async with NodeSim(tmp_path / "kubeconfig", config):
        await kubectl("create", "deployment", "web", "--image=example.com/web:1")
        await kubectl("rollout", "status", "deployment/web", "--timeout=30s")
    before = json.loads(await kubectl("get", "pods", "-o", "json"))["items"]
    async with NodeSim(tmp_path / "kubeconfig", config) as again:
        await asyncio.sleep(1.0)  # longer than the readiness delay a new start would take
        after = json.loads(await kubectl("get", "pods", "-o", "json"))["items"]
        # Nothing restarted or flipped: the same IP, still ready, no status written.
        assert again.figures()["status_writes"] == 0
    assert [p["status"]["podIP"] for p in after] == [p["status"]["podIP"] for p in before]
    assert [p["metadata"]["resourceVersion"] for p in after] == [
        p["metadata"]["resourceVersion"] for p in before]
