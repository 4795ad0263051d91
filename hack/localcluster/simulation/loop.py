"""The control-loop skeleton every simulated component shares, and the context they share.

A loop maps committed changes to keys, keeps each key queued once, and reconciles keys one at
a time from the current state (level-based, like a controller-runtime reconciler). A reconcile
may ask to run again after a delay (the simulated passage of time); a lost write race requeues
the key with a short back-off.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import structlog

from ..operations import Operations
from ..storage import Change
from .addresses import PodAddresses
from .behaviors import Behaviors
from .clock import Clock
from .config import Delays, SimulationConfig
from .events import EventRecorder
from .writer import Retry, Writer

Json = dict[str, Any]
Key = tuple[str, ...]
log = structlog.get_logger("localcluster.simulation")


@dataclass
class Context:
    """What the simulated components share."""

    ops: Operations
    config: SimulationConfig
    clock: Clock = field(default_factory=Clock)
    behaviors: Behaviors = field(default_factory=Behaviors)
    addresses: PodAddresses = field(default_factory=PodAddresses)
    #: Nodes made NotReady by a test (the kubelet there has "stopped").
    nodes_down: set[str] = field(default_factory=set)
    rng: random.Random = field(default_factory=random.Random)


class ControlLoop(ABC):
    """One simulated controller: change -> keys -> reconcile(key) -> maybe again later."""

    #: The field manager and event source of this component.
    manager: ClassVar[str] = "kube-controller-manager"
    component: ClassVar[str] = ""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.writer = Writer(ctx.ops, self.manager)
        self.events = EventRecorder(self.writer, self.component or self.manager)
        self._queue: asyncio.Queue[Key] = asyncio.Queue()
        self._queued: set[Key] = set()
        self._failures: dict[Key, int] = {}
        #: One pending wake-up per key (the earliest asked for), so timers never pile up.
        self._timers: dict[Key, tuple[float, asyncio.TimerHandle]] = {}

    @property
    def delays(self) -> Delays:
        return self.ctx.config.delays

    # --- what a loop defines -------------------------------------------------------------

    @abstractmethod
    def keys_for(self, change: Change) -> Iterable[Key]:
        """The keys a committed change affects."""

    @abstractmethod
    def reconcile(self, key: Key) -> float | None:
        """Make the world match the desired state of `key`; return seconds until next look."""

    def initial_keys(self) -> Iterable[Key]:
        """Keys to reconcile at start (objects restored from disk, nodes to register)."""
        return ()

    # --- machinery -----------------------------------------------------------------------

    def on_change(self, change: Change) -> None:
        for key in self.keys_for(change):
            self.enqueue(key)

    def enqueue(self, key: Key) -> None:
        if key not in self._queued:
            self._queued.add(key)
            self._queue.put_nowait(key)

    def enqueue_after(self, delay: float, key: Key) -> None:
        clock = self.ctx.clock
        due = clock.now() + delay
        current = self._timers.get(key)
        if current is not None:
            if current[0] <= due:
                return
            clock.cancel(current[1])

        def wake() -> None:
            self._timers.pop(key, None)
            self.enqueue(key)
        self._timers[key] = (due, clock.call_later(delay, wake))

    def enqueue_all(self, keys: Iterable[Key]) -> None:
        for key in keys:
            self.enqueue(key)

    async def run(self) -> None:
        for key in self.initial_keys():
            self.enqueue(key)
        while True:
            key = await self._queue.get()
            self._queued.discard(key)
            try:
                after = self.reconcile(key)
                self._failures.pop(key, None)
                if after is not None:
                    self.enqueue_after(after, key)
            except Retry:
                n = self._failures.get(key, 0) + 1
                self._failures[key] = n
                self.enqueue_after(min(0.005 * 2 ** n, 1.0), key)
            except Exception:  # a simulation bug must not stop the cluster
                log.exception("simulated controller failed", loop=type(self).__name__,
                              key=key)
            finally:
                self._queue.task_done()
            # Let other loops and HTTP requests run between reconciles.
            await asyncio.sleep(0)

    async def settle(self) -> None:
        await self._queue.join()


class LoopRunner:
    """Owns the tasks of a set of loops: starts, settles and cancels them together."""

    def __init__(self, loops: list[ControlLoop]) -> None:
        self.loops = loops
        self._tasks: list[asyncio.Task[None]] = []

    def start(self) -> None:
        loop = asyncio.get_running_loop()
        self._tasks = [loop.create_task(lp.run(), name=f"sim-{type(lp).__name__}")
                       for lp in self.loops]

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks = []

    async def settle(self, rounds: int = 3) -> None:
        """Wait until no loop has queued work (a few rounds, since loops feed each other)."""
        for _ in range(rounds):
            for lp in self.loops:
                await lp.settle()
            await asyncio.sleep(0)

    def dispatch(self) -> Callable[[Change], None]:
        loops = self.loops

        def on_change(change: Change) -> None:
            for lp in loops:
                lp.on_change(change)
        return on_change
