"""The work queue: dedup while waiting, one worker per key, delays, rate limits, drain.

Semantics are client-go's: an item added while it waits is coalesced; an item added while a
worker holds it is marked dirty and queued again only when that worker calls `done`, so no
key is ever processed by two workers at once. After `shutdown`, adds are ignored and `get`
still hands out what is queued, then raises `ShutDown`.

One difference: an item handed to a worker drops its pending delayed add (`add_after`, a
rate-limited retry). The reconcile that runs now sees everything the delayed one would have
seen, and asks for a later run itself if it still needs one; client-go would run it again
anyway, a reconcile with nothing to do (a held status already written, a retry of what just
succeeded).
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Hashable
from typing import Generic, TypeVar

from .metrics import QueueMetrics
from .ratelimit import RateLimiter, default_controller_rate_limiter

T = TypeVar("T", bound=Hashable)


class ShutDown(Exception):
    """The queue is shut down and empty: the worker should exit."""


class WorkQueue(Generic[T]):
    """A deduplicating, delaying, rate-limited queue of hashable keys for asyncio workers."""

    def __init__(self, name: str = "", rate_limiter: RateLimiter | None = None,
                 metrics: QueueMetrics | None = None) -> None:
        self.name = name
        self.rate_limiter: RateLimiter = rate_limiter or default_controller_rate_limiter()
        self._metrics = metrics
        self._queue: deque[T] = deque()
        self._dirty: set[T] = set()
        self._processing: dict[T, float] = {}
        self._added_at: dict[T, float] = {}
        self._waiting: dict[T, tuple[float, asyncio.TimerHandle]] = {}
        self._getters: deque[asyncio.Future[None]] = deque()
        self._shutting_down = False
        self._idle = asyncio.Event()
        self._idle.set()
        if metrics is not None:
            metrics.watch_processing(self.unfinished_work_seconds,
                                     self.longest_running_processor_seconds)

    # --- adding ----------------------------------------------------------------------------

    def add(self, item: T) -> None:
        """Queue the item unless it is already waiting; a held item is re-queued on done."""
        if self._shutting_down or item in self._dirty:
            return
        if self._metrics is not None:
            self._metrics.adds.inc()
        self._dirty.add(item)
        self._added_at.setdefault(item, time.monotonic())
        if item in self._processing:
            return
        self._push(item)

    def add_after(self, item: T, delay: float) -> None:
        """Add the item once `delay` seconds have passed; the earliest pending time wins."""
        if self._shutting_down:
            return
        if delay <= 0:
            self.add(item)
            return
        loop = asyncio.get_running_loop()
        ready_at = loop.time() + delay
        pending = self._waiting.get(item)
        if pending is not None:
            if pending[0] <= ready_at:
                return
            pending[1].cancel()
        handle = loop.call_at(ready_at, self._ready, item)
        self._waiting[item] = (ready_at, handle)

    def add_rate_limited(self, item: T) -> None:
        """Add the item after the delay its rate limiter gives (a retry)."""
        if self._shutting_down:
            return
        if self._metrics is not None:
            self._metrics.retries.inc()
        self.add_after(item, self.rate_limiter.when(item))

    def forget(self, item: T) -> None:
        """The item succeeded: clear its failure history in the rate limiter."""
        self.rate_limiter.forget(item)

    def num_requeues(self, item: T) -> int:
        return self.rate_limiter.num_requeues(item)

    # --- taking ----------------------------------------------------------------------------

    async def get(self) -> T:
        """The next item; the caller must call `done(item)` when it finished with it."""
        while not self._queue:
            if self._shutting_down:
                raise ShutDown
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._getters.append(waiter)
            try:
                await waiter
            except asyncio.CancelledError:
                # A wake-up meant for us must not be lost: pass it on.
                if waiter.done() and not waiter.cancelled() and self._queue:
                    self._wake_one()
                raise
            finally:
                if waiter in self._getters:
                    self._getters.remove(waiter)
        item = self._queue.popleft()
        pending = self._waiting.pop(item, None)
        if pending is not None:
            pending[1].cancel()
        now = time.monotonic()
        self._processing[item] = now
        self._idle.clear()
        self._dirty.discard(item)
        added = self._added_at.pop(item, now)
        if self._metrics is not None:
            self._metrics.depth.dec()
            self._metrics.latency.observe(now - added)
        return item

    def done(self, item: T) -> None:
        """The worker finished with the item; re-queue it if it was added meanwhile."""
        started = self._processing.pop(item, None)
        if started is not None and self._metrics is not None:
            self._metrics.work_duration.observe(time.monotonic() - started)
        if item in self._dirty:
            self._push(item)
        if not self._processing:
            self._idle.set()

    # --- lifecycle -------------------------------------------------------------------------

    def shutdown(self) -> None:
        """Ignore further adds, drop pending delays; `get` raises ShutDown once empty."""
        self._shutting_down = True
        for _, handle in self._waiting.values():
            handle.cancel()
        self._waiting.clear()
        while self._getters:
            waiter = self._getters.popleft()
            if not waiter.done():
                waiter.set_result(None)

    async def shutdown_with_drain(self) -> None:
        """Shut down, then wait until every item handed out has been marked done."""
        self.shutdown()
        await self._idle.wait()

    @property
    def shutting_down(self) -> bool:
        return self._shutting_down

    def __len__(self) -> int:
        return len(self._queue)

    def unfinished_work_seconds(self) -> float:
        now = time.monotonic()
        return sum(now - started for started in self._processing.values())

    def longest_running_processor_seconds(self) -> float:
        if not self._processing:
            return 0.0
        return time.monotonic() - min(self._processing.values())

    # --- internals -------------------------------------------------------------------------

    def _ready(self, item: T) -> None:
        self._waiting.pop(item, None)
        self.add(item)

    def _push(self, item: T) -> None:
        self._queue.append(item)
        if self._metrics is not None:
            self._metrics.depth.inc()
        self._wake_one()

    def _wake_one(self) -> None:
        while self._getters:
            waiter = self._getters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return
