"""The cluster subcommands against a running operator: `dynamo-operator diff -f FILE` says
what applying a graph would change, child by child, and whether it starts a worker rollout.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

from e2e_support import OPERATOR, Env, OperatorProcess

GRAPH = "cli"
IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.6.1"
WORKERS = ("VllmDecodeWorker", "VllmPrefillWorker")


def graph(image: str = IMAGE, replicas: int = 2, gpus: int = 2) -> dict[str, Any]:
    """A disaggregated graph: a frontend, and decode and prefill workers of `gpus` GPUs."""
    def worker(sub: str) -> dict[str, Any]:
        return {
            "componentType": "worker", "subComponentType": sub, "replicas": replicas,
            "resources": {"limits": {"gpu": str(gpus)}},
            "extraPodSpec": {"mainContainer": {
                "image": image, "command": ["python3", "-m", "dynamo.vllm"],
                "args": ["--model", "Qwen/Qwen3-0.6B", f"--is-{sub}-worker"]}},
        }
    return {
        "apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment",
        "metadata": {"name": GRAPH},
        "spec": {"backendFramework": "vllm", "services": {
            "Frontend": {"componentType": "frontend", "replicas": 1,
                         "extraPodSpec": {"mainContainer": {"image": IMAGE}}},
            "VllmDecodeWorker": worker("decode"),
            "VllmPrefillWorker": worker("prefill"),
        }},
    }


async def cli(env: Env, *args: str, stdin: str | None = None) -> tuple[int, str, str]:
    """`dynamo-operator ARGS` against the test's cluster; exit status, stdout, stderr."""
    environ = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "POD_NAMESPACE")}
    proc = await asyncio.create_subprocess_exec(
        str(OPERATOR), *args, "--kubeconfig", str(env.kubeconfig), "-n", env.namespace,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env=environ)
    out, err = await asyncio.wait_for(proc.communicate(stdin.encode() if stdin else None), 60)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def diff(env: Env, manifest: dict[str, Any]) -> tuple[int, str, str]:
    return await cli(env, "diff", "-f", "-", stdin=json.dumps(manifest))


async def test_diff_says_nothing_changes_then_names_the_rollout_and_its_gpus(
        env: Env, operator: OperatorProcess) -> None:
    await env.k("apply", "-f", "-", stdin=json.dumps(graph()))
    await env.wait_ready(GRAPH, seconds=90)

    code, out, err = await diff(env, graph())
    assert code == 0, (out, err)
    assert "unchanged" in out and "worker rollout: none" in out, out

    code, out, err = await diff(env, graph(image="nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.7.0"))
    assert code == 1, (out, err)
    assert f"DynamoGraphDeployment {env.namespace}/{GRAPH}: changed" in out, out
    assert "+          image: nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.7.0" in out, out
    assert "worker rollout: starts generation" in out, out
    assert "rolls: VllmDecodeWorker, VllmPrefillWorker" in out, out
    # 2 replicas at 25% surge: one extra replica of 2 GPUs per worker; 4 nodes x 8 GPUs, of
    # which the running graph takes 8.
    assert "surge VllmDecodeWorker: +1 replica(s) x 2 GPU(s) = 2 GPU(s)" in out, out
    assert "GPUs: the surge needs 4, 24 free of 32 allocatable (fits)" in out, out
    assert ": created" in out, out  # the new generation's DCDs

    code, out, err = await diff(env, graph(replicas=3))
    assert code == 1, (out, err)
    assert "worker rollout: none (the workers stay in generation" in out, out
    assert "-  replicas: 2\n+  replicas: 3" in out, out
    assert ": created" not in out and ": deleted" not in out, out
