"""The manager: owns the client, the cache, the controllers, leader election and the status
server, and starts and stops them in order.

Start: status server, informers, then (once leader, if electing) controllers; /readyz turns
ready when the caches have synced, leader or not. A clean stop (`stop()`, e.g. on SIGTERM)
runs backwards: controllers finish their current reconciles (bounded by the graceful
shutdown timeout), the lease is released, informers stop, the server and the client close.
Cancelling `run()` instead is an abrupt death: nothing more is sent, the lease is left to
expire, as when the process is killed. Stop hooks run after the controllers and before the
client closes, told whether the stop was clean.

Request filters (`add_request_filter`) apply to every controller: a key any filter turns
away is dropped when a worker takes it; `resync(namespace)` enqueues a namespace again once
a filter would admit it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import structlog

from .cache import Cache
from .client import ClientConfig, KubeClient
from .controller import Controller
from .handlers import ALL, Mapper, Predicate, requests_for_object, requests_for_owner
from .informer import Transform, WatchSettings, compact_object
from .leader_election import LeaderElectionConfig, LeaderElector
from .metrics import Metrics
from .metrics_auth import DelegatedAuth, metrics_tls
from .ratelimit import RateLimiter
from .reconcile import Reconciler, Request, RequestFilter
from .resource import Resource
from .status_server import METRICS_PATHS, PROBE_PATHS, StatusServer
from .webhook import TLSConfig

log = structlog.get_logger("controller.manager")

#: Awaited as the manager stops; the argument says whether the stop was clean (False after a
#: lost lease or a cancellation: then nothing more should be sent).
StopHook = Callable[[bool], Awaitable[None]]


class LeadershipLost(Exception):
    """The lease could not be renewed; the controllers were stopped at once."""


@dataclass
class ManagerConfig:
    """Everything a manager needs; defaults are controller-runtime's where it has one."""

    kubeconfig: Path | None = None
    context: str | None = None
    client: ClientConfig = field(default_factory=ClientConfig)
    watch: WatchSettings = field(default_factory=WatchSettings)
    #: Restrict every informer to one namespace (None: all namespaces).
    namespace: str | None = None
    #: What every cached object goes through, unless `by_object` names its resource.
    transform: Transform | None = compact_object
    #: A resource's own transform, replacing `transform` (controller-runtime's ByObject).
    by_object: dict[Resource, Transform] = field(default_factory=dict)
    #: A resource cached only where its objects match a label selector (ByObject's Label).
    label_selectors: dict[Resource, str] = field(default_factory=dict)
    status_host: str = "0.0.0.0"
    status_port: int = 8081
    #: A separate /metrics listener (controller-runtime's `--metrics-bind-address`); None
    #: serves /metrics on the status port. The status server then serves only the probes.
    metrics_host: str = "0.0.0.0"
    metrics_port: int | None = None
    #: False: no /metrics at all (controller-runtime's `--metrics-bind-address=0`).
    metrics_enabled: bool = True
    #: /metrics over HTTPS for callers the API server authorises (`metrics_auth`); needs the
    #: separate listener (`metrics_port`), since the kubelet probes without a token.
    metrics_secure: bool = False
    #: tls.crt and tls.key of the secure /metrics (None or absent files: self-signed).
    metrics_cert_dir: Path | None = None
    leader_election: LeaderElectionConfig | None = None
    graceful_shutdown_timeout: float = 30.0
    cache_sync_timeout: float = 120.0


class Manager:
    """Runs a set of controllers over shared informers against one API server."""

    def __init__(self, client: KubeClient, config: ManagerConfig, metrics: Metrics) -> None:
        self.client = client
        self.config = config
        self.metrics = metrics
        self.cache = Cache(client, namespace=config.namespace, settings=config.watch,
                           transform=config.transform, by_object=config.by_object,
                           label_selectors=config.label_selectors)
        self.controllers: list[Controller] = []
        self.elector: LeaderElector | None = None
        self._filters: list[RequestFilter] = []
        self._stop_hooks: list[StopHook] = []
        self._runnables: list[tuple[str, Callable[[], Awaitable[None]]]] = []
        self._readiness: list[Callable[[], bool]] = []
        self.metrics_server: StatusServer | None = None
        self._metrics_tls: TLSConfig | None = None
        if not config.metrics_enabled:
            self.status = StatusServer(metrics.registry, self._ready, config.status_host,
                                       config.status_port, paths=PROBE_PATHS)
        elif config.metrics_port is None:
            self.status = StatusServer(metrics.registry, self._ready, config.status_host,
                                       config.status_port)
        else:
            self.status = StatusServer(metrics.registry, self._ready, config.status_host,
                                       config.status_port, paths=PROBE_PATHS)
            self.metrics_server = StatusServer(metrics.registry, self._ready,
                                               config.metrics_host, config.metrics_port,
                                               paths=METRICS_PATHS)
        if config.metrics_secure:
            if self.metrics_server is None:
                raise ValueError("secure metrics need their own listener (metrics_port)")
            self._metrics_tls = metrics_tls(config.metrics_cert_dir)
            self.metrics_server.ssl_context = self._metrics_tls.server_context()
            self.metrics_server.guard = DelegatedAuth(client).refusal
        self._stop = asyncio.Event()
        self._log = log.bind(identity=config.leader_election.identity
                             if config.leader_election else "")

    @classmethod
    async def create(cls, config: ManagerConfig | None = None) -> Manager:
        """A manager with its own metrics registry and API client."""
        config = config or ManagerConfig()
        metrics = Metrics()
        client = await KubeClient.connect(config.kubeconfig, config.client, metrics,
                                          config.context)
        return cls(client, config, metrics)

    def add_controller(self, name: str, reconciler: Reconciler, *, for_: Resource,
                       owns: Iterable[Resource] = (),
                       watches: Iterable[tuple[Resource, Mapper]] = (),
                       max_concurrent_reconciles: int = 1,
                       rate_limiter: RateLimiter | None = None,
                       for_predicate: Predicate = ALL,
                       owns_predicate: Predicate = ALL) -> Controller:
        """A controller of `for_` objects, woken by them (the events `for_predicate` lets
        through), by children it controls (`owns`, through `owns_predicate`), and by other
        objects through a mapping function (`watches`)."""
        if any(c.name == name for c in self.controllers):
            raise ValueError(f"a controller named {name!r} already exists")
        controller = Controller(name, reconciler,
                                max_concurrent_reconciles=max_concurrent_reconciles,
                                rate_limiter=rate_limiter, metrics=self.metrics,
                                cache_sync_timeout=self.config.cache_sync_timeout,
                                admit=self._admit)
        controller.watch(self.cache.informer(for_), requests_for_object, for_predicate)
        for child in owns:
            controller.watch(self.cache.informer(child), requests_for_owner(for_),
                             owns_predicate)
        for resource, mapper in watches:
            controller.watch(self.cache.informer(resource), mapper)
        self.controllers.append(controller)
        return controller

    def add_request_filter(self, admit: RequestFilter) -> None:
        """Reconcile, in every controller, only the keys `admit` accepts (before `run`)."""
        self._filters.append(admit)

    def add_runnable(self, name: str, run: Callable[[], Awaitable[None]]) -> None:
        """Run `run()` on every replica, leader or not, beside the informers (before `run`).
        It should only end when cancelled; if it ends otherwise, the manager stops."""
        self._runnables.append((name, run))

    def add_readiness_check(self, check: Callable[[], bool]) -> None:
        """/readyz is ready only while `check()` is true too."""
        self._readiness.append(check)

    def add_stop_hook(self, hook: StopHook) -> None:
        """Await `hook` as `run` ends, after the controllers, before the client closes."""
        self._stop_hooks.append(hook)

    def resync(self, namespace: str | None = None) -> None:
        """Enqueue every cached object (of one namespace) in every controller again."""
        for controller in self.controllers:
            controller.resync(namespace)

    async def _admit(self, request: Request) -> bool:
        for admit in self._filters:
            if not await admit(request):
                return False
        return True

    def stop(self) -> None:
        """Ask `run` to stop cleanly (safe to call from a signal handler)."""
        self._stop.set()

    @property
    def status_port(self) -> int:
        return self.status.port

    @property
    def metrics_port(self) -> int:
        """The port /metrics is served on (the status port unless separate)."""
        return (self.metrics_server or self.status).port

    def _servers(self) -> list[StatusServer]:
        return [s for s in (self.status, self.metrics_server) if s is not None]

    async def start_servers(self) -> None:
        """Serve /healthz, /readyz and /metrics now, before `run` (which keeps them): a
        process still starting is alive and not ready. `stop_servers` undoes it when `run`
        is never called."""
        for server in self._servers():
            await server.start()

    async def stop_servers(self) -> None:
        for server in self._servers():
            await server.stop()
        if self._metrics_tls is not None:
            self._metrics_tls.close()

    def _ready(self) -> bool:
        return self.cache.has_synced and all(check() for check in self._readiness)

    # --- running ---------------------------------------------------------------------------

    async def run(self) -> None:
        """Run until `stop()`; raises LeadershipLost if the lease was lost."""
        self._log.info("starting manager")
        clean = False
        try:
            await self.start_servers()
            informers = asyncio.create_task(self.cache.run(), name="cache")
            # The cache only ends by cancellation; if it dies anyway, stop everything.
            informers.add_done_callback(self._on_cache_exit)
            runnables: list[asyncio.Future[None]] = [
                asyncio.ensure_future(run()) for _, run in self._runnables]
            for task in runnables:
                task.add_done_callback(self._on_cache_exit)
            try:
                await self._run_elected()
            finally:
                for task in (informers, *runnables):
                    task.cancel()
                (outcome, *ends) = await asyncio.gather(informers, *runnables,
                                                        return_exceptions=True)
            for end in (outcome, *ends):
                if isinstance(end, Exception):
                    raise end
            clean = True
            self._log.info("manager stopped")
        finally:
            for hook in self._stop_hooks:
                await self._run_hook(hook, clean)
            await self.stop_servers()
            await self.client.close()

    async def _run_hook(self, hook: StopHook, clean: bool) -> None:
        try:
            await hook(clean)
        except Exception:  # one failing hook must not keep the others or the close from running
            self._log.exception("stop hook failed")

    def _on_cache_exit(self, task: asyncio.Future[None]) -> None:
        if not task.cancelled():
            self.stop()

    async def _run_elected(self) -> None:
        election = self.config.leader_election
        if election is None:
            await self._run_controllers(None)
            return
        self.elector = elector = LeaderElector(self.client, election, self.metrics)
        if not await self._unless_stopped(elector.acquire()):
            return
        lost = asyncio.Event()

        async def keep_lease() -> None:
            await elector.hold()
            lost.set()

        holder = asyncio.create_task(keep_lease(), name="lease renewal")
        try:
            await self._run_controllers(lost)
        finally:
            holder.cancel()
            await asyncio.gather(holder, return_exceptions=True)
        if lost.is_set():
            raise LeadershipLost(f"lost lease {election.namespace}/{election.name}")
        await elector.release()

    async def _run_controllers(self, lost: asyncio.Event | None) -> None:
        """Run every controller until stop (graceful) or loss of the lease (immediate)."""
        tasks = [asyncio.create_task(c.run(), name=f"controller {c.name}")
                 for c in self.controllers]
        waiters = [asyncio.create_task(self._stop.wait())]
        if lost is not None:
            waiters.append(asyncio.create_task(lost.wait()))
        try:
            await asyncio.wait([*tasks, *waiters], return_when=asyncio.FIRST_COMPLETED)
            if lost is not None and lost.is_set():
                self._log.warning("leadership lost, stopping controllers now")
            elif tasks:
                for controller in self.controllers:
                    controller.shutdown()
                await asyncio.wait(tasks, timeout=self.config.graceful_shutdown_timeout)
        finally:
            for task in [*tasks, *waiters]:
                task.cancel()
            results = await asyncio.gather(*tasks, *waiters, return_exceptions=True)
        errors = [r for r in results if isinstance(r, Exception)]
        if errors:
            raise errors[0]

    async def _unless_stopped(self, work: Awaitable[None]) -> bool:
        """Await `work` unless stop comes first; True if it finished."""
        task = asyncio.ensure_future(work)
        stop = asyncio.create_task(self._stop.wait())
        try:
            await asyncio.wait([task, stop], return_when=asyncio.FIRST_COMPLETED)
        finally:
            for t in (task, stop):
                t.cancel()
            await asyncio.gather(task, stop, return_exceptions=True)
        if task.cancelled():
            return False
        error = task.exception()
        if error is not None:
            raise error
        return True
