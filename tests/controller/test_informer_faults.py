"""The informer and client against injected API server faults (hack/localcluster/faults.py):
429 with Retry-After on list, a 503 storm on watch, a 500 on a write. Timing is checked with
lower bounds only, from the server-side arrival times of the requests a fault rule failed."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from harness import FAST_WATCH, OPERATOR_AGENT, eventually, widget

from controller.client import ClientConfig, KubeClient
from controller.errors import ApiError, NotFound
from controller.informer import DeletedFinalStateUnknown, EventHandler, Informer
from controller.metrics import Metrics
from controller.resource import Resource
from controller.store import object_key
from hack.localcluster.faults import FaultRule
from hack.localcluster.server import LocalCluster

Json = dict[str, Any]

WATCH_RESOURCE = "widgets.test.example.com"


@dataclass
class TimedRule(FaultRule):
    """A fault rule that notes the server-side arrival time of every request it fails.

    Request n+1 arrives no earlier than the answer to request n plus the client's wait, so
    the gaps between these times are lower bounds of how long the informer waited.
    """

    times: list[float] = field(default_factory=list, compare=False)

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "hits" and value:
            self.times.append(time.monotonic())
        super().__setattr__(name, value)

    @property
    def gaps(self) -> list[float]:
        return [b - a for a, b in zip(self.times, self.times[1:], strict=False)]


def timed_error(cluster: LocalCluster, code: int, verb: str, retry_after: int) -> TimedRule:
    rule = TimedRule("error", code=code, verbs=frozenset({verb}),
                     resources=frozenset({"widgets"}), retry_after=retry_after)
    cluster.faults.add(rule)
    return rule


class Seen:
    """The object set rebuilt from handler calls alone."""

    def __init__(self) -> None:
        self.objects: dict[str, Json] = {}

    def handler(self) -> EventHandler:
        return EventHandler(on_add=self.put, on_update=lambda _old, new: self.put(new),
                            on_delete=self.delete)

    def put(self, obj: Json) -> None:
        self.objects[object_key(obj)] = obj

    def delete(self, obj: Json | DeletedFinalStateUnknown) -> None:
        key = obj.key if isinstance(obj, DeletedFinalStateUnknown) else object_key(obj)
        self.objects.pop(key, None)

    def specs(self) -> dict[str, Any]:
        return {key: obj.get("spec") for key, obj in self.objects.items()}


@pytest.fixture
async def operator(kubeconfig: Path) -> AsyncIterator[KubeClient]:
    """A client with the operator's user agent and no client-side QPS limit."""
    c = await KubeClient.connect(kubeconfig, ClientConfig(qps=None), Metrics())
    try:
        yield c
    finally:
        await c.close()


@contextlib.asynccontextmanager
async def running(informer: Informer) -> AsyncIterator[asyncio.Task[None]]:
    task = asyncio.create_task(informer.run())
    try:
        yield task
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def test_list_429_waits_for_retry_after_then_syncs(
        cluster: LocalCluster, operator: KubeClient, client: KubeClient,
        widgets: Resource) -> None:
    await client.create(widgets, widget("a", size=1))
    # Retry-After (1 s) is far above FAST_WATCH's backoff cap (0.5 s): only honouring the
    # header explains gaps of a second.
    rule = timed_error(cluster, 429, "list", retry_after=1)
    informer = Informer(operator, widgets, "default", settings=FAST_WATCH)
    async with running(informer):
        await eventually(lambda: rule.hits >= 3, within=4.0)
        assert not informer.has_synced
        cluster.faults.remove(rule)
        await asyncio.wait_for(informer.wait_for_sync(), 5.0)
        assert set(informer.store.list_keys()) == {"default/a"}
    gaps = rule.gaps
    assert len(gaps) >= 2
    assert all(gap >= 1.0 for gap in gaps), gaps
    assert cluster.stats.count(verb="list", resource=WATCH_RESOURCE,
                               user_agent=OPERATOR_AGENT) == rule.hits + 1


async def test_watch_503_storm_backs_off_and_recovers(
        cluster: LocalCluster, operator: KubeClient, client: KubeClient,
        widgets: Resource) -> None:
    for name in ("a", "b", "c"):
        await client.create(widgets, widget(name, size=1))
    informer = Informer(operator, widgets, "default", settings=FAST_WATCH)
    seen = Seen()
    informer.add_handler(seen.handler())
    async with running(informer):
        await asyncio.wait_for(informer.wait_for_sync(), 2.0)
        # Retry-After 0: the spacing comes from the informer's own exponential backoff.
        rule = timed_error(cluster, 503, "watch", retry_after=0)
        try:
            # End the open watch (if any yet) so the informer's next one meets the storm.
            await eventually(lambda: rule.hits >= 1 or cluster.faults.close_watches() > 0)
            await eventually(lambda: rule.hits >= 1)
            storm_start = time.monotonic()
            # Changes while no watch can be opened.
            await client.create(widgets, widget("d", size=1))
            await client.patch(widgets, "default", "a", {"spec": {"size": 2}})
            await client.delete(widgets, "default", "b")
            await asyncio.sleep(2.0 - (time.monotonic() - storm_start))
            storm = time.monotonic() - storm_start
            hits_in_storm = rule.hits
        finally:
            cluster.faults.remove(rule)
        await client.patch(widgets, "default", "c", {"spec": {"size": 3}})
        expected = {"default/a": {"size": 2}, "default/c": {"size": 3},
                    "default/d": {"size": 1}}
        await eventually(lambda: seen.specs() == expected)
        assert informer.store.get("default", "b") is None

    gaps = rule.gaps
    # Without backoff a 2 s storm would be hundreds of attempts; with 0.05 s doubling to
    # 0.5 s it is at most about a dozen.
    assert 3 <= hits_in_storm <= 12, (hits_in_storm, storm)
    # Each wait is at least the backoff base for its attempt: 0.05 s doubling, capped at 0.5 s.
    for i, gap in enumerate(gaps):
        floor = min(FAST_WATCH.backoff_initial * 2 ** i, FAST_WATCH.backoff_max)
        assert gap >= floor, (i, gaps)
    assert gaps[-1] > gaps[0], gaps


async def test_write_500_raises_api_error(cluster: LocalCluster, operator: KubeClient,
                                          widgets: Resource) -> None:
    rule = cluster.faults.error(500, verbs=("create",), resources=("widgets",), times=1)
    with pytest.raises(ApiError) as caught:
        await operator.create(widgets, widget("a"))
    assert caught.value.code == 500
    assert caught.value.reason == "InternalError"
    assert "fault injected" in caught.value.message
    assert rule.hits == 1 and rule not in cluster.faults.rules
    with pytest.raises(NotFound):
        await operator.get(widgets, "default", "a")
    # The rule retired after one hit: the same write now goes through.
    created = await operator.create(widgets, widget("a"))
    assert created["metadata"]["name"] == "a"

    rule = cluster.faults.error(500, verbs=("patch",), resources=("widgets",))
    with pytest.raises(ApiError) as caught:
        await operator.patch(widgets, "default", "a", {"spec": {"size": 9}})
    assert caught.value.code == 500
    cluster.faults.remove(rule)
    got = await operator.get(widgets, "default", "a")
    assert got.get("spec", {}).get("size") is None
