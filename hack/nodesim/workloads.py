"""The LeaderWorkerSet and Grove controllers as clients of any API server.

The in-process simulation's own controllers (`hack.localcluster.simulation.leaderworkersets`,
`grove`, `grove_podclique`) run unchanged: their `Writer` is given `RemoteOperations` (reads
of a `Mirror` of the kinds they use, writes over HTTP) in place of the local cluster's
storage. They reconcile in plain functions that write synchronously, so they run in a thread
with its own event loop (the mirror's watches included); nothing blocks the caller's loop.
A kind whose CRD is not installed is simply not served, as in the local cluster, and its
controller waits for it.

    async with WorkloadSim(kubeconfig) as workloads:
        ...   # LeaderWorkerSets get their leader and worker pods, PodCliqueSets their cliques
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from types import TracebackType
from typing import cast

import structlog

from controller.client import ClientConfig, KubeClient
from hack.localcluster.operations import Operations
from hack.localcluster.simulation import SimulationConfig
from hack.localcluster.simulation.grove import (
    PodCliqueScalingGroupController,
    PodCliqueSetController,
)
from hack.localcluster.simulation.grove_podclique import PodCliqueController
from hack.localcluster.simulation.leaderworkersets import LeaderWorkerSetController
from hack.localcluster.simulation.loop import Context, ControlLoop, LoopRunner
from hack.localcluster.storage import Change

from .kube_http import KubeHttp
from .mirror import Mirror, resource_key
from .remote_operations import KINDS, WRITE_ONLY, RemoteOperations

log = structlog.get_logger("nodesim.workloads")

USER_AGENT = "nodesim-workloads"
LWS, GROVE = "leaderworkersets", "grove"
#: How long `start` waits for the thread to list what is served.
START_TIMEOUT = 30.0


def _loops(ctx: Context, kinds: tuple[str, ...]) -> list[ControlLoop]:
    loops: list[ControlLoop] = []
    if LWS in kinds:
        loops.append(LeaderWorkerSetController(ctx))
    if GROVE in kinds:
        loops += [PodCliqueSetController(ctx), PodCliqueScalingGroupController(ctx),
                  PodCliqueController(ctx)]
    return loops


class WorkloadSim:
    """LeaderWorkerSet and/or Grove controllers against the API server of `kubeconfig`."""

    def __init__(self, kubeconfig: Path, kinds: tuple[str, ...] = (LWS, GROVE)) -> None:
        self.kubeconfig = kubeconfig
        self.kinds = kinds
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None

    async def start(self) -> WorkloadSim:
        self._thread = threading.Thread(target=self._main, name="nodesim-workloads",
                                        daemon=True)
        self._thread.start()
        ready = await asyncio.to_thread(self._ready.wait, START_TIMEOUT)
        if self._error is not None:
            raise self._error
        if not ready:
            await self.stop()
            raise TimeoutError("the workload controllers did not start")
        log.info("nodesim workload controllers started", kinds=list(self.kinds))
        return self

    async def stop(self) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        if self._thread is not None:
            await asyncio.to_thread(self._thread.join, 30)
            self._thread = None

    def _main(self) -> None:
        try:
            asyncio.run(self._run())
        except BaseException as error:  # reported to `start`, or logged once running
            if not self._ready.is_set():
                self._error = error
                self._ready.set()
            else:
                log.exception("nodesim workload controllers failed")

    async def _run(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        client = await KubeClient.connect(self.kubeconfig, ClientConfig(
            qps=None, user_agent=USER_AGENT, field_manager=USER_AGENT))
        http = KubeHttp(self.kubeconfig, USER_AGENT)
        loops: list[ControlLoop] = []

        def dispatch(change: Change) -> None:
            for lp in loops:
                lp.on_change(change)

        mirror = Mirror(client, [r for r in KINDS if resource_key(r) not in WRITE_ONLY],
                        dispatch)
        # The simulation's Writer needs only the parts RemoteOperations has.
        ctx = Context(ops=cast(Operations, RemoteOperations(http, mirror)),
                      config=SimulationConfig())
        loops += _loops(ctx, self.kinds)
        runner = LoopRunner(loops)
        mirror.start()
        try:
            # Pods and Services are always served: their first lists are the mirror's sync.
            await mirror.listed[("", "pods")].wait()
            await mirror.listed[("", "services")].wait()
            runner.start()
            self._ready.set()
            await self._stop.wait()
        finally:
            await runner.stop()
            await mirror.stop()
            http.close()
            await client.close()

    async def __aenter__(self) -> WorkloadSim:
        return await self.start()

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None,
                        trace: TracebackType | None) -> None:
        await self.stop()
