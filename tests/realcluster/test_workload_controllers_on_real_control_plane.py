"""Multinode graphs on the real Kubernetes 1.20 control plane: the LeaderWorkerSet and Grove
controllers of the in-process simulation run as API clients (`hack.nodesim.WorkloadSim`),
beside hack.nodesim's nodes and kubelets, the real scheduler and garbage collector.

deploy/examples/vllm-multinode.yaml (one worker replica across 2 nodes x 4 GPUs) goes
through a LeaderWorkerSet (`--grove=false`), then through a Grove PodCliqueSet (`--grove=true`),
and reaches Ready each time. The LWS and Grove CRDs (hack/crds) are installed for these tests
only and removed afterwards: other tests' operators run with `--grove=auto`.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from e2e.e2e_support import DGD, Env, OperatorProcess
from hack.localcluster.testing import Kubectl
from hack.nodesim import NodeSim, NodeSimConfig, PodDelays, WorkloadSim, nodes

pytestmark = pytest.mark.timeout(180, func_only=True)

Json = dict[str, Any]
ROOT = Path(__file__).resolve().parents[2]
CRD_FILES = [ROOT / "hack" / "crds" / "leaderworkerset.yaml", ROOT / "hack" / "crds" / "grove.yaml"]
GRAPH = "vllm-mn"
LWS_NAME = "leaderworkerset.sigs.k8s.io/name"
CLIQUE = "grove.io/podclique"


@pytest.fixture
async def workload_crds(kubectl: Kubectl) -> AsyncIterator[None]:
    files = [a for path in CRD_FILES for a in ("-f", str(path))]
    await kubectl("apply", "--validate=false", *files)
    await kubectl("wait", "--for=condition=Established", "--timeout=30s", *files)
    yield
    await kubectl.run("delete", "--timeout=60s", *files)


@pytest.fixture
async def sims(real_kubeconfig: Path, workload_crds: None
               ) -> AsyncIterator[tuple[NodeSim, WorkloadSim]]:
    config = NodeSimConfig(nodes=nodes(3, 8, f"mn-{uuid.uuid4().hex[:4]}"),
                           delays=PodDelays(ready_delay=0.5))
    async with NodeSim(real_kubeconfig, config) as sim, WorkloadSim(real_kubeconfig) as workloads:
        yield sim, workloads


def _running_ready(pod: Json) -> bool:
    status = pod.get("status") or {}
    return status.get("phase") == "Running" and any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in status.get("conditions") or ())


async def _graph_ready(env: Env) -> float:
    started = time.monotonic()
    await env.apply_example("vllm-multinode")
    await env.wait_ready(GRAPH, 120)
    return time.monotonic() - started


async def test_a_multinode_graph_reaches_ready_through_a_leader_worker_set(
        env: Env, sims: tuple[NodeSim, WorkloadSim],
        operators: Callable[..., Awaitable[OperatorProcess]]) -> None:
    sim, _ = sims
    await operators("op", "--grove=false")
    seconds = await _graph_ready(env)
    (lws,) = (await env.get("leaderworkersets.leaderworkerset.x-k8s.io"))["items"]
    assert lws["metadata"]["ownerReferences"][0]["kind"] == "DynamoComponentDeployment"
    assert lws["spec"]["leaderWorkerTemplate"]["size"] == 2
    assert lws["status"].get("readyReplicas") == 1, lws["status"]
    pods = (await env.get("pods", selector=LWS_NAME))["items"]
    # One group: the leader `<lws>-0` and its worker `<lws>-0-1`, each with 4 GPUs, placed by
    # the real scheduler on the simulated nodes and run by their kubelets.
    name = lws["metadata"]["name"]
    assert sorted(p["metadata"]["name"] for p in pods) == [f"{name}-0", f"{name}-0-1"]
    assert all(_running_ready(p) and p["spec"]["nodeName"] in sim.node_names for p in pods)
    assert all(int(p["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"]) == 4
               for p in pods)
    frontend = await env.get("deployment", f"{GRAPH}-frontend")
    assert frontend["status"].get("readyReplicas") == 1
    print(f"{GRAPH} Ready through a LeaderWorkerSet in {seconds:.1f}s")


async def test_a_multinode_graph_reaches_ready_through_grove(
        env: Env, sims: tuple[NodeSim, WorkloadSim],
        operators: Callable[..., Awaitable[OperatorProcess]]) -> None:
    sim, _ = sims
    await operators("op", "--grove=true")
    seconds = await _graph_ready(env)
    (pcs,) = (await env.get("podcliquesets.grove.io"))["items"]
    assert pcs["metadata"]["name"] == GRAPH
    assert pcs["status"].get("availableReplicas") == 1, pcs["status"]
    cliques = (await env.get("podcliques.grove.io"))["items"]
    groups = (await env.get("podcliquescalinggroups.grove.io"))["items"]
    assert groups, "the multinode worker is a PodCliqueScalingGroup"
    pods = (await env.get("pods", selector=CLIQUE))["items"]
    assert {p["metadata"]["labels"][CLIQUE] for p in pods} == {
        c["metadata"]["name"] for c in cliques}
    assert all(_running_ready(p) and p["spec"]["nodeName"] in sim.node_names for p in pods)
    assert not (await env.get("deployments"))["items"], "Grove graphs have no Deployments"
    print(f"{GRAPH} Ready through Grove in {seconds:.1f}s: {len(cliques)} PodCliques,"
          f" {len(pods)} pods; {DGD} -> PodCliqueSet -> PodCliques")
