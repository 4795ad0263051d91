"""DynamoGraphDeploymentRequests through kubectl, with the simulated profiler: autoApply to a
running graph (states watched with `kubectl get dgdr -w`), the spec extracted and created by
hand, an infeasible SLA explained by `kubectl describe`, a deleted graph, a deleted request,
mocker graphs without GPUs, GPU discovery, silence in a terminal state, and an intent-based
v1beta1 request as the upstream reference writes it."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
import yaml
from e2e_support import DCD, DGD, DGDR, EXAMPLES, Env, OperatorProcess, eventually, watched_column

from hack.localcluster.request_stats import WRITE_VERBS

Start = Callable[..., Awaitable[OperatorProcess]]
HUB_DGDR = "dynamographdeploymentrequests.v1beta1.nvidia.com"
PROFILING_ROLE = ("--dgdr-profiling-cluster-role-name", "dynamo-dgdr-profiling")
IDLE = float(os.environ.get("E2E_IDLE_SECONDS", "2"))


@pytest.fixture
async def dgdr_operator(operators: Start) -> OperatorProcess:
    return await operators("op", *PROFILING_ROLE)


def request(name: str, **spec: Any) -> str:
    body: dict[str, Any] = {
        "model": "Qwen/Qwen3-0.6B", "backend": "vllm",
        "profilingConfig": {"profilerImage": "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.8.0",
                            "config": {"sla": {"ttft": 200, "itl": 20}}}}
    body.update(spec)
    return json.dumps({"apiVersion": "nvidia.com/v1alpha1",
                       "kind": "DynamoGraphDeploymentRequest",
                       "metadata": {"name": name}, "spec": body})


def table_row(out: str) -> dict[str, str]:
    """The first row of a `kubectl get` table by column (blank cells as "")."""
    header, row = out.splitlines()[:2]
    starts = [i for i, ch in enumerate(header) if ch != " " and (i == 0 or header[i - 1] == " ")]
    ends = [*starts[1:], max(len(row), len(header)) + 1]
    return {header[a:b].strip(): row[a:b].strip() for a, b in zip(starts, ends, strict=True)}


async def wait_state(env: Env, name: str, state: str, seconds: int = 60) -> None:
    await env.k("wait", f"--for=jsonpath={{.status.state}}={state}", f"{DGDR}/{name}",
                f"--timeout={seconds}s")


async def test_auto_apply_to_ready_then_graph_deleted(env: Env,
                                                      dgdr_operator: OperatorProcess) -> None:
    async with watched_column(env, DGDR, ".status.state") as states:
        await env.apply_example("dgdr-auto-apply")
        await wait_state(env, "qwen-sla", "Ready")
        await env.wait_ready("qwen-prod")

        async def seen_ready() -> bool:
            return "Ready" in states
        await eventually(seen_ready, what="Ready in kubectl get -w")
    assert states == ["<none>", "Pending", "Profiling", "Deploying", "Ready"], states
    # The status is v1beta1's (phase Deployed); v1alpha1 reads it as Ready with its graph.
    columns = table_row(await env.k("get", DGDR, "qwen-sla", "-o", "wide"))
    assert (columns["MODEL"], columns["BACKEND"], columns["STATE"], columns["DGD"]) == (
        "Qwen/Qwen3-0.6B", "", "Ready", "qwen-prod")
    columns = table_row(await env.k("get", HUB_DGDR, "qwen-sla", "-o", "wide"))
    assert (columns["MODEL"], columns["BACKEND"], columns["PHASE"], columns["DGD"],
            columns["JOB"]) == ("Qwen/Qwen3-0.6B", "vllm", "Deployed", "qwen-prod",
                                "profile-qwen-sla")
    dgd = await env.get(DGD, "qwen-prod")
    assert dgd["metadata"]["labels"]["team"] == "inference"
    assert "ownerReferences" not in dgd["metadata"]

    # A deleted graph fails the request (the original's v1beta1), and is not recreated.
    await env.k("delete", DGD, "qwen-prod")
    await wait_state(env, "qwen-sla", "Failed")
    described = await env.k("describe", DGDR, "qwen-sla")
    assert "DeploymentDeleted" in described
    assert await env.get(DGD, "qwen-prod") is None


async def test_spec_only_then_created_by_hand(env: Env, dgdr_operator: OperatorProcess) -> None:
    await env.apply_example("dgdr-spec-only")
    await wait_state(env, "qwen-review", "Ready")
    assert await env.names(DGD) == []
    spec = await env.k("get", DGDR, "qwen-review", "-o",
                       "jsonpath={.status.generatedDeployment}")
    graph = json.loads(spec)
    await env.k("create", "-f", "-", stdin=spec)
    await env.wait_ready(graph["metadata"]["name"], seconds=90)


async def test_infeasible_sla_is_described(env: Env, dgdr_operator: OperatorProcess) -> None:
    await env.k("apply", "-f", "-", stdin=request("too-fast", profilingConfig={
        "profilerImage": "img", "config": {"sla": {"ttft": 5, "itl": 20}}}))
    await wait_state(env, "too-fast", "Failed")
    described = " ".join((await env.k("describe", DGDR, "too-fast")).split())
    for part in ("profiling job failed:", "Pod: profile-too-fast-", "Container: profiler",
                 "ExitCode: 1", "ttft 5 ms is below the 10 ms floor", "ProfilingCheckFailed"):
        assert part in described, (part, described)


async def test_mocker_without_gpus_survives_its_request(env: Env,
                                                        dgdr_operator: OperatorProcess) -> None:
    await env.apply_example("dgdr-mocker")
    await wait_state(env, "qwen-mocker", "Ready")
    await env.wait_ready("vllm-mocker")
    for dcd in (await env.get(DCD))["items"]:
        limits = ((dcd["spec"].get("resources") or {}).get("limits") or {})
        assert "gpu" not in limits, dcd["metadata"]["name"]
    for pod in (await env.get("pods", selector="nvidia.com/dynamo-graph-deployment-name="
                                               "vllm-mocker"))["items"]:
        for c in pod["spec"]["containers"]:
            assert "nvidia.com/gpu" not in (c.get("resources") or {}).get("limits", {})
    await env.k("delete", DGDR, "qwen-mocker", "--wait=true")
    assert await env.get(DGD, "vllm-mocker") is not None


async def test_gpu_discovery_reads_the_nodes(env: Env, dgdr_operator: OperatorProcess) -> None:
    await env.k("apply", "-f", "-", stdin=request("discover", enableGpuDiscovery=True))
    await wait_state(env, "discover", "Ready")
    job = await env.get("job", "profile-discover")
    args = job["spec"]["template"]["spec"]["containers"][0]["args"]
    config = yaml.safe_load(args[args.index("--profile-config") + 1])
    assert config["hardware"] == {"num_gpus_per_node": 8,
                                  "gpu_model": "NVIDIA-H100-80GB-HBM3",
                                  "system": "h100_sxm", "gpu_vram_mib": 81559}
    assert "--enable-gpu-discovery" in args


async def test_terminal_request_makes_no_writes(env: Env, needs_local: Any,
                                                dgdr_operator: OperatorProcess) -> None:
    await env.k("apply", "-f", "-", stdin=request("done", profilingConfig={
        "profilerImage": "img", "config": {"sla": {"ttft": 1, "itl": 20}}}))
    await wait_state(env, "done", "Failed")
    await asyncio.sleep(0.5)
    needs_local.stats.reset()
    await asyncio.sleep(IDLE)
    snapshot = needs_local.stats.snapshot()
    writes = [s for s in snapshot if str(s["userAgent"]).startswith("dynamo-operator")
              and s["verb"] in WRITE_VERBS and not str(s["resource"]).startswith("leases")]
    assert writes == [], writes


def test_examples_use_the_current_namespace() -> None:
    for name in ("dgdr-auto-apply", "dgdr-spec-only", "dgdr-config-map-ref", "dgdr-mocker"):
        for doc in yaml.safe_load_all((EXAMPLES / f"{name}.yaml").read_text()):
            assert "namespace" not in doc["metadata"], name


async def test_namespace_restricted_operator_profiles_with_a_role(env: Env,
                                                                  operators: Start) -> None:
    await operators("op", "--restricted-namespace", env.namespace)
    await env.k("apply", "-f", "-", stdin=request("local", autoApply=True))
    await wait_state(env, "local", "Ready")
    binding = await env.get("rolebinding", "dgdr-profiling-job-binding")
    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                                  "name": "dgdr-profiling-job"}
    await env.k("apply", "-f", "-", stdin=request("gpus", enableGpuDiscovery=True))
    await wait_state(env, "gpus", "Failed")
    described = " ".join((await env.k("describe", DGDR, "gpus")).split())
    assert "namespace-restricted operator" in described, described


async def test_the_reference_v1beta1_request_is_deployed(env: Env,
                                                         dgdr_operator: OperatorProcess) -> None:
    text = (EXAMPLES / "v1beta1" / "dgdr-intent-qwen3-sglang.yaml").read_text()
    await env.k("apply", "-f", "-", stdin=text)
    await env.k("wait", "--for=jsonpath={.status.phase}=Deployed", f"{HUB_DGDR}/qwen3-sglang",
                "--timeout=90s")
    name = await env.k("get", HUB_DGDR, "qwen3-sglang", "-o", "jsonpath={.status.dgdName}")
    await env.wait_ready(name.strip(), seconds=90)
    alpha = await env.k("get", DGDR, "qwen3-sglang", "-o", "jsonpath={.status.state}")
    assert alpha.strip() == "Ready"
