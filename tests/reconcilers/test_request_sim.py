"""The DGDR controller with the simulated cluster's profiler: a request runs its profiling Job
on a simulated node, the simulated profiler answers, and with autoApply the generated graph
comes up through the graph and component controllers."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from operator_harness import (
    Operator,
    condition,
    eventually,
    wait_for,
)
from request_support import NS, Json, request, request_client, sim_operator

from controller.client import KubeClient
from hack.localcluster.server import LocalCluster
from hack.our_crds import DEPLOYMENT_REQUESTS, GRAPH_DEPLOYMENTS


@pytest.fixture
async def kube(sim_cluster: LocalCluster, tmp_path: Path) -> AsyncIterator[KubeClient]:
    async with request_client(tmp_path / "sim" / "kubeconfig") as client:
        yield client


@pytest.fixture
async def operator(kube: KubeClient, tmp_path: Path) -> AsyncIterator[Operator]:
    async with sim_operator(tmp_path / "sim" / "kubeconfig") as op:
        yield op


async def states_until(kube: KubeClient, name: str, final: str) -> list[str]:
    """Every state the request is seen in, in order, until `final`."""
    seen: list[str] = []

    async def reached() -> bool:
        obj = await kube.get(DEPLOYMENT_REQUESTS, NS, name)
        state = (obj.get("status") or {}).get("state") or ""
        if not seen or seen[-1] != state:
            seen.append(state)
        return state == final

    await eventually(reached, within=20.0, interval=0.005)
    return seen


async def test_auto_apply_goes_to_ready_with_a_running_graph(kube: KubeClient,
                                                             operator: Operator) -> None:
    await kube.create(DEPLOYMENT_REQUESTS, request("sla", autoApply=True, profilingConfig={
        "profilerImage": "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.8.0",
        "config": {"sla": {"ttft": 150, "itl": 10}}}))
    seen = await states_until(kube, "sla", "Ready")
    # Every state is passed through in order (a fast poll may miss a short one, never reorder).
    order = ["", "Pending", "Profiling", "Deploying", "Ready"]
    assert [order.index(s) for s in seen] == sorted(order.index(s) for s in seen)
    assert "Deploying" in seen
    obj = await kube.get(DEPLOYMENT_REQUESTS, NS, "sla")
    assert obj["status"]["deployment"] == {"name": "vllm-disagg", "created": True}
    dgd = await kube.get(GRAPH_DEPLOYMENTS, NS, "vllm-disagg")
    assert dgd["status"]["state"] == "successful"
    services = dgd["spec"]["services"]
    assert set(services) == {"Frontend", "Planner", "VllmPrefillWorker", "VllmDecodeWorker"}
    # Qwen3-0.6B: 40 ms/B prefill fits ttft 150 on one GPU (two replicas, ttft < 200);
    # 3 ms/B decode fits itl 10 on one GPU (two replicas, itl < 20).
    assert services["VllmPrefillWorker"]["resources"]["limits"]["gpu"] == "1"
    assert services["VllmDecodeWorker"]["replicas"] == 2
    assert condition(obj, "DeploymentReady")["status"] == "True"


async def test_infeasible_sla_fails_with_the_profilers_message(kube: KubeClient,
                                                               operator: Operator) -> None:
    await kube.create(DEPLOYMENT_REQUESTS, request("fast", profilingConfig={
        "profilerImage": "img", "config": {"sla": {"ttft": 5, "itl": 10}}}))
    obj = await wait_for(kube, DEPLOYMENT_REQUESTS, NS, "fast",
                         lambda o: (o.get("status") or {}).get("state") == "Failed",
                         within=20.0)
    message = condition(obj, "Profiling")["message"]
    assert message.startswith("profiling job failed: Job has reached the specified backoff")
    assert "Pod: profile-fast-" in message
    assert "Container: profiler, ExitCode: 1" in message
    assert "ttft 5 ms is below the 10 ms floor" in message


async def test_mocker_graph_needs_no_gpus(kube: KubeClient, operator: Operator) -> None:
    await kube.create(DEPLOYMENT_REQUESTS, request("mock", useMocker=True))
    obj = await wait_for(kube, DEPLOYMENT_REQUESTS, NS, "mock",
                         lambda o: (o.get("status") or {}).get("state") == "Ready",
                         within=20.0)
    # The generated graph is the v1beta1 one the request would create.
    generated: Json = obj["status"]["generatedDeployment"]
    assert generated["metadata"]["name"] == "vllm-mocker"
    workers = [c for c in generated["spec"]["components"] if c["type"] in ("prefill", "decode")]
    mains = [next(m for m in w["podTemplate"]["spec"]["containers"] if m["name"] == "main")
             for w in workers]
    assert len(mains) == 2 and all("resources" not in m for m in mains)
    assert all(m["command"][-1] == "dynamo.mocker" for m in mains)
