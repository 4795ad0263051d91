"""Controllers over a manager: owner mapping, mapped watches, retries with backoff and
metrics, conflicts, NotFound after delete, concurrency, and an idle controller that writes
nothing."""

from __future__ import annotations

import asyncio
import itertools
import os
import time
from pathlib import Path

from harness import OPERATOR_AGENT, eventually, manager, running, widget

from controller.client import KubeClient
from controller.errors import NotFound
from controller.manager import Manager
from controller.ratelimit import ItemExponentialFailureRateLimiter
from controller.reconcile import Request, Result
from controller.resource import CONFIG_MAPS, Resource

# The issue asks for 30 s of silence; CONTROLLER_IDLE_SECONDS shortens it for quick local runs.
IDLE_SECONDS = float(os.environ.get("CONTROLLER_IDLE_SECONDS", "30"))


def child_of(owner: dict[str, object], name: str) -> dict[str, object]:
    meta = owner["metadata"]
    assert isinstance(meta, dict)
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": meta["namespace"],
                         "ownerReferences": [{"apiVersion": "test.example.com/v1",
                                              "kind": "Widget", "name": meta["name"],
                                              "uid": meta["uid"], "controller": True}]},
            "data": {"owner": meta["name"]}}


def add_child_writer(mgr: Manager, widgets: Resource, seen: list[Request]) -> None:
    """A reconciler that keeps one ConfigMap per Widget, writing only when it is missing."""
    async def reconcile(request: Request) -> Result | None:
        seen.append(request)
        try:
            owner = await mgr.cache.get(widgets, request.namespace, request.name)
        except NotFound:
            return None
        try:
            await mgr.cache.get(CONFIG_MAPS, request.namespace, f"{request.name}-child")
        except NotFound:
            await mgr.client.create(CONFIG_MAPS, child_of(owner, f"{request.name}-child"))
        return None

    mgr.add_controller("widget", reconcile, for_=widgets, owns=[CONFIG_MAPS],
                       max_concurrent_reconciles=4)


async def test_owned_children_wake_their_owner(kubeconfig: Path, client: KubeClient,
                                               widgets: Resource) -> None:
    mgr = await manager(kubeconfig)
    seen: list[Request] = []
    add_child_writer(mgr, widgets, seen)
    await client.create(widgets, widget("a"))
    async with running(mgr):
        await eventually(lambda: mgr.cache.informer(CONFIG_MAPS).store.get("default",
                                                                           "a-child") is not None)
        # A child changed by someone else wakes its owner, which puts it back.
        seen.clear()
        await client.delete(CONFIG_MAPS, "default", "a-child")
        await eventually(lambda: Request("default", "a") in seen)
        await eventually(lambda: mgr.cache.informer(CONFIG_MAPS).store.get("default",
                                                                           "a-child") is not None)
        # Children that are not controlled by a Widget wake nobody.
        seen.clear()
        await client.create(CONFIG_MAPS, {"metadata": {"name": "stray", "namespace": "default",
                                                       "ownerReferences": [{
                                                           "apiVersion": "test.example.com/v1",
                                                           "kind": "Widget", "name": "a",
                                                           "uid": "x"}]}})
        await asyncio.sleep(0.3)
        assert seen == []


async def test_mapped_watch(kubeconfig: Path, client: KubeClient, widgets: Resource) -> None:
    mgr = await manager(kubeconfig)
    seen: list[Request] = []

    async def reconcile(request: Request) -> None:
        seen.append(request)

    def by_label(obj: dict[str, object]) -> list[Request]:
        labels = obj["metadata"].get("labels") or {}  # type: ignore[attr-defined]
        return [Request("default", labels["widget"])] if "widget" in labels else []

    mgr.add_controller("mapped", reconcile, for_=widgets, watches=[(CONFIG_MAPS, by_label)])
    async with running(mgr):
        await client.create(CONFIG_MAPS, {"metadata": {"name": "cfg", "namespace": "default",
                                                       "labels": {"widget": "target"}}})
        await eventually(lambda: Request("default", "target") in seen)


async def test_raising_reconcile_is_retried_with_growing_delays_and_counted(
        kubeconfig: Path, client: KubeClient, widgets: Resource) -> None:
    mgr = await manager(kubeconfig)
    attempts: list[float] = []

    async def reconcile(request: Request) -> None:
        attempts.append(time.monotonic())
        if len(attempts) <= 5:
            raise RuntimeError("boom")

    mgr.add_controller("flaky", reconcile, for_=widgets,
                       rate_limiter=ItemExponentialFailureRateLimiter(0.02, 5.0))
    await client.create(widgets, widget("f"))
    async with running(mgr):
        await eventually(lambda: len(attempts) >= 6, within=5)
        await asyncio.sleep(0.1)
        gaps = [b - a for a, b in itertools.pairwise(attempts)]
        for gap, expected in zip(gaps, (0.02, 0.04, 0.08, 0.16, 0.32), strict=False):
            assert gap >= expected * 0.9, (gaps, expected)
        assert len(attempts) == 6, "success stops the retries"
        registry = mgr.metrics.registry
        assert registry.get_sample_value("controller_runtime_reconcile_errors_total",
                                         {"controller": "flaky"}) == 5
        assert registry.get_sample_value("controller_runtime_reconcile_total",
                                         {"controller": "flaky", "result": "error"}) == 5
        assert registry.get_sample_value("controller_runtime_reconcile_total",
                                         {"controller": "flaky", "result": "success"}) == 1
        assert registry.get_sample_value("workqueue_retries_total", {"name": "flaky"}) == 5
        assert mgr.controllers[0].queue.num_requeues(Request("default", "f")) == 0


async def test_conflicts_are_requeued_but_not_errors(kubeconfig: Path, client: KubeClient,
                                                     widgets: Resource) -> None:
    mgr = await manager(kubeconfig)
    calls = 0

    async def reconcile(request: Request) -> None:
        nonlocal calls
        calls += 1
        if calls == 1:
            stale = dict(await mgr.cache.get(widgets, request.namespace, request.name))
            await client.patch(widgets, request.namespace, request.name, {"spec": {"n": 1}})
            await mgr.client.update(widgets, stale)  # raises Conflict: the cache is behind

    mgr.add_controller("conflicted", reconcile, for_=widgets)
    await client.create(widgets, widget("c"))
    async with running(mgr):
        await eventually(lambda: calls >= 2)
        registry = mgr.metrics.registry
        assert registry.get_sample_value("controller_runtime_reconcile_errors_total",
                                         {"controller": "conflicted"}) == 0
        assert registry.get_sample_value("controller_runtime_reconcile_total",
                                         {"controller": "conflicted", "result": "requeue"}) == 1


async def test_requeue_after_and_not_found_after_delete(kubeconfig: Path, client: KubeClient,
                                                        widgets: Resource) -> None:
    mgr = await manager(kubeconfig)
    outcomes: list[str] = []

    async def reconcile(request: Request) -> Result:
        try:
            await mgr.cache.get(widgets, request.namespace, request.name)
        except NotFound:
            outcomes.append("gone")
            return Result()
        outcomes.append("present")
        return Result(requeue_after=0.1)

    mgr.add_controller("periodic", reconcile, for_=widgets)
    await client.create(widgets, widget("p"))
    async with running(mgr):
        await eventually(lambda: outcomes.count("present") >= 3)
        await client.delete(widgets, "default", "p")
        await eventually(lambda: "gone" in outcomes)
        await asyncio.sleep(0.3)
        assert outcomes[-1] == "gone", "a deleted object is not requeued again"
        assert mgr.metrics.registry.get_sample_value(
            "controller_runtime_reconcile_total",
            {"controller": "periodic", "result": "requeue_after"}) >= 3  # type: ignore[operator]


async def test_workers_run_in_parallel_but_never_on_one_key(
        kubeconfig: Path, client: KubeClient, widgets: Resource) -> None:
    mgr = await manager(kubeconfig)
    in_flight: set[Request] = set()
    peak = 0
    overlaps = 0
    done: set[str] = set()

    async def reconcile(request: Request) -> None:
        nonlocal peak, overlaps
        if request in in_flight:
            overlaps += 1
        in_flight.add(request)
        peak = max(peak, len(in_flight))
        await asyncio.sleep(0.02)
        in_flight.discard(request)
        done.add(request.name)

    mgr.add_controller("parallel", reconcile, for_=widgets, max_concurrent_reconciles=4)
    for i in range(12):
        await client.create(widgets, widget(f"p{i}"))
    async with running(mgr):
        for _ in range(3):  # bursts of updates while reconciles run
            for i in range(12):
                await client.patch(widgets, "default", f"p{i}", {"spec": {"t": time.time()}})
        await eventually(lambda: len(done) == 12)
        await asyncio.sleep(0.2)
        assert overlaps == 0
        assert peak == 4
        assert mgr.metrics.registry.get_sample_value(
            "controller_runtime_max_concurrent_reconciles", {"controller": "parallel"}) == 4


async def test_idle_controller_makes_no_writes(cluster: object, kubeconfig: Path,
                                               client: KubeClient, widgets: Resource) -> None:
    from hack.localcluster.server import LocalCluster
    assert isinstance(cluster, LocalCluster)
    for i in range(200):
        await client.create(widgets, widget(f"idle{i}"))
    mgr = await manager(kubeconfig)
    seen: list[Request] = []
    add_child_writer(mgr, widgets, seen)
    async with running(mgr):
        informer = mgr.cache.informer(CONFIG_MAPS)
        await eventually(lambda: len(informer.store) >= 200, within=20)
        await asyncio.sleep(0.5)  # the children's own events settle
        cluster.stats.reset()
        reconciles = len(seen)
        await asyncio.sleep(IDLE_SECONDS)
        assert cluster.stats.writes(user_agent=OPERATOR_AGENT) == 0
        assert len(seen) == reconciles, "nothing woke the controller"
        # Only the open watches and their re-opening, no polling lists.
        assert cluster.stats.count(verb="list", user_agent=OPERATOR_AGENT) == 0
