"""Worker rollouts by generation, watched every 100 ms: a disaggregated graph changes its image
(and then changes again mid-rollout, or reverts) and never drops below its serving capacity,
never surges past its budget, never mixes generations, and ends with one generation.

Worker pods take a couple of seconds to turn ready and to stop (the simulation's
`localcluster.dev/ready-after` and `stop-after`), so each rollout takes several steps.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from e2e_support import DCD, DGD, Env, OperatorProcess, disaggregated_graph, eventually

from controller.client import KubeClient
from e2e.rollout_sampler import Report, RolloutSampler

GRAPH = "roll"
WORKERS = ("VllmDecodeWorker", "VllmPrefillWorker")
IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.6.1"
#: A worker pod turns ready 2 s after it runs, and takes 1 s to stop.
SLOW_PODS = {"localcluster.dev/ready-after": "2", "localcluster.dev/stop-after": "1"}


def _graph(replicas: int = 2) -> dict[str, Any]:
    return disaggregated_graph(GRAPH, IMAGE, frontend_image=IMAGE, replicas=replicas,
                               pod_annotations=SLOW_PODS)


async def _set_image(env: Env, image: str) -> None:
    patch = {"spec": {"services": {w: {"extraPodSpec": {"mainContainer": {"image": image}}}
                                   for w in WORKERS}}}
    await env.k("patch", DGD, GRAPH, "--type=merge", "-p", json.dumps(patch))


async def _worker_dcds(env: Env) -> list[str]:
    return [n for n in await env.names(DCD) if n != f"{GRAPH}-frontend"]


async def _completed(env: Env, generations: int = 1) -> bool:
    graph = await env.get(DGD, GRAPH)
    status = graph.get("status") or {}
    rolling = status.get("rollingUpdate") or {}
    conditions = status.get("conditions") or []
    ready: dict[str, Any] = next((c for c in conditions if c["type"] == "Ready"), {})
    dcds = await _worker_dcds(env)
    return (rolling.get("phase") == "Completed" and ready.get("status") == "True"
            and len(dcds) == 2 * generations)


def _assert_invariants(report: Report, series: Any = ()) -> None:
    for point in series:  # shown when the test fails
        print(round(point.t, 2), point.ready, round(point.capacity, 2))
    assert report.sampled_throughout(), report
    assert not report.breaches, report.breaches[:5]
    assert not report.violations, report.violations[:5]
    assert report.min_capacity >= 1.0 - 1e-9, report  # 2 replicas at 25%: nothing unavailable
    assert report.max_generations <= 2, report
    assert report.ready_beside_old_pods == 0, report  # Ready only once the old pods are gone


async def test_an_image_change_rolls_prefill_and_decode_together(
        env: Env, operator: OperatorProcess, kube: KubeClient) -> None:
    await env.k("apply", "-f", "-", stdin=json.dumps(_graph()))
    await env.wait_ready(GRAPH, seconds=90)
    before = await _worker_dcds(env)
    assert len(before) == 2 and all(n.count("-") == 2 for n in before), before
    async with RolloutSampler(kube, env.namespace, GRAPH) as sampler:
        await _set_image(env, "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.7.0")
        await eventually(lambda: _completed(env), within=120, what="the rollout to complete")
    report = sampler.report()
    _assert_invariants(report, sampler.series)
    assert report.phases[-3:] == ("Pending", "InProgress", "Completed"), report.phases
    after = await _worker_dcds(env)
    assert not set(after) & set(before), (before, after)
    graph = await env.get(DGD, GRAPH)
    assert sorted(graph["status"]["rollingUpdate"]["updatedComponents"]) == sorted(WORKERS)
    events = json.loads(await env.k("get", "events", "-o", "json"))["items"]
    reasons = [e["reason"] for e in events if e["involvedObject"]["name"] == GRAPH]
    assert reasons.count("RollingUpdateStarted") == 1, reasons
    assert reasons.count("RollingUpdateCompleted") == 1, reasons


@pytest.mark.parametrize("second", ["0.8.0", "0.6.1"], ids=["change", "revert"])
async def test_a_change_or_revert_mid_rollout_keeps_the_budgets(
        env: Env, operator: OperatorProcess, kube: KubeClient, second: str) -> None:
    await env.k("apply", "-f", "-", stdin=json.dumps(_graph()))
    await env.wait_ready(GRAPH, seconds=90)
    first = set(await _worker_dcds(env))
    async with RolloutSampler(kube, env.namespace, GRAPH) as sampler:
        await _set_image(env, "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.7.0")

        async def started() -> bool:
            return len(await _worker_dcds(env)) > 2
        await eventually(started, what="the new generation's DCDs")
        await asyncio.sleep(1)
        await _set_image(env, f"nvcr.io/nvidia/ai-dynamo/vllm-runtime:{second}")
        await eventually(lambda: _completed(env), within=180, what="the rollout to complete")
    _assert_invariants(sampler.report(), sampler.series)
    final = set(await _worker_dcds(env))
    if second == "0.6.1":
        assert final == first  # the generation returned to is the one that served
    else:
        assert not final & first


async def test_a_canary_holds_at_its_partition_and_finishes_once_removed(
        env: Env, operator: OperatorProcess, kube: KubeClient) -> None:
    manifest = _graph()
    manifest["metadata"]["annotations"] = {"nvidia.com/rollout-partition": "25%"}
    await env.k("apply", "-f", "-", stdin=json.dumps(manifest))
    await env.wait_ready(GRAPH, seconds=90)
    async with RolloutSampler(kube, env.namespace, GRAPH) as sampler:
        await _set_image(env, "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.7.0")

        async def canary_serving() -> bool:
            ready = sampler.series[-1].ready if sampler.series else {}
            counts = sorted(sorted(by.values()) for by in ready.values())
            return counts == [[1, 1], [1, 1]]  # each generation: 1 prefill and 1 decode
        await eventually(canary_serving, within=90, what="the canary at 1 of 2 replicas")
        await asyncio.sleep(4)  # held there
        assert await canary_serving()
        graph = await env.get(DGD, GRAPH)
        assert graph["status"]["rollingUpdate"]["phase"] == "InProgress"
        await env.k("annotate", DGD, GRAPH, "nvidia.com/rollout-partition-")
        await eventually(lambda: _completed(env), within=120, what="the rollout to complete")
    report = sampler.report()
    _assert_invariants(report, sampler.series)
