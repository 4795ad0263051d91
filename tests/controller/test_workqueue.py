"""The work queue: dedup, one worker per key, delays, rate limits, drain, metrics."""

from __future__ import annotations

import asyncio
import random
import time

import pytest
from prometheus_client import CollectorRegistry

from controller.metrics import Metrics
from controller.ratelimit import ItemExponentialFailureRateLimiter
from controller.workqueue import ShutDown, WorkQueue


async def test_dedup_while_waiting_and_requeue_after_done() -> None:
    q: WorkQueue[str] = WorkQueue()
    q.add("a")
    q.add("a")
    q.add("b")
    assert len(q) == 2
    item = await q.get()
    assert item == "a"
    q.add("a")  # held by a worker: marked dirty, not queued
    assert len(q) == 1
    q.add("a")
    q.done("a")
    assert len(q) == 2
    assert [await q.get(), await q.get()] == ["b", "a"]


async def test_never_runs_a_key_twice_at_once_and_every_add_is_seen() -> None:
    q: WorkQueue[int] = WorkQueue()
    keys = range(8)
    in_flight: set[int] = set()
    violations = 0
    last_add: dict[int, float] = {}
    last_start: dict[int, float] = {}
    max_parallel = 0

    async def worker() -> None:
        nonlocal violations, max_parallel
        while True:
            try:
                key = await q.get()
            except ShutDown:
                return
            if key in in_flight:
                violations += 1
            in_flight.add(key)
            max_parallel = max(max_parallel, len(in_flight))
            last_start[key] = time.monotonic()
            await asyncio.sleep(random.random() * 0.004)
            in_flight.discard(key)
            q.done(key)

    async def producer() -> None:
        for _ in range(400):
            key = random.choice(keys)
            last_add[key] = time.monotonic()
            q.add(key)
            await asyncio.sleep(random.random() * 0.001)

    async with asyncio.TaskGroup() as tg:
        workers = [tg.create_task(worker()) for _ in range(6)]
        await producer()
        while True:
            if not (len(q) or in_flight):
                break
            await asyncio.sleep(0.005)
        await q.shutdown_with_drain()
    assert all(w.done() for w in workers)
    assert violations == 0
    assert max_parallel > 1, "workers really ran concurrently"
    for key, added in last_add.items():
        assert last_start[key] >= added, "the last add of each key was processed"


async def test_bursts_coalesce() -> None:
    q: WorkQueue[str] = WorkQueue()
    processed: list[str] = []
    gate = asyncio.Event()

    async def worker() -> None:
        while True:
            try:
                key = await q.get()
            except ShutDown:
                return
            await gate.wait()
            processed.append(key)
            q.done(key)

    async with asyncio.TaskGroup() as tg:
        tg.create_task(worker())
        for _ in range(1000):
            for key in ("a", "b", "c"):
                q.add(key)
            await asyncio.sleep(0)
        gate.set()
        while True:
            if not len(q):
                break
            await asyncio.sleep(0.001)
        await q.shutdown_with_drain()
    # 3000 adds: "a" once in hand and once more after it, "b" and "c" once each.
    assert processed == ["a", "b", "c", "a"]


async def test_add_after_earliest_wins_and_dedups() -> None:
    q: WorkQueue[str] = WorkQueue()
    q.add_after("a", 0.6)
    q.add_after("a", 0.05)
    q.add_after("a", 0.5)
    start = time.monotonic()
    assert await asyncio.wait_for(q.get(), 1) == "a"
    assert 0.04 <= time.monotonic() - start < 0.45
    q.done("a")
    await asyncio.sleep(0.7)
    assert len(q) == 0, "the later schedules were folded into the first"
    q.add_after("b", 0)
    assert len(q) == 1


async def test_taking_an_item_drops_its_pending_delay() -> None:
    """The reconcile that runs now supersedes one asked for later: it asks again itself
    if it still needs to. Other items keep their delays."""
    q: WorkQueue[str] = WorkQueue()
    q.add_after("a", 0.2)
    q.add_after("b", 0.2)
    q.add("a")  # an event, before the delay is over
    assert await asyncio.wait_for(q.get(), 1) == "a"
    q.done("a")
    await asyncio.sleep(0.35)
    assert len(q) == 1, "a's delayed run was dropped, b's was not"
    assert await asyncio.wait_for(q.get(), 1) == "b"
    q.done("b")
    # A delay asked for while the item is being processed stands.
    q.add("c")
    assert await asyncio.wait_for(q.get(), 1) == "c"
    q.add_after("c", 0.05)
    q.done("c")
    assert await asyncio.wait_for(q.get(), 1) == "c"
    q.done("c")


async def test_rate_limited_add_waits_growing_delays_and_forget_resets() -> None:
    q: WorkQueue[str] = WorkQueue(rate_limiter=ItemExponentialFailureRateLimiter(0.04, 1.0))
    waits = []
    for _ in range(3):
        start = time.monotonic()
        q.add_rate_limited("a")
        item = await asyncio.wait_for(q.get(), 2)
        waits.append(time.monotonic() - start)
        q.done(item)
    assert waits[0] >= 0.035 and waits[1] >= 0.075 and waits[2] >= 0.155
    assert q.num_requeues("a") == 3
    q.forget("a")
    assert q.num_requeues("a") == 0


async def test_shutdown_hands_out_what_is_queued_then_raises() -> None:
    q: WorkQueue[str] = WorkQueue()
    q.add("a")
    q.add_after("later", 0.01)
    q.shutdown()
    q.add("ignored")
    assert await q.get() == "a"
    with pytest.raises(ShutDown):
        await q.get()


async def test_shutdown_wakes_blocked_getters() -> None:
    q: WorkQueue[str] = WorkQueue()
    getter = asyncio.create_task(q.get())
    await asyncio.sleep(0.01)
    q.shutdown()
    with pytest.raises(ShutDown):
        await asyncio.wait_for(getter, 1)


async def test_shutdown_with_drain_waits_for_in_flight() -> None:
    q: WorkQueue[str] = WorkQueue()
    q.add("a")
    item = await q.get()
    drained = asyncio.create_task(q.shutdown_with_drain())
    await asyncio.sleep(0.05)
    assert not drained.done()
    q.done(item)
    await asyncio.wait_for(drained, 1)


async def test_cancelled_getter_does_not_lose_a_wakeup() -> None:
    q: WorkQueue[str] = WorkQueue()
    first = asyncio.create_task(q.get())
    second = asyncio.create_task(q.get())
    await asyncio.sleep(0.01)
    q.add("a")
    first.cancel()
    results = await asyncio.gather(first, asyncio.wait_for(second, 1),
                                   return_exceptions=True)
    assert results[1] == "a" or results[0] == "a"


async def test_metrics() -> None:
    metrics = Metrics(CollectorRegistry())
    q: WorkQueue[str] = WorkQueue("things", metrics=metrics.queue("things"))
    q.add("a")
    q.add("b")
    q.add("a")

    def sample(name: str) -> float:
        value = metrics.registry.get_sample_value(name, {"name": "things"})
        assert value is not None, name
        return value

    assert sample("workqueue_depth") == 2
    assert sample("workqueue_adds_total") == 2
    item = await q.get()
    await asyncio.sleep(0.02)
    assert sample("workqueue_depth") == 1
    assert sample("workqueue_queue_duration_seconds_count") == 1
    assert sample("workqueue_unfinished_work_seconds") >= 0.02
    assert sample("workqueue_longest_running_processor_seconds") >= 0.02
    q.done(item)
    assert sample("workqueue_work_duration_seconds_count") == 1
    assert sample("workqueue_work_duration_seconds_sum") >= 0.02
    assert sample("workqueue_unfinished_work_seconds") == 0
    q.add_rate_limited("c")
    assert sample("workqueue_retries_total") == 1
