"""Worker rollouts under the scenarios of issue #28 beyond a plain image change, each sampled
every 100 ms by a `RolloutSampler` (capacity floor, surge, two generations at most,
isolation, and the `status.rollingUpdate` phases):

- `kubectl replace` mid-rollout with a manifest carrying no annotations: the rollout goes on
  and completes, and no generation leaks (DCDs, Deployments, ReplicaSets, pods);
- a crash-looping new generation with a 5 s progress deadline: `Failed`, the graph's Ready
  names the cause, the old generation keeps serving; fixing the workers then completes;
- the operator SIGKILLed mid-rollout and restarted: it continues where the cluster stands;
- `nvidia.com/deployment-strategy: Recreate`: old pods gone before new ones start, and a
  Normal event says so;
- a surge that cannot fit (the cluster's GPUs filled): the old generation keeps serving and
  nothing of it is removed, until GPUs are freed; past a short progress deadline, `Failed`
  names the unschedulable pods.

The simulated cluster has 2 nodes x 4 GPUs (8 in all): the graph takes 4, a rollout at most 6,
and the last scenario fills the other 4. The crash loop is the simulation's
`localcluster.dev/mode: crashloop` pod annotation (`simulation/behaviors.py`), set with the new
image: the generation's hash covers the pod metadata, so the fix is a new generation too.
"""

from __future__ import annotations

import asyncio
import json
import signal
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from e2e_support import DCD, DGD, Env, OperatorProcess, disaggregated_graph, eventually

from backends.constants import (
    ANNOTATION_DEPLOYMENT_STRATEGY,
    ANNOTATION_MAX_SURGE,
    ANNOTATION_MAX_UNAVAILABLE,
    ANNOTATION_ROLLOUT_PROGRESS_DEADLINE,
)
from backends.hub_graph import hub_graph
from backends.worker_revisions import history_limit, revision_name
from controller.client import KubeClient
from e2e.rollout_sampler import Report, RolloutSampler
from hack.localcluster.server import LocalCluster
from hack.localcluster.simulation import SimulationConfig, default_nodes
from hack.localcluster.simulation.behaviors import MODE
from hack.localcluster.simulation.generations import WORKER_HASH_LABEL
from reconcilers.machinery.resources import GRAPH_DEPLOYMENTS

GRAPH = "roll"
WORKERS = ("VllmDecodeWorker", "VllmPrefillWorker")
IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.6.1"
NEW = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.7.0"
FIXED = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.7.1"
#: A worker pod turns ready 2 s after it runs, and takes 1 s to stop.
SLOW_PODS = {"localcluster.dev/ready-after": "2", "localcluster.dev/stop-after": "1"}
GPUS = 8
Start = Callable[..., Awaitable[OperatorProcess]]


@pytest.fixture
def sim_config() -> SimulationConfig:
    return SimulationConfig(nodes=default_nodes(2, gpus=GPUS // 2))


def _graph(image: str = IMAGE, annotations: dict[str, str] | None = None,
           pod_annotations: dict[str, str] | None = None) -> dict[str, Any]:
    return disaggregated_graph(GRAPH, image, frontend_image=IMAGE, annotations=annotations,
                               pod_annotations={**SLOW_PODS, **(pod_annotations or {})})


async def _create(env: Env, graph: dict[str, Any]) -> None:
    await env.k("apply", "-f", "-", stdin=json.dumps(graph))
    await env.wait_ready(GRAPH, seconds=90)


async def _set_workers(env: Env, image: str, pod_annotations: dict[str, str | None]
                       | None = None) -> None:
    worker: dict[str, Any] = {"extraPodSpec": {"mainContainer": {"image": image}}}
    if pod_annotations:
        worker["extraPodMetadata"] = {"annotations": pod_annotations}
    patch = {"spec": {"services": dict.fromkeys(WORKERS, worker)}}
    await env.k("patch", DGD, GRAPH, "--type=merge", "-p", json.dumps(patch))


async def _worker_dcds(env: Env) -> list[dict[str, Any]]:
    items = (await env.get(DCD))["items"]
    return [d for d in items if d["metadata"]["name"] != f"{GRAPH}-frontend"
            and not d["metadata"].get("deletionTimestamp")]


async def _status(env: Env, kube: KubeClient) -> tuple[str | None, dict[str, Any]]:
    """The graph's rollingUpdate phase and Ready condition (read as stored, over the test's
    one connection: polling with a kubectl process per look sometimes saw `TLS handshake
    timeout` on the loaded machine)."""
    status = (await kube.get(GRAPH_DEPLOYMENTS, env.namespace, GRAPH)).get("status") or {}
    ready: dict[str, Any] = next(
        (c for c in status.get("conditions") or [] if c["type"] == "Ready"), {})
    return (status.get("rollingUpdate") or {}).get("phase"), ready


async def _completed(env: Env, kube: KubeClient) -> bool:
    phase, ready = await _status(env, kube)
    return (phase == "Completed" and ready.get("status") == "True"
            and len(await _worker_dcds(env)) == len(WORKERS))


async def _new_pod_ready(env: Env, old: set[str]) -> bool:
    """A pod of a generation other than `old` hashes is ready."""
    pods = (await env.get("pods", selector=WORKER_HASH_LABEL))["items"]
    return any(p["metadata"]["labels"][WORKER_HASH_LABEL] not in old
               and any(c["type"] == "Ready" and c["status"] == "True"
                       for c in (p.get("status") or {}).get("conditions") or [])
               for p in pods)


def _hashes(dcds: list[dict[str, Any]]) -> set[str]:
    return {d["metadata"]["labels"].get(WORKER_HASH_LABEL, "") for d in dcds}


def _assert_invariants(report: Report, *, capacity: bool = True) -> None:
    """No breach (capacity ones left out when `capacity` is False), no isolation violation,
    at most two generations."""
    breaches = [b for b in report.breaches if capacity or "capacity" not in b[1]]
    assert report.sampled_throughout(), report
    assert not breaches, breaches[:5]
    assert not report.violations, report.violations[:5]
    if capacity:
        assert report.min_capacity >= 1.0 - 1e-9, report  # 2 replicas at 25%: none unavailable
    assert report.max_generations <= 2, report
    assert report.ready_beside_old_pods == 0, report  # Ready only once the old pods are gone


async def _one_generation_left(env: Env) -> str:
    """Exactly one generation's worker DCDs, Deployments, ReplicaSets and pods (waiting for
    garbage collection), and no more ControllerRevisions owned by the graph than its history
    limit, the current generation's `<graph>-<hash>` among them; its hash."""
    dcds = await _worker_dcds(env)
    assert len(dcds) == len(WORKERS), [d["metadata"]["name"] for d in dcds]
    [generation] = _hashes(dcds)
    names = {d["metadata"]["name"] for d in dcds}

    def workers(found: set[str]) -> set[str]:
        return {n for n in found if n.startswith(f"{GRAPH}-") and n != f"{GRAPH}-frontend"}

    async def nothing_else() -> bool:
        deployments = workers(set(await env.names("deploy")))
        replicasets = (await env.get("rs"))["items"]
        owners = workers({r["metadata"]["ownerReferences"][0]["name"] for r in replicasets
                          if not r["metadata"].get("deletionTimestamp")})
        pods = (await env.get("pods", selector=WORKER_HASH_LABEL))["items"]
        return (deployments == names and owners == names
                and {p["metadata"]["labels"][WORKER_HASH_LABEL] for p in pods} == {generation})
    await eventually(nothing_else, within=30, what="only the last generation's objects")
    await _revisions_within_history(env, generation)
    return generation


async def _revisions_within_history(env: Env, generation: str) -> None:
    """The ControllerRevisions the graph owns number at most its history limit
    (`nvidia.com/revision-history-limit`, default 10), and one is the current generation's."""
    live = await env.get(DGD, GRAPH)
    limit = history_limit(hub_graph(live))
    owned = sorted(r["metadata"]["name"] for r in (await env.get("controllerrevisions"))["items"]
                   if not r["metadata"].get("deletionTimestamp")
                   and any(o.get("uid") == live["metadata"]["uid"]
                           for o in r["metadata"].get("ownerReferences") or []))
    assert len(owned) <= limit, (limit, owned)
    assert revision_name(GRAPH, generation) in owned, (generation, owned)


# --- (a) kubectl replace ----------------------------------------------------------------------


async def test_a_replace_without_annotations_mid_rollout_completes_without_a_leak(
        env: Env, operator: OperatorProcess, kube: KubeClient) -> None:
    budgets = {ANNOTATION_MAX_SURGE: "1", ANNOTATION_MAX_UNAVAILABLE: "0",
               "example.com/owner": "team-a"}
    await _create(env, _graph(annotations=budgets))
    first = _hashes(await _worker_dcds(env))
    async with RolloutSampler(kube, env.namespace, GRAPH) as sampler:
        await _set_workers(env, NEW)
        await eventually(lambda: _new_pod_ready(env, first), within=60,
                         what="a ready pod of the new generation")
        await env.k("replace", "-f", "-", stdin=json.dumps(_graph(NEW)))
        assert not (await env.get(DGD, GRAPH))["metadata"].get("annotations")
        await eventually(lambda: _completed(env, kube), within=120, what="the rollout to complete")
    report = sampler.report()
    _assert_invariants(report)
    assert report.phases[-3:] == ("Pending", "InProgress", "Completed"), report.phases
    assert await _one_generation_left(env) not in first


# --- (b) crash-looping new generation -----------------------------------------------------------


async def _crash_and_fail(env: Env, kube: KubeClient, sampler: RolloutSampler,
                          first: set[str]) -> None:
    """Roll out a crash-looping generation; wait for Failed and check the graph names the
    cause and the old generation keeps serving, held, for a few seconds."""
    await _set_workers(env, NEW, {MODE: "crashloop"})

    async def failed() -> dict[str, Any] | None:
        phase, ready = await _status(env, kube)
        return ready if phase == "Failed" else None
    ready = await eventually(failed, within=60, what="the rollout to fail")
    assert ready["status"] == "False" and ready["reason"] == "rollout_failed", ready

    async def cause_named() -> dict[str, Any] | None:
        # The deadline may come before the first crash; the cause is told once pods show it.
        phase, ready = await _status(env, kube)
        assert phase == "Failed", (phase, ready)
        return ready if "CrashLoopBackOff" in ready["message"] else None
    ready = await eventually(cause_named, within=30, what="the failure to name its cause")
    assert ready["reason"] == "rollout_failed", ready
    await asyncio.sleep(4)  # held: nothing more of the old generation goes
    held = sampler.series[-1]
    assert [held.ready.get(g, {}) for g in first] == [dict.fromkeys(WORKERS, 2)], held.ready
    assert (await _status(env, kube))[0] == "Failed"


async def test_b_crash_looping_generation_fails_and_the_old_keeps_serving(
        env: Env, operator: OperatorProcess, kube: KubeClient) -> None:
    await _create(env, _graph(annotations={ANNOTATION_ROLLOUT_PROGRESS_DEADLINE: "5s"}))
    first = _hashes(await _worker_dcds(env))
    async with RolloutSampler(kube, env.namespace, GRAPH) as sampler:
        await _crash_and_fail(env, kube, sampler, first)
    report = sampler.report()
    _assert_invariants(report)
    assert report.phases[-3:] == ("Pending", "InProgress", "Failed"), report.phases


async def test_b_fixing_a_failed_rollout_completes(
        env: Env, operator: OperatorProcess, kube: KubeClient) -> None:
    await _create(env, _graph(annotations={ANNOTATION_ROLLOUT_PROGRESS_DEADLINE: "5s"}))
    first = _hashes(await _worker_dcds(env))
    async with RolloutSampler(kube, env.namespace, GRAPH) as sampler:
        await _crash_and_fail(env, kube, sampler, first)
        failed_status = (await kube.get(GRAPH_DEPLOYMENTS, env.namespace, GRAPH))["status"][
            "rollingUpdate"]
        # The fixed generation gets time enough on a loaded machine (5 s made the failure).
        await kube.patch(GRAPH_DEPLOYMENTS, env.namespace, GRAPH, {"metadata": {
            "annotations": {ANNOTATION_ROLLOUT_PROGRESS_DEADLINE: "60s"}}})
        await _set_workers(env, FIXED, {MODE: None})
        try:
            await eventually(lambda: _completed(env, kube), within=45, what="the fixed rollout")
        finally:
            status = (await kube.get(GRAPH_DEPLOYMENTS, env.namespace, GRAPH))["status"]
            print("failed:", failed_status, "\nnow:", status.get("rollingUpdate"),
                  [c for c in status["conditions"] if c["type"] == "Ready"])
            for point in sampler.series[::10]:
                print(round(point.t, 1), point.observation.phase, point.ready)
    report = sampler.report()
    _assert_invariants(report)
    assert "Failed" in report.phases and report.phases[-1] == "Completed", report.phases
    assert await _one_generation_left(env) not in first
    _, ready = await _status(env, kube)
    assert ready["reason"] != "rollout_failed"


# --- (c) the operator SIGKILLed ---------------------------------------------------------------


async def test_c_operator_sigkilled_mid_rollout_continues_within_budgets(
        env: Env, operators: Start, kube: KubeClient) -> None:
    op = await operators("op-1")
    await _create(env, _graph())
    first = _hashes(await _worker_dcds(env))
    async with RolloutSampler(kube, env.namespace, GRAPH) as sampler:
        await _set_workers(env, NEW)
        await eventually(lambda: _new_pod_ready(env, first), within=60,
                         what="a ready pod of the new generation")
        await op.kill(signal.SIGKILL)
        mid = sampler.series[-1]
        started = {d["metadata"]["name"]: d["metadata"]["uid"] for d in await _worker_dcds(env)
                   if not _hashes([d]) <= first}
        await operators("op-2")  # leads once the dead holder's lease expires (6 s)
        await eventually(lambda: _completed(env, kube), within=120, what="the rollout to complete")
    report = sampler.report()
    _assert_invariants(report)
    assert len(mid.observation.generations) == 2, mid.ready  # killed mid-rollout indeed
    assert report.phases[-1] == "Completed", report.phases
    assert await _one_generation_left(env) not in first
    # op-2 went on with the generation op-1 started: the same DCDs, not made again.
    final = {d["metadata"]["name"]: d["metadata"]["uid"] for d in await _worker_dcds(env)}
    assert final == started, (started, final)


# --- (d) Recreate --------------------------------------------------------------------------


async def _recreate_rollout(env: Env, kube: KubeClient) -> RolloutSampler:
    await _create(env, _graph(annotations={ANNOTATION_DEPLOYMENT_STRATEGY: "Recreate"}))
    first = _hashes(await _worker_dcds(env))
    async with RolloutSampler(kube, env.namespace, GRAPH) as sampler:
        await _set_workers(env, NEW)
        await eventually(lambda: _completed(env, kube), within=120, what="the rollout to complete")
    assert await _one_generation_left(env) not in first
    return sampler


async def test_d_recreate_removes_the_old_pods_before_new_ones_start(
        env: Env, operator: OperatorProcess, kube: KubeClient) -> None:
    sampler = await _recreate_rollout(env, kube)
    report = sampler.report()
    _assert_invariants(report, capacity=False)  # Recreate's floor is 0
    assert report.max_generations == 1, [p.ready for p in sampler.series
                                         if len(p.observation.generations) > 1][:3]
    assert all(over == 0 for over in report.max_surge.values()), report.max_surge
    assert report.min_capacity == 0.0, report  # it did go down: old gone, new not ready
    assert report.phases[-1] == "Completed", report.phases


async def test_d_recreate_says_so_in_a_normal_event(
        env: Env, operator: OperatorProcess, kube: KubeClient) -> None:
    await _recreate_rollout(env, kube)
    events = (await env.get("events"))["items"]
    ours = [(e["type"], e["reason"], str(e.get("message"))) for e in events
            if e["involvedObject"].get("name") == GRAPH]
    told = [m for kind, _, m in ours if kind == "Normal" and "Recreate" in m]
    assert told and all(w in told[0] for w in WORKERS), ours


# --- (e) a surge that cannot fit -------------------------------------------------------------


def _filler(replicas: int) -> dict[str, Any]:
    labels = {"app": "gpu-filler"}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "gpu-filler", "labels": labels},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels}, "spec": {"containers": [{
                         "name": "main", "image": "busybox",
                         "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}}}


async def test_e_a_surge_that_cannot_fit_removes_nothing_until_gpus_free(
        env: Env, operator: OperatorProcess, kube: KubeClient, needs_local: LocalCluster) -> None:
    """The filler takes what the module's 8 GPUs leave: the local cluster only."""
    await _create(env, _graph())
    first = _hashes(await _worker_dcds(env))
    free = GPUS - 2 * len(WORKERS)
    await env.k("apply", "-f", "-", stdin=json.dumps(_filler(free)))
    await env.k("rollout", "status", "deploy/gpu-filler", "--timeout=60s")
    old_pods = set(await env.names("pods", selector=WORKER_HASH_LABEL))
    async with RolloutSampler(kube, env.namespace, GRAPH) as sampler:
        await _set_workers(env, NEW)

        async def surge_pending() -> bool:
            pods = (await env.get("pods", selector=WORKER_HASH_LABEL))["items"]
            return any(p["metadata"]["labels"][WORKER_HASH_LABEL] not in first
                       and (p.get("status") or {}).get("phase") == "Pending" for p in pods)
        await eventually(surge_pending, within=60, what="a pending surge pod")
        await asyncio.sleep(6)  # three of the operator's rechecks while rolling
        held = list(sampler.series)
        phase, _ = await _status(env, kube)
        assert phase in ("Pending", "InProgress"), phase
        assert set(await env.names("pods", selector=WORKER_HASH_LABEL)) >= old_pods
        assert all(d["spec"]["replicas"] == 2 for d in await _worker_dcds(env)
                   if _hashes([d]) <= first)
        await env.k("scale", "deploy/gpu-filler", "--replicas=0")
        await eventually(lambda: _completed(env, kube), within=120, what="the rollout to complete")
    _assert_invariants(sampler.report())
    assert all(p.capacity >= 1.0 - 1e-9 and
               [p.ready.get(g, {}) for g in first] == [dict.fromkeys(WORKERS, 2)]
               for p in held[-50:]), [p.ready for p in held[-50:]][:3]
    assert await _one_generation_left(env) not in first


async def test_e_a_surge_that_cannot_fit_past_its_deadline_fails_naming_the_cause(
        env: Env, operator: OperatorProcess, kube: KubeClient, needs_local: LocalCluster) -> None:
    """Unschedulable surge pods are the cause a Failed rollout names; the old generation keeps
    serving whole."""
    await _create(env, _graph(annotations={ANNOTATION_ROLLOUT_PROGRESS_DEADLINE: "5s"}))
    first = _hashes(await _worker_dcds(env))
    await env.k("apply", "-f", "-", stdin=json.dumps(_filler(GPUS - 2 * len(WORKERS))))
    await env.k("rollout", "status", "deploy/gpu-filler", "--timeout=60s")
    async with RolloutSampler(kube, env.namespace, GRAPH) as sampler:
        await _set_workers(env, NEW)

        async def failed_unschedulable() -> dict[str, Any] | None:
            phase, ready = await _status(env, kube)
            return ready if phase == "Failed" and "unschedulable" in ready["message"] else None
        ready = await eventually(failed_unschedulable, within=60,
                                 what="the rollout to fail on unschedulable pods")
        assert ready["status"] == "False" and ready["reason"] == "rollout_failed", ready
        await asyncio.sleep(2)
        held = sampler.series[-1]
        assert [held.ready.get(g, {}) for g in first] == [dict.fromkeys(WORKERS, 2)], held.ready
    _assert_invariants(sampler.report())
    assert all(d["spec"]["replicas"] == 2 for d in await _worker_dcds(env)
               if _hashes([d]) <= first)
