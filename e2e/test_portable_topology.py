"""The portable topology variables on a live cluster (issue #29): a multinode SGLang graph
created by this operator (stamped with its origin version, 0.2.0) runs LeaderWorkerSet pods,
or Grove pods (with Grove's CRDs), whose `main` carries `DYNAMO_RANK` and
`DYNAMO_LEADER_ADDRESS` and whose launch reads them; a graph stamped by the previous release
(0.1.0) runs the pods it always ran.

The operator runs without webhooks, so the stamp is stated on the graphs, as a graph created
with the webhooks on carries it (`backends.origin_gates`)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from e2e_support import Env, OperatorProcess, eventually
from grove_support import on_grove

from hack.localcluster.server import LocalCluster

Json = dict[str, Any]
ORIGIN = "nvidia.com/dynamo-operator-origin-version"
IMAGE = "nvcr.io/nvidia/ai-dynamo/sglang-runtime:0.7.0"
LWS_NAME = "leaderworkerset.sigs.k8s.io/name"
GROVE_LEADER = "$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-decode-ldr-0.$(GROVE_HEADLESS_SERVICE)"


def _graph(name: str, origin: str) -> Json:
    return {
        "apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment",
        "metadata": {"name": name, "annotations": {ORIGIN: origin}},
        "spec": {"backendFramework": "sglang", "services": {
            "Frontend": {"componentType": "frontend", "replicas": 1,
                         "extraPodSpec": {"mainContainer": {"image": IMAGE}}},
            "Decode": {
                "componentType": "worker", "replicas": 1, "multinode": {"nodeCount": 2},
                "resources": {"limits": {"gpu": "1"}},
                "extraPodSpec": {"mainContainer": {
                    "image": IMAGE, "command": ["python3", "-m", "dynamo.sglang"],
                    "args": ["--model-path", "Qwen/Qwen3-0.6B", "--tp", "2"]}}}}},
    }


async def _main_containers(env: Env, graph: str) -> dict[str, Json]:
    """leader/worker -> `main` of that pod of the graph's worker LeaderWorkerSet."""
    pods = await env.get("pods", selector=f"{LWS_NAME}={graph}-decode-0")
    found = {}
    for pod in pods["items"]:
        kind = pod["metadata"]["labels"]["role"]  # the operator's role label
        found[kind] = next(c for c in pod["spec"]["containers"] if c["name"] == "main")
    assert sorted(found) == ["leader", "worker"], found
    return found


def _env(container: Json) -> dict[str, Any]:
    return {e["name"]: e.get("value") for e in container.get("env") or []}


async def test_a_graph_created_now_tells_its_pods_their_place(
        env: Env, operator: OperatorProcess) -> None:
    await env.k("apply", "-f", "-", stdin=json.dumps(_graph("topo-new", "0.2.0")))
    await env.k("apply", "-f", "-", stdin=json.dumps(_graph("topo-old", "0.1.0")))
    await env.wait_ready("topo-new", seconds=90)
    await env.wait_ready("topo-old", seconds=90)

    for kind, main in (await _main_containers(env, "topo-new")).items():
        assert _env(main)["DYNAMO_RANK"] == "$(LWS_WORKER_INDEX)", kind
        assert _env(main)["DYNAMO_LEADER_ADDRESS"] == "$(LWS_LEADER_ADDRESS)", kind
        assert main["args"][-6:] == ["--dist-init-addr", "$(DYNAMO_LEADER_ADDRESS):29500",
                                     "--nnodes", "2", "--node-rank", "$(DYNAMO_RANK)"], kind

    old = await _main_containers(env, "topo-old")
    for main in old.values():
        assert "DYNAMO_RANK" not in _env(main) and "DYNAMO_LEADER_ADDRESS" not in _env(main)
    assert old["leader"]["args"][-2:] == ["--node-rank", "0"]
    assert old["worker"]["args"][-2:] == ["--node-rank", "$(LWS_WORKER_INDEX)"]


async def _clique_mains(env: Env, graph: str) -> dict[str, Json]:
    """leader/worker -> `main` of the graph's Decode pod of that Grove clique."""
    selector = f"nvidia.com/dynamo-graph-deployment-name={graph},nvidia.com/dynamo-component=Decode"
    found = {}
    for pod in (await env.get("pods", selector=selector))["items"]:
        clique = pod["metadata"]["labels"]["grove.io/podclique"]
        kind = "leader" if clique.endswith("-ldr") else "worker"
        found[kind] = next(c for c in pod["spec"]["containers"] if c["name"] == "main")
    assert sorted(found) == ["leader", "worker"], found
    return found


async def test_on_grove_the_variables_come_from_the_scaling_group(
        env: Env, needs_local: LocalCluster,
        operators: Callable[..., Awaitable[OperatorProcess]]) -> None:
    await on_grove(env, operators)
    await env.k("apply", "-f", "-", stdin=json.dumps(_graph("grove-new", "0.2.0")))
    await env.k("apply", "-f", "-", stdin=json.dumps(_graph("grove-old", "0.1.0")))
    await env.wait_ready("grove-new", seconds=90)
    await env.wait_ready("grove-old", seconds=90)
    assert await env.names("podcliquesets.grove.io") == ["grove-new", "grove-old"]

    for kind, main in (await _clique_mains(env, "grove-new")).items():
        assert _env(main)["DYNAMO_RANK"] == "$(GROVE_PCSG_POD_INDEX)", kind
        assert _env(main)["DYNAMO_LEADER_ADDRESS"] == GROVE_LEADER, kind
        assert main["command"] == ["python3", "-m", "dynamo.sglang"], kind  # no shell
        assert main["args"][-2:] == ["--node-rank", "$(DYNAMO_RANK)"], kind

    async def old_pods() -> dict[str, Json] | None:
        try:
            return await _clique_mains(env, "grove-old")
        except AssertionError:
            return None
    old = await eventually(old_pods, within=30, what="grove-old's leader and worker pods")
    for main in old.values():
        assert "DYNAMO_RANK" not in _env(main) and "DYNAMO_LEADER_ADDRESS" not in _env(main)
    # Grove's worker rank as it always was: shell arithmetic on the clique's pod index.
    assert old["worker"]["command"] == ["sh", "-c"]
    assert old["worker"]["args"][0].endswith("--node-rank $((GROVE_PCLQ_POD_INDEX + 1))")
