"""A controller: event sources feeding one work queue, drained by N reconcile workers.

Each key is reconciled by at most one worker at a time (the queue guarantees it). A
reconcile that raises is logged, counted, and retried with the rate limiter's growing delay;
a 409 Conflict is retried the same way but is not counted as an error, since it only means
the cache was behind. A `TerminalError` is logged once without a traceback, counted, and not
retried until the object changes (or after its `retry_after`, if it gave one). A key the
`admit` filter turns away when a worker takes it is dropped without a reconcile; `resync`
puts a namespace's keys back, for when the filter's answer changes.

Every log line of a reconcile, the reconciler's and the loop's, carries controller,
namespace, name and a reconcile id: they are bound as structlog context variables around
the reconciler call. Each worker is its own task, so the binding is per worker.
"""

from __future__ import annotations

import asyncio
import time
import uuid

import structlog

from .errors import Conflict, TerminalError, is_transient
from .handlers import ALL, Mapper, Predicate, enqueue
from .informer import Informer
from .metrics import Metrics
from .ratelimit import RateLimiter
from .reconcile import Reconciler, Request, RequestFilter, Result
from .resource import Resource
from .workqueue import ShutDown, WorkQueue

log = structlog.get_logger("controller")


class CacheSyncTimeout(Exception):
    """The controller's informers did not sync in time; it refuses to reconcile blind."""


class Controller:
    """Reconciles the keys its sources produce, with bounded concurrency."""

    def __init__(self, name: str, reconciler: Reconciler, *, max_concurrent_reconciles: int = 1,
                 rate_limiter: RateLimiter | None = None, metrics: Metrics | None = None,
                 cache_sync_timeout: float = 120.0,
                 admit: RequestFilter | None = None) -> None:
        if max_concurrent_reconciles < 1:
            raise ValueError("max_concurrent_reconciles must be at least 1")
        self.name = name
        self.reconciler = reconciler
        self.max_concurrent_reconciles = max_concurrent_reconciles
        self.cache_sync_timeout = cache_sync_timeout
        self.admit = admit
        self.metrics = metrics or Metrics()
        self.queue: WorkQueue[Request] = WorkQueue(name, rate_limiter, self.metrics.queue(name))
        self._sources: list[tuple[Informer, Mapper, Predicate]] = []
        self._started = False
        self._log = log.bind(controller=name)
        m = self.metrics
        self._active = m.active_workers.labels(controller=name)
        self._time = m.reconcile_time.labels(controller=name)
        self._errors = m.reconcile_errors.labels(controller=name)
        self._terminal = m.terminal_reconcile_errors.labels(controller=name)
        self._results = {r: m.reconcile_total.labels(controller=name, result=r)
                         for r in ("success", "error", "requeue", "requeue_after")}

    def watch(self, informer: Informer, mapper: Mapper, predicate: Predicate = ALL) -> None:
        """Enqueue what `mapper` makes of each event of `informer` that `predicate` lets
        through (before `run`)."""
        if self._started:
            raise RuntimeError("add watches before the controller starts")
        self._sources.append((informer, mapper, predicate))

    @property
    def resources(self) -> list[Resource]:
        """The resources whose informers wake this controller."""
        return [informer.resource for informer, _, _ in self._sources]

    async def run(self) -> None:
        """Start the sources, wait for their caches, then reconcile until shut down."""
        self._started = True
        for informer, mapper, predicate in self._sources:
            informer.add_handler(enqueue(self.queue, mapper, predicate))
        try:
            async with asyncio.timeout(self.cache_sync_timeout):
                for informer, _, _ in self._sources:
                    await informer.wait_for_sync()
        except TimeoutError:
            raise CacheSyncTimeout(f"controller {self.name}: caches did not sync within"
                                   f" {self.cache_sync_timeout}s") from None
        self.metrics.max_concurrent_reconciles.labels(controller=self.name).set(
            self.max_concurrent_reconciles)
        self._log.info("starting workers", workers=self.max_concurrent_reconciles)
        async with asyncio.TaskGroup() as tg:
            for i in range(self.max_concurrent_reconciles):
                tg.create_task(self._worker(), name=f"{self.name} worker {i}")
        self._log.info("workers stopped")

    def resync(self, namespace: str | None = None) -> None:
        """Enqueue what every source maps its cached objects (in `namespace`) to, as a
        resync does: level-based reconciles make the extra keys harmless."""
        for informer, mapper, _ in self._sources:
            for obj in informer.store.list(namespace):
                for request in mapper(obj):
                    self.queue.add(request)

    def shutdown(self) -> None:
        """Stop taking keys: each worker finishes the reconcile it is in, then `run` returns."""
        self.queue.shutdown()

    async def _worker(self) -> None:
        while not self.queue.shutting_down:
            try:
                request = await self.queue.get()
            except ShutDown:
                return
            self._active.inc()
            try:
                if self.admit is not None and not await self.admit(request):
                    self.queue.forget(request)
                    continue
                await self._reconcile(request)
            finally:
                self._active.dec()
                self.queue.done(request)

    async def _reconcile(self, request: Request) -> None:
        with structlog.contextvars.bound_contextvars(
                controller=self.name, namespace=request.namespace, name=request.name,
                reconcile_id=uuid.uuid4().hex[:12]):
            started = time.monotonic()
            try:
                result = await self.reconciler(request)
            except Conflict as err:
                self._log.info("conflict, requeueing", message=err.message)
                self.queue.add_rate_limited(request)
                self._results["requeue"].inc()
            except TerminalError as err:
                self._on_terminal(request, err)
            except Exception as err:
                if is_transient(err):
                    self._on_transient(request, err)
                else:
                    self._on_error(request)
            else:
                self._on_result(request, result)
            finally:
                self._time.observe(time.monotonic() - started)

    def _on_error(self, request: Request) -> None:
        """A failure nobody foresaw: a bug, so the traceback is worth its lines."""
        self._log.exception("reconcile failed", retries=self.queue.num_requeues(request))
        self.queue.add_rate_limited(request)
        self._errors.inc()
        self._results["error"].inc()

    def _on_transient(self, request: Request, err: BaseException) -> None:
        """The API server or the network is briefly unavailable: retried with backoff, told
        once per object at warning level, without a traceback."""
        retries = self.queue.num_requeues(request)
        log = self._log.warning if retries == 0 else self._log.debug
        log("transient error, retrying", error=str(err) or type(err).__name__, retries=retries)
        self.queue.add_rate_limited(request)
        self._errors.inc()
        self._results["error"].inc()

    def _on_terminal(self, request: Request, err: TerminalError) -> None:
        if err.retry_after is None:
            self._log.warning("reconcile failed, not retrying until the object changes",
                              message=err.message, reason=err.reason)
        else:
            # What only a change elsewhere can fix (a name taken by someone else's object):
            # one more look after a while, besides any change of the object.
            self._log.warning("reconcile failed, retrying once after a delay or when the "
                              "object changes", message=err.message, reason=err.reason,
                              retry_after=err.retry_after)
        # A terminal error is not a step in a backoff: the next change starts afresh.
        self.queue.forget(request)
        self._errors.inc()
        self._terminal.inc()
        self._results["error"].inc()
        if err.retry_after is not None:
            self.queue.add_after(request, err.retry_after)

    def _on_result(self, request: Request, result: Result | None) -> None:
        if result is not None and result.requeue_after > 0:
            self.queue.forget(request)
            self.queue.add_after(request, result.requeue_after)
            self._results["requeue_after"].inc()
        elif result is not None and result.requeue:
            self.queue.add_rate_limited(request)
            self._results["requeue"].inc()
        else:
            self.queue.forget(request)
            self._results["success"].inc()
