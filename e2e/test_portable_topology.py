"""The portable topology variables on a live cluster (issue #29): a multinode SGLang graph
created by this operator (stamped with its origin version, 0.2.0) runs LeaderWorkerSet pods
whose `main` carries `DYNAMO_RANK` and `DYNAMO_LEADER_ADDRESS` and whose launch reads them;
a graph stamped by the previous release (0.1.0) runs the pods it always ran.

The operator runs without webhooks, so the stamp is stated on the graphs, as a graph created
with the webhooks on carries it (`backends.origin_gates`)."""

from __future__ import annotations

import json
from typing import Any

from e2e_support import Env, OperatorProcess

Json = dict[str, Any]
ORIGIN = "nvidia.com/dynamo-operator-origin-version"
IMAGE = "nvcr.io/nvidia/ai-dynamo/sglang-runtime:0.7.0"
LWS_NAME = "leaderworkerset.sigs.k8s.io/name"


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
