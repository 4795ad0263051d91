"""The rollout sampler (`e2e/rollout_sampler.py`) against the simulated cluster, with no
operator: a graph and its pods in two generations made by hand, a rollout played by the test
(new generation with a readiness delay, an old decode deleted too early, a stray prefill in
the old generation's namespace), and the series and worst values the sampler records."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from controller.client import ClientConfig, KubeClient
from e2e.rollout_sampler import Point, RolloutSampler
from hack.localcluster.server import LocalCluster
from hack.localcluster.testing import eventually
from hack.our_crds import install_our_crds
from reconcilers.machinery.resources import GRAPH_DEPLOYMENTS, PODS

Json = dict[str, Any]
NS, GRAPH = "default", "g"
BASE = f"{NS}-{GRAPH}"
A, B = "aaaa1111", "bbbb2222"
WITHIN = 30.0


def dynamo_pod(name: str, component: str, kind: str, generation: str | None = None, *,
               registers_in: str | None = None, annotations: dict[str, str] | None = None
               ) -> Json:
    labels = {"nvidia.com/dynamo-graph-deployment-name": GRAPH,
              "nvidia.com/dynamo-component": component,
              "nvidia.com/dynamo-component-type": kind}
    env = [{"name": "DYN_NAMESPACE", "value": BASE}]
    if generation:
        labels["nvidia.com/dynamo-worker-hash"] = generation
        env.append({"name": "DYN_NAMESPACE_WORKER_SUFFIX", "value": registers_in or generation})
    port = ({"name": "http", "containerPort": 8000} if kind == "frontend"
            else {"name": "system", "containerPort": 9090})
    meta: Json = {"name": name, "namespace": NS, "labels": labels,
                  "annotations": annotations or {}}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"containers": [{"name": "main", "image": "dynamo:1", "env": env,
                                     "ports": [port]}]}}


def graph() -> Json:
    return {"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment",
            "metadata": {"name": GRAPH, "namespace": NS, "annotations": {
                "nvidia.com/deployment-rolling-update-max-surge": "50%"}},
            "spec": {"components": [
                {"name": "Frontend", "type": "frontend", "replicas": 1},
                {"name": "P", "type": "prefill", "replicas": 2},
                {"name": "D", "type": "decode", "replicas": 1}]}}


@pytest.fixture
async def kube(sim_cluster: LocalCluster, tmp_path: Path) -> AsyncIterator[KubeClient]:
    k = await KubeClient.connect(tmp_path / "sim" / "kubeconfig", ClientConfig(qps=None))
    try:
        yield k
    finally:
        await k.close()


async def set_status(kube: KubeClient, phase: str, ready: str) -> None:
    await kube.patch(GRAPH_DEPLOYMENTS, NS, GRAPH, {"status": {
        "rollingUpdate": {"phase": phase},
        "conditions": [{"type": "Ready", "status": ready, "reason": "x", "message": "",
                        "lastTransitionTime": "2025-01-01T00:00:00Z"}]}},
        subresource="status")


async def latest(sampler: RolloutSampler, check: Any, what: str) -> Point:
    async def met() -> Point | None:
        return sampler.series[-1] if sampler.series and check(sampler.series[-1]) else None
    point: Point = await eventually(met, within=WITHIN, interval=0.05, what=what)
    return point


async def test_a_rollout_played_by_hand_is_sampled(kube: KubeClient) -> None:
    await install_our_crds(kube, "nvidia.com_dynamographdeployments.yaml")
    await kube.create(GRAPH_DEPLOYMENTS, graph())
    await kube.create(PODS, dynamo_pod("fe", "Frontend", "frontend"))
    for name, component, kind in (("a-p0", "P", "prefill"), ("a-p1", "P", "prefill"),
                                  ("a-d0", "D", "decode")):
        await kube.create(PODS, dynamo_pod(name, component, kind, A,
                                           annotations={"localcluster.dev/stop-after": "0.5"}))

    async with RolloutSampler(kube, NS, GRAPH) as sampler:
        first = await latest(sampler, lambda p: p.capacity == 1.0, "generation A serving")
        assert first.desired == {"P": 2, "D": 1}
        assert first.ready == {A: {"P": 2, "D": 1}}

        # Generation B, ready after 1 s; A's decode deleted at once (too early: capacity 0).
        await set_status(kube, "InProgress", "False")
        slow = {"localcluster.dev/ready-after": "1"}
        for name, component, kind in (("b-p0", "P", "prefill"), ("b-p1", "P", "prefill"),
                                      ("b-d0", "D", "decode")):
            await kube.create(PODS, dynamo_pod(name, component, kind, B, annotations=slow))
        await kube.delete(PODS, NS, "a-d0")
        both = await latest(sampler, lambda p: p.observation.surge == {"D": 0, "P": 2},
                            "B's pods all there")
        assert both.observation.generations == (A, B)
        await latest(sampler, lambda p: p.ready.get(B) == {"P": 2, "D": 1}, "B ready")

        # A stray prefill of B registers in A's namespace; then A goes.
        await kube.create(PODS, dynamo_pod("stray", "P", "prefill", B, registers_in=A))
        await latest(sampler, lambda p: p.observation.violations, "the stray seen")
        for name in ("a-p0", "a-p1", "stray"):
            await kube.delete(PODS, NS, name)
        await set_status(kube, "Completed", "True")
        last = await latest(sampler, lambda p: p.observation.generations == (B,)
                            and p.observation.phase == "Completed", "only B left")
        await asyncio.sleep(0.3)

    count = len(sampler.series)
    await asyncio.sleep(0.3)
    assert len(sampler.series) == count  # the sampling ended with the context
    assert last.capacity == 1.0 and last.ready == {B: {"P": 2, "D": 1}}
    times = [p.t for p in sampler.series]
    assert times == sorted(times)
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert sorted(gaps)[len(gaps) // 2] < 0.3  # about every 100 ms

    report = sampler.report()
    assert report.samples == count and report.errors == 0
    assert report.max_gap == max(gaps)
    assert report.sampled_throughout()
    assert not report.sampled_throughout(min_samples=count + 1)
    assert not report.sampled_throughout(max_gap=max(gaps) / 2)
    assert report.min_capacity == 0.0
    assert report.max_surge == {"P": 3, "D": 1}  # with the stray; 50% of 2 -> 1, of 1 -> 1
    assert report.max_generations == 2
    assert [(v["pod"], v["dynamoNamespace"]) for v in report.violations] == [
        ("stray", f"{BASE}-{A}")]
    texts = [text for _, text in report.breaches]
    assert {"P: surge 2 above 1", "P: surge 3 above 1"} <= set(texts)
    assert any(t.startswith("capacity 0.000 below 1.000") for t in texts)
    assert f"stray (prefill, {B}) registered in {BASE}-{A}" in texts
    assert "D: surge 1 above 1" not in texts
    assert report.phases == (None, "InProgress", "Completed")
    assert report.ready_conditions == (None, "False", "True")


async def test_a_missing_graph_is_sampled_with_the_desired_counts_given(
        kube: KubeClient) -> None:
    await kube.create(PODS, dynamo_pod("w0", "W", "worker"))
    async with RolloutSampler(kube, NS, GRAPH, desired={"W": 2}, interval=0.05) as sampler:
        point = await latest(sampler, lambda p: p.ready == {"legacy": {"W": 1}}, "w0 ready")
    assert point.capacity == 0.5 and point.observation.phase is None
    assert sampler.report().min_capacity <= 0.5
    await sampler.stop()  # again: nothing to do
