"""Graphs that cannot become ready, and graphs the API rejects: the reason says why."""

from __future__ import annotations

import json

from e2e_support import DGD, Env, OperatorProcess, eventually

IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.6.1"


def graph(name: str, worker: dict[str, object]) -> str:
    spec = {"componentType": "worker", "replicas": 1,
            "extraPodSpec": {"mainContainer": {"image": IMAGE}}, **worker}
    return json.dumps({
        "apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment",
        "metadata": {"name": name},
        "spec": {"backendFramework": "vllm", "services": {
            "Frontend": {"componentType": "frontend", "replicas": 1,
                         "extraPodSpec": {"mainContainer": {"image": IMAGE}}},
            "VllmWorker": spec}}})


async def test_worker_never_ready_is_named(env: Env, operator: OperatorProcess) -> None:
    # the simulated kubelet keeps a pod unready while it carries localcluster.dev/ready=false
    await env.k("apply", "-f", "-", stdin=graph("stuck", {
        "resources": {"limits": {"gpu": "1"}},
        "extraPodMetadata": {"annotations": {"localcluster.dev/ready": "false"}}}))
    # Named with its counts; which rollout step the pending message shows is progress, not
    # rewritten at every step (issue 20: at most one intermediate status per object).
    cond = await env.wait_reason("stuck", "VllmWorker: 0/1 replicas")
    assert cond["reason"] == "some_resources_are_not_ready", cond

    async def only_worker() -> bool:  # once the frontend is ready, only the worker is named
        message = str((await env.ready("stuck")).get("message"))
        return "Frontend" not in message and "VllmWorker" in message
    await eventually(only_worker, what="only the worker named")
    out = await env.k("get", DGD, "stuck", "-o", "wide")
    assert "pending" in out, out


async def test_too_many_gpus_is_unschedulable(env: Env, operator: OperatorProcess) -> None:
    # every simulated node has 8 GPUs; 16 in one pod fit nowhere
    await env.k("apply", "-f", "-", stdin=graph("huge", {
        "resources": {"limits": {"gpu": "16"}}}))
    cond = await env.wait_reason("huge", "unschedulable")
    assert cond["reason"] == "insufficient_capacity", cond
    assert "huge-vllmworker" in cond["message"], cond


async def test_invalid_graph_is_rejected_naming_the_field(
        env: Env, operator: OperatorProcess) -> None:
    bad = json.loads(graph("bad", {}))
    bad["spec"]["backendFramework"] = "tensorflow"
    code, out = await env.k_result("apply", "-f", "-", stdin=json.dumps(bad))
    assert code != 0
    assert "spec.backendFramework" in out, out
    assert "Unsupported value" in out or "Invalid value" in out, out

    bad = json.loads(graph("bad", {"replicas": -1}))
    code, out = await env.k_result("apply", "-f", "-", stdin=json.dumps(bad))
    assert code != 0
    assert "spec.services.VllmWorker.replicas" in out, out
    assert await env.get(DGD, "bad") is None
