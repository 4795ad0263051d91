"""A multinode worker on LeaderWorkerSet changes its image and keeps serving (issue #28 item
6): its DCD has one LeaderWorkerSet holding every replica, so LWS replaces one group at a time
(the LWS tab of the rolling-updates guide: "a component with R replicas has R - 1 remaining
during replacement"), or, with the component's surge budget, brings a new group up before an
old one goes. The groups are sampled every 100 ms: a group serves when its leader and worker,
not terminating, are Ready.

Worker pods take 2 s to turn ready and 1 s to stop (the simulation's
`localcluster.dev/ready-after` and `stop-after`), so each group's replacement is observable.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest
from e2e_support import DCD, DGD, Env, OperatorProcess, eventually

from controller.client import KubeClient
from controller.errors import is_transient
from reconcilers.machinery.resources import GRAPH_DEPLOYMENTS, PODS

Json = dict[str, Any]
GRAPH = "lwsroll"
WORKER = "VllmWorker"
LWS = "leaderworkersets.leaderworkerset.x-k8s.io"
#: The worker's DCD (multinode workers keep their name: LWS rolls them, not generations) and
#: its one LeaderWorkerSet.
WORKER_DCD = f"{GRAPH}-vllmworker"
WORKER_LWS = f"{WORKER_DCD}-0"
REPLICAS = 3
OLD, NEW = ("nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.6.1",
            "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.7.0")
SLOW_PODS = {"localcluster.dev/ready-after": "2", "localcluster.dev/stop-after": "1"}
GROUP_LABEL = "leaderworkerset.sigs.k8s.io/group-index"
ORIGIN = "nvidia.com/dynamo-operator-origin-version"
WORKER_HASH = "nvidia.com/dynamo-worker-hash"


def _graph(budgets: dict[str, str], origin: str | None = None) -> Json:
    worker: Json = {
        "componentType": "worker", "replicas": REPLICAS, "multinode": {"nodeCount": 2},
        "resources": {"limits": {"gpu": "1"}},
        "extraPodMetadata": {"annotations": dict(SLOW_PODS)},
        "extraPodSpec": {"mainContainer": {
            "image": OLD, "command": ["python3", "-m", "dynamo.vllm"],
            "args": ["--model", "Qwen/Qwen3-0.6B"]}},
    }
    if budgets:
        worker["annotations"] = dict(budgets)
    return {
        "apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment",
        "metadata": {"name": GRAPH, **({"annotations": {ORIGIN: origin}} if origin else {})},
        "spec": {"backendFramework": "vllm", "services": {
            "Frontend": {"componentType": "frontend", "replicas": 1,
                         "extraPodSpec": {"mainContainer": {"image": OLD}}},
            WORKER: worker}},
    }


@dataclass(frozen=True)
class Groups:
    """One sample of the worker's groups."""

    t: float
    #: Groups whose pods are all there, none terminating, all Ready.
    serving: int
    #: Groups with any pod not terminating.
    present: int
    #: Images of the serving groups.
    images: tuple[str, ...]
    #: The graph's status.rollingUpdate.phase and Ready condition status.
    phase: str | None = None
    ready: str | None = None


def _groups(t: float, pods: list[Json], graph: Json | None = None) -> Groups:
    by_group: dict[str, list[Json]] = {}
    for pod in pods:
        if not pod["metadata"].get("deletionTimestamp"):
            by_group.setdefault(pod["metadata"]["labels"][GROUP_LABEL], []).append(pod)

    def ready(pod: Json) -> bool:
        return any(c.get("type") == "Ready" and c.get("status") == "True"
                   for c in (pod.get("status") or {}).get("conditions") or [])

    serving = [members for members in by_group.values()
               if len(members) == 2 and all(ready(p) for p in members)]
    images = tuple(sorted(m[0]["spec"]["containers"][0]["image"] for m in serving))
    status = (graph or {}).get("status") or {}
    ready_condition: Json = next((c for c in status.get("conditions") or []
                            if c.get("type") == "Ready"), {})
    return Groups(t, len(serving), len(by_group), images,
                  (status.get("rollingUpdate") or {}).get("phase"), ready_condition.get("status"))


@contextlib.asynccontextmanager
async def _sampled(kube: KubeClient, namespace: str) -> AsyncIterator[list[Groups]]:
    """The worker's groups (and the graph's rollout phase and readiness) every 100 ms for the
    block."""
    series: list[Groups] = []
    start = time.monotonic()

    async def sample() -> None:
        try:
            async with asyncio.TaskGroup() as group:
                pods = group.create_task(kube.list(
                    PODS, namespace,
                    label_selector=f"leaderworkerset.sigs.k8s.io/name={WORKER_LWS}"))
                graph = group.create_task(kube.get(GRAPH_DEPLOYMENTS, namespace, GRAPH))
        except BaseExceptionGroup as errors:
            if not all(is_transient(e) for e in errors.exceptions):
                raise
        else:
            series.append(_groups(time.monotonic() - start,
                                  pods.result().get("items") or [], graph.result()))

    async def run() -> None:
        while True:
            await sample()
            await asyncio.sleep(0.1)

    task = asyncio.create_task(run(), name="lws-group-sampler")
    try:
        yield series
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    # The block ended on a state it read itself: the last sample is taken after that read, so
    # the series ends where the block did (the one in flight was cancelled).
    await sample()


async def _generations(env: Env) -> set[str]:
    """The worker hashes the worker's pods carry, as label and as `main`'s
    DYN_NAMESPACE_WORKER_SUFFIX (a pod whose two differ counts as "mismatch")."""
    pods = await env.get("pods", selector=f"leaderworkerset.sigs.k8s.io/name={WORKER_LWS}")
    found = set()
    for pod in pods["items"]:
        if pod["metadata"].get("deletionTimestamp"):
            continue
        label = (pod["metadata"].get("labels") or {}).get(WORKER_HASH, "")
        main = next(c for c in pod["spec"]["containers"] if c["name"] == "main")
        suffix = next((e.get("value", "") for e in main.get("env") or []
                       if e["name"] == "DYN_NAMESPACE_WORKER_SUFFIX"), "")
        found.add(label if label == suffix else "mismatch")
    return found


async def _rolled(env: Env) -> bool:
    """Every group serving on the new image, and the graph's rollout Completed and Ready."""
    lws = await env.get(LWS, WORKER_LWS)
    status = (lws or {}).get("status") or {}
    graph = await env.get(DGD, GRAPH)
    gstatus = graph.get("status") or {}
    ready: Json = next((c for c in gstatus.get("conditions") or [] if c["type"] == "Ready"),
                       {})
    pods = await env.get("pods", selector=f"leaderworkerset.sigs.k8s.io/name={WORKER_LWS}")
    now = _groups(0, pods["items"])
    return (now.serving == now.present == REPLICAS and set(now.images) == {NEW}
            and status.get("updatedReplicas") == REPLICAS
            and (gstatus.get("rollingUpdate") or {}).get("phase") == "Completed"
            and ready.get("status") == "True")


@pytest.mark.parametrize(("budgets", "floor", "ceiling", "origin"), [
    ({}, REPLICAS - 1, REPLICAS, None),  # LWS's own default: one group at a time, no surge
    ({"nvidia.com/deployment-rolling-update-max-surge": "1",
      "nvidia.com/deployment-rolling-update-max-unavailable": "0"}, REPLICAS, REPLICAS + 1,
     None),
    # A graph stamped at the gate: its groups carry their generation (issue #28).
    ({}, REPLICAS - 1, REPLICAS, "0.3.0"),  # backends.worker_generation.PROVIDER_GENERATION
], ids=["one-at-a-time", "surge", "generations"])
async def test_an_image_change_replaces_the_groups_within_the_budget(
        env: Env, operator: OperatorProcess, kube: KubeClient, budgets: dict[str, str],
        floor: int, ceiling: int, origin: str | None) -> None:
    await env.k("apply", "-f", "-", stdin=json.dumps(_graph(budgets, origin)))
    await env.wait_ready(GRAPH, seconds=90)
    first = await _generations(env)
    sets = await env.names(LWS)
    assert sets == [WORKER_LWS], sets  # one LeaderWorkerSet for every replica
    lws = await env.get(LWS, WORKER_LWS)
    assert lws["spec"]["replicas"] == REPLICAS
    async with _sampled(kube, env.namespace) as series:
        await eventually(lambda: bool(series), what="a first sample")
        patch = {"spec": {"services": {WORKER: {"extraPodSpec": {"mainContainer": {
            "image": NEW}}}}}}
        await env.k("patch", DGD, GRAPH, "--type=merge", "-p", json.dumps(patch))
        await eventually(lambda: _rolled(env), within=120, what="every group on the new image")
    for point in series:  # shown when the test fails
        print(round(point.t, 2), point.serving, point.present, point.images, point.phase,
              point.ready)
    assert len(series) > 50, len(series)
    assert min(p.serving for p in series) >= floor
    assert max(p.present for p in series) <= ceiling
    # It did roll group by group: old and new groups served side by side on the way.
    assert any(set(p.images) == {OLD, NEW} for p in series)
    if budgets:
        assert max(p.present for p in series) == REPLICAS + 1  # the surge group ran
    else:
        assert min(p.serving for p in series) == REPLICAS - 1
    # The graph tells the rollout (status.rollingUpdate, Ready False while groups are mixed).
    phases = [p.phase for p in series]
    assert "InProgress" in phases and phases[-1] == "Completed", sorted(set(map(str, phases)))
    assert phases.index("InProgress") < len(phases) - phases[::-1].index("Completed") - 1
    mixed = [p for p in series if set(p.images) == {OLD, NEW}]
    assert all(p.ready == "False" and p.phase == "InProgress" for p in mixed), mixed[:3]
    assert await env.names(LWS) == [WORKER_LWS]
    assert await env.names(DCD) == sorted([f"{GRAPH}-frontend", WORKER_DCD])
    events = json.loads(await env.k("get", "events", "-o", "json"))["items"]
    reasons = [e["reason"] for e in events if e["involvedObject"]["name"] == GRAPH]
    assert "RollingUpdateNotSupported" in reasons, reasons
    last = await _generations(env)
    if origin is None:
        assert first == last == {""}  # no label, no suffix: as before generations
    else:
        # Every group in the generation the graph recorded, its workers in its namespace;
        # the image moved it.
        recorded = (await env.get(DGD, GRAPH))["metadata"]["annotations"][
            "nvidia.com/current-worker-hash-v2"]
        assert last == {recorded} and first != last and "" not in first, (first, last)
