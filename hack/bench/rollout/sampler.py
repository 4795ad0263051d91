"""A rollout sampler of every graph of a namespace, fed by watch streams: one LIST of the pods
and one of the graphs, then a watch of each from the lists' resourceVersions; every event is
applied to a copy of the namespace and the graph it touches is judged again by
`e2e.rollout_invariants.observe`.

Why watches and not a LIST every 100 ms: at N graphs a LIST of the pods carries ~7N pods;
at N=20 one such tick already took 0.25 s on a loaded 2-core machine, and at N=1,000 it
would take seconds, in the very process that runs the local cluster. A watch sends each pod
once per change instead.

Why it misses no breach a polling sampler caught: a watch delivers every change of every pod,
in the order the API server committed them (one resourceVersion sequence per stream), with no
change left out; after each event the copy is exactly the pods as they stood at that
resourceVersion. A LIST every 100 ms sees some of those states; this sampler judges every one
of them (one `Point` per event of a graph's pods or of the graph), so its worst values are
the worst over a superset of what polling could see. That holds only without a gap: a watch
that the server ends (timeout) is resumed from the last resourceVersion, losing nothing; one
the server refuses as too old (410 Gone) or that breaks off is a gap, recorded in `gaps`, and
a run with a gap is refused by the benchmark's checks (`figures.problems`).

The invariants checked (capacity, surge, generations, isolation) are functions of the graph's
pods; the graph itself gives the desired replicas and budgets, which an image change leaves
as they are, and the rollout phase. Pods and graph come on two streams, so their relative
order is not the server's; a graph's point pairs its pods as they stand with its latest
status.

A graph is *done* at the first event after which its worker pods (of every generation,
terminating included) are exactly the desired ones, all ready and all running `image`, and,
when `phase` is given, its `status.rollingUpdate.phase` is that phase.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Mapping
from typing import Any

from backends.constants import LABEL_COMPONENT
from controller.client import KubeClient
from controller.resource import Resource
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

#: A watch asks the server to end it after this long; it is then resumed from where it stood.
WATCH_SECONDS = 600
#: A stream silent this long is dead (a gap); the local cluster bookmarks every 5 s.
READ_TIMEOUT = 60.0


class Gap(Exception):
    """A watch lost events: it cannot resume from where it stood."""


class WatchSampler:
    """Follows every graph of a namespace from `begin()` until `stop()` (see the module)."""

    def __init__(self, kube: KubeClient, namespace: str, graphs: list[str], image: str, *,
                 phase: str | None = None) -> None:
        self.kube, self.namespace, self.image, self.phase = kube, namespace, image, phase
        self.series: dict[str, list[Point]] = {g: [] for g in graphs}
        self.done_at: dict[str, float] = {}
        #: Events applied, by stream; bookmarks are not counted.
        self.events: dict[str, int] = {"pods": 0, "graphs": 0}
        self.batches = 0
        #: CPU-bound seconds spent applying and judging events (this process's own cost).
        self.handle_seconds = 0.0
        #: The most seconds one batch of events took to apply and judge.
        self.handle_seconds_max = 0.0
        #: Watches the server ended and that were resumed without loss.
        self.resumes = 0
        #: Why each watch that lost events did (see the module); any makes the run's figures
        #: refused.
        self.gaps: list[str] = []
        self.start = time.monotonic()
        self._pods: dict[str, dict[str, Json]] = {g: {} for g in graphs}
        self._graphs: dict[str, Json] = {}
        self._tasks: list[asyncio.Task[None]] = []

    async def begin(self) -> None:
        """List both kinds, judge every graph once, and start following both streams."""
        self.start = time.monotonic()
        pods, graphs = await asyncio.gather(self._list(PODS), self._list(DGDS))
        for pod in pods.get("items") or ():
            self._put_pod(pod)
        for graph in graphs.get("items") or ():
            if graph["metadata"]["name"] in self.series:
                self._graphs[graph["metadata"]["name"]] = graph
        t = self.now()
        for name in self.series:
            self._judge(name, t)
        self._tasks = [
            asyncio.create_task(self._follow(PODS, pods["metadata"]["resourceVersion"], "pods"),
                                name="rollout-sampler-pods"),
            asyncio.create_task(self._follow(DGDS, graphs["metadata"]["resourceVersion"],
                                             "graphs"), name="rollout-sampler-graphs")]

    async def stop(self) -> None:
        """End both streams; raises what ended one early, if anything did (a gap is counted,
        not raised)."""
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    def now(self) -> float:
        """Seconds since the sampling began (the series' clock)."""
        return time.monotonic() - self.start

    async def _list(self, resource: Resource) -> Json:
        result: Json = await self.kube.request("GET", resource.path(self.namespace),
                                               request_timeout=120.0)
        return result

    async def _follow(self, resource: Resource, version: str, stream: str) -> None:
        try:
            while True:
                version = await self._watch(resource, version, stream)
        except Gap as gap:
            self.gaps.append(str(gap)[:300])

    async def _watch(self, resource: Resource, version: str, stream: str) -> str:
        """One watch from `version` until the server ends it; the last version seen."""
        try:
            async with self.kube.watch_batches(
                    resource, self.namespace, resource_version=version,
                    timeout_seconds=WATCH_SECONDS, read_timeout=READ_TIMEOUT) as batches:
                async for batch in batches:
                    version = self._apply(batch, stream, version)
        except Gap:
            raise
        except Exception as err:  # a refused watch (410 Gone) or one that broke off
            raise Gap(f"{stream} watch: {err!r}") from err
        self.resumes += 1
        return version

    def _apply(self, batch: list[Json], stream: str, version: str) -> str:
        began = time.monotonic()
        t = began - self.start
        self.batches += 1
        for event in batch:
            kind, obj = event.get("type"), event.get("object") or {}
            if kind == "ERROR":
                raise Gap(f"{stream} watch: {obj.get('code')} {obj.get('message')}")
            version = str((obj.get("metadata") or {}).get("resourceVersion") or version)
            if kind == "BOOKMARK":
                continue
            self.events[stream] += 1
            touched = self._pod_event(kind, obj) if stream == "pods" else \
                self._graph_event(kind, obj)
            if touched is not None:
                self._judge(touched, t)
        spent = time.monotonic() - began
        self.handle_seconds += spent
        self.handle_seconds_max = max(self.handle_seconds_max, spent)
        return version

    def _put_pod(self, pod: Json) -> str | None:
        name = _graph_of(pod)
        if name not in self._pods:
            return None
        self._pods[name][pod["metadata"]["name"]] = pod
        return name

    def _pod_event(self, kind: Any, pod: Json) -> str | None:
        if kind != "DELETED":
            return self._put_pod(pod)
        name = _graph_of(pod)
        if name not in self._pods:
            return None
        self._pods[name].pop(pod["metadata"]["name"], None)
        return name

    def _graph_event(self, kind: Any, graph: Json) -> str | None:
        name = graph["metadata"]["name"]
        if name not in self.series:
            return None
        if kind == "DELETED":
            self._graphs.pop(name, None)
        else:
            self._graphs[name] = graph
        return str(name)

    def _judge(self, name: str, t: float) -> None:
        graph = self._graphs.get(name)
        if graph is None:
            return
        desired = desired_replicas(graph)
        own = list(self._pods[name].values())
        seen = observe(Sample(graph, own, desired, graph_budgets(graph, desired)))
        self.series[name].append(Point(t, seen, desired))
        if name not in self.done_at and self._done(own, desired, seen.phase):
            self.done_at[name] = t

    def _done(self, pods: list[Json], desired: Mapping[str, int], phase: str | None) -> bool:
        if self.phase is not None and phase != self.phase:
            return False
        counts: dict[str, int] = {}
        for pod in worker_pods(pods):
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


def _graph_of(pod: Json) -> str:
    return str(((pod.get("metadata") or {}).get("labels") or {}).get(GRAPH_LABEL))


async def list_tick(kube: KubeClient, namespace: str) -> float:
    """Wall seconds of one polling sampler's tick at rest: a LIST of the namespace's pods and
    one of its graphs, at once (what the sampler before this one did every 100 ms)."""
    began = time.monotonic()
    await asyncio.gather(kube.request("GET", PODS.path(namespace), request_timeout=120.0),
                         kube.request("GET", DGDS.path(namespace), request_timeout=120.0))
    return time.monotonic() - began
