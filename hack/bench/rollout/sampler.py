"""A rollout sampler shared by every graph of a namespace: one LIST of the pods and one of the
graphs per tick, split by graph, each judged by `e2e.rollout_invariants.observe`.

`e2e.rollout_sampler.RolloutSampler` makes two GETs per graph per tick; with N graphs that is
2N requests every 100 ms. This one makes two, whatever N, and keeps the same per-graph series
(`e2e.rollout_sampler.Point`), so each graph's `Report` is the e2e sampler's. `tick_seconds`
holds each tick's wall time (requests and judging), the benchmark's figure of its cost.

A graph is *done* at the first tick where its worker pods (of every generation, terminating
included) are exactly the desired ones, all ready and all running `image`, and, when
`phase` is given, its `status.rollingUpdate.phase` is that phase.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Mapping
from typing import Any

from backends.constants import LABEL_COMPONENT
from controller.client import KubeClient
from controller.errors import is_transient
from e2e.rollout_invariants import (
    Sample,
    desired_replicas,
    graph_budgets,
    observe,
    worker_pods,
)
from e2e.rollout_sampler import Point, Report, RolloutSampler
from hack.localcluster.simulation.generations import GRAPH_LABEL, ready_worker
from reconcilers.machinery.resources import PODS

from .graphs import DGDS

Json = dict[str, Any]


class SharedSampler:
    """Samples every graph of a namespace each `interval` until stopped."""

    def __init__(self, kube: KubeClient, namespace: str, graphs: list[str], image: str, *,
                 phase: str | None = None, interval: float = 0.1) -> None:
        self.kube, self.namespace, self.image, self.phase = kube, namespace, image, phase
        self.interval = interval
        self.series: dict[str, list[Point]] = {g: [] for g in graphs}
        self.done_at: dict[str, float] = {}
        self.tick_seconds: list[float] = []
        self.errors = 0
        self.start = time.monotonic()
        self._task: asyncio.Task[None] | None = None

    def begin(self) -> None:
        self.start = time.monotonic()
        self._task = asyncio.create_task(self._run(), name="shared-rollout-sampler")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    def now(self) -> float:
        """Seconds since the sampling began (the series' clock)."""
        return time.monotonic() - self.start

    async def _run(self) -> None:
        tick = time.monotonic()
        while True:
            try:
                await self.sample()
            except Exception as err:
                if not is_transient(err):
                    raise
                self.errors += 1
            tick = max(tick + self.interval, time.monotonic())
            await asyncio.sleep(tick - time.monotonic())

    async def sample(self) -> None:
        """One tick: both lists, then every graph's point."""
        began = time.monotonic()
        async with asyncio.TaskGroup() as group:
            pods = group.create_task(self.kube.request("GET", PODS.path(self.namespace)))
            graphs = group.create_task(self.kube.request("GET", DGDS.path(self.namespace)))
        by_graph: dict[str, list[Json]] = {}
        for pod in pods.result().get("items") or ():
            name = ((pod.get("metadata") or {}).get("labels") or {}).get(GRAPH_LABEL)
            by_graph.setdefault(str(name), []).append(pod)
        t = began - self.start
        for graph in graphs.result().get("items") or ():
            name = graph["metadata"]["name"]
            if name not in self.series:
                continue
            desired = desired_replicas(graph)
            own = by_graph.get(name, [])
            seen = observe(Sample(graph, own, desired, graph_budgets(graph, desired)))
            self.series[name].append(Point(t, seen, desired))
            if name not in self.done_at and self._done(graph, own, desired, seen.phase):
                self.done_at[name] = t
        self.tick_seconds.append(time.monotonic() - began)

    def _done(self, graph: Json, pods: list[Json], desired: Mapping[str, int],
              phase: str | None) -> bool:
        if self.phase is not None and phase != self.phase:
            return False
        workers = worker_pods(pods)
        counts: dict[str, int] = {}
        for pod in workers:
            meta = pod["metadata"]
            images = {c.get("image") for c in (pod.get("spec") or {}).get("containers") or ()}
            if meta.get("deletionTimestamp") or self.image not in images or not ready_worker(pod):
                return False
            component = (meta.get("labels") or {}).get(LABEL_COMPONENT, "")
            counts[component] = counts.get(component, 0) + 1
        return counts == {k: v for k, v in desired.items() if v > 0}

    def report(self, graph: str) -> Report:
        """The e2e sampler's report of one graph's series."""
        holder = RolloutSampler(self.kube, self.namespace, graph)
        holder.series = self.series[graph]
        return holder.report()


async def per_graph_round(kube: KubeClient, namespace: str, graphs: list[str]) -> float:
    """Wall seconds of one round of the e2e sampler's samples, one per graph, all at once
    (what N `RolloutSampler`s would cost per tick)."""
    samplers = [RolloutSampler(kube, namespace, g, graph_resource=DGDS) for g in graphs]
    began = time.monotonic()
    async with asyncio.TaskGroup() as group:
        for s in samplers:
            group.create_task(s.sample())
    return time.monotonic() - began
