"""A sampler of a graph's rollout: its pods and the graph every 100 ms, the invariants of each
sample (`rollout_invariants.observe`), and the worst values over the run.

    async with RolloutSampler(kube, "default", "vllm-disagg") as sampler:
        ...  # change the graph, wait for the rollout
    report = sampler.report()
    assert not report.breaches, report.breaches

Each sample lists the pods labelled `nvidia.com/dynamo-graph-deployment-name=<graph>` and
reads the graph (`v1beta1`, the storage version, so no conversion webhook is needed), both
at once, each request bounded by `request_timeout`. The desired replicas come from the graph
(`desired_replicas`) unless given; budgets from its annotations (`graph_budgets`). A sample
that fails transiently (timeout, 429, 5xx, a refused connection) is counted in `errors` and
skipped; anything else ends the sampling and is raised when the context exits. The sampling
task belongs to the context: it starts on entry and is cancelled and awaited on exit.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from controller.client import KubeClient
from controller.errors import ApiError, is_transient
from controller.resource import Resource
from e2e.rollout_invariants import (
    Json,
    Observation,
    Sample,
    desired_replicas,
    graph_budgets,
    observe,
    ready_beside_old_pods,
)
from hack.localcluster.simulation.generations import GRAPH_LABEL
from reconcilers.machinery.resources import GRAPH_DEPLOYMENTS, PODS

__all__ = ["Point", "Report", "RolloutSampler"]


@dataclass(frozen=True)
class Point:
    """One sample: seconds since the sampler started, and what `observe` found."""

    t: float
    observation: Observation
    desired: dict[str, int]

    @property
    def ready(self) -> dict[str, dict[str, int]]:
        """generation -> worker component -> ready pods."""
        return self.observation.ready

    @property
    def capacity(self) -> float:
        return self.observation.capacity


@dataclass(frozen=True)
class Report:
    """The worst values over a sampler's series (`min_capacity` is NaN without samples)."""

    samples: int
    errors: int
    min_capacity: float
    #: worker component -> the largest surge seen.
    max_surge: dict[str, int]
    max_generations: int
    #: Every misplaced worker seen, once per pod and Dynamo namespace.
    violations: tuple[Json, ...]
    #: Every distinct breach seen, with the time it was first seen.
    breaches: tuple[tuple[float, str], ...]
    #: The rollingUpdate phases and Ready statuses seen, in order, repeats folded.
    phases: tuple[str | None, ...]
    ready_conditions: tuple[str | None, ...]
    #: Samples of the graph Ready while two generations held pods (`ready_beside_old_pods`).
    ready_beside_old_pods: int = 0
    #: The longest time between two consecutive samples, in seconds (0 with fewer than two).
    max_gap: float = 0.0

    def sampled_throughout(self, *, min_samples: int = 10, max_gap: float = 1.0) -> bool:
        """Whether the series can show the invariants held: enough samples, none far apart.
        A count alone depends on how long the rollout took and how loaded the machine was; a
        gap bound says no state lasting longer than `max_gap` went unseen."""
        return self.samples >= min_samples and self.max_gap <= max_gap


class RolloutSampler:
    """Samples one graph's pods and status until stopped (an async context manager)."""

    def __init__(self, kube: KubeClient, namespace: str, graph: str, *,
                 desired: Mapping[str, int] | None = None, interval: float = 0.1,
                 request_timeout: float = 5.0,
                 graph_resource: Resource = GRAPH_DEPLOYMENTS) -> None:
        self.kube = kube
        self.namespace = namespace
        self.graph = graph
        self.interval = interval
        self.request_timeout = request_timeout
        self.graph_resource = graph_resource
        self._desired = dict(desired) if desired is not None else None
        self._last_desired: dict[str, int] = dict(desired or {})
        self.series: list[Point] = []
        self.errors = 0
        self._start = time.monotonic()
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> RolloutSampler:
        self._start = time.monotonic()
        self._task = asyncio.create_task(self._run(), name=f"rollout-sampler-{self.graph}")
        return self

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None,
                        tb: TracebackType | None) -> None:
        if error is None:
            await self.stop()
            # The block ended on a state it read itself: one more sample, taken after that
            # read, so the series ends where the block did (the one in flight was cancelled).
            await self._sample_unless_transient()
            return
        with contextlib.suppress(Exception):  # the body's error is the one to see
            await self.stop()

    async def stop(self) -> None:
        """End the sampling; raises what ended it early, if anything did."""
        task, self._task = self._task, None
        if task is None:
            return
        if not task.done():
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    async def _run(self) -> None:
        tick = time.monotonic()
        while True:
            await self._sample_unless_transient()
            tick += self.interval
            now = time.monotonic()
            if tick < now:  # a slow sample: the next one at once, the missed ticks dropped
                tick = now
            await asyncio.sleep(tick - now)

    async def _sample_unless_transient(self) -> None:
        """A sample; an API error worth retrying is counted, not raised."""
        try:
            await self.sample()
        except Exception as err:
            if not _transient(err):
                raise
            self.errors += 1

    async def sample(self) -> Point:
        """Take one sample now, record it and return it."""
        t = time.monotonic() - self._start
        async with asyncio.TaskGroup() as group:
            pods = group.create_task(self._get(
                PODS.path(self.namespace), [("labelSelector", f"{GRAPH_LABEL}={self.graph}")]))
            graph = group.create_task(self._graph())
        desired = self._desired
        if desired is None:
            desired = desired_replicas(graph.result()) if graph.result() else self._last_desired
        self._last_desired = desired
        observation = observe(Sample(graph.result(), pods.result().get("items") or [], desired,
                                     graph_budgets(graph.result(), desired)))
        point = Point(t, observation, dict(desired))
        self.series.append(point)
        return point

    async def _graph(self) -> Json | None:
        try:
            return await self._get(self.graph_resource.path(self.namespace, self.graph))
        except ApiError as err:
            if err.code == 404:
                return None
            raise

    async def _get(self, path: str, query: list[tuple[str, str]] | None = None) -> Json:
        async with asyncio.timeout(self.request_timeout):
            result: dict[str, Any] = await self.kube.request(
                "GET", path, query=query, request_timeout=self.request_timeout)
            return result

    def report(self) -> Report:
        """The worst values of the series so far."""
        surge: dict[str, int] = {}
        violations: dict[tuple[str, str], Json] = {}
        breaches: dict[str, float] = {}
        for point in self.series:
            seen = point.observation
            for name, over in seen.surge.items():
                surge[name] = max(surge.get(name, 0), over)
            for v in seen.violations:
                violations.setdefault((str(v["pod"]), str(v["dynamoNamespace"])), v)
            for breach in seen.breaches:
                breaches.setdefault(breach, point.t)
        return Report(
            samples=len(self.series), errors=self.errors,
            min_capacity=min((p.capacity for p in self.series), default=float("nan")),
            max_surge=surge,
            max_generations=max((len(p.observation.generations) for p in self.series),
                                default=0),
            violations=tuple(violations.values()),
            breaches=tuple((t, text) for text, t in breaches.items()),
            phases=_folded(p.observation.phase for p in self.series),
            ready_conditions=_folded(p.observation.ready_condition for p in self.series),
            ready_beside_old_pods=ready_beside_old_pods(p.observation for p in self.series),
            max_gap=max((b.t - a.t for a, b in itertools.pairwise(self.series)), default=0.0))


def _transient(err: BaseException) -> bool:
    """A transient error, or a group of them (a sample's requests run in a task group)."""
    if isinstance(err, BaseExceptionGroup):
        return all(_transient(e) for e in err.exceptions)
    return is_transient(err)


def _folded(values: Iterable[str | None]) -> tuple[str | None, ...]:
    out: list[str | None] = []
    for value in values:
        if not out or out[-1] != value:
            out.append(value)
    return tuple(out)
