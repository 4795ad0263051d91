"""The simulation's clock: the time tests can read and the timers the simulation owns.

Every simulated delay goes through `Clock.call_later`, so stopping the simulation cancels all
pending steps at once, and tests can read `Clock.now()` (seconds since the simulation started)
to check how long a step took.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from datetime import UTC, datetime


def rfc3339(at: datetime | None = None) -> str:
    """A Kubernetes timestamp (metav1.Time): UTC, second precision."""
    return (at or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")


def rfc3339_micro(at: datetime | None = None) -> str:
    """A metav1.MicroTime, as leases and events.k8s.io use."""
    return (at or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_rfc3339(value: object) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


class Clock:
    """Monotonic seconds since start, wall timestamps, and owned timers."""

    def __init__(self) -> None:
        self._origin = time.monotonic()
        self._timers: set[asyncio.TimerHandle] = set()

    def now(self) -> float:
        """Seconds since the simulation's clock was created."""
        return time.monotonic() - self._origin

    def wall(self) -> str:
        return rfc3339()

    def call_later(self, delay: float, callback: Callable[[], None]) -> asyncio.TimerHandle:
        """Run `callback` after `delay` seconds unless cancelled or the clock stops first."""
        loop = asyncio.get_running_loop()
        handle: asyncio.TimerHandle | None = None

        def fire() -> None:
            assert handle is not None
            self._timers.discard(handle)
            callback()

        handle = loop.call_later(max(0.0, delay), fire)
        self._timers.add(handle)
        return handle

    def cancel(self, handle: asyncio.TimerHandle) -> None:
        handle.cancel()
        self._timers.discard(handle)

    def stop(self) -> None:
        """Cancel every pending timer."""
        for handle in self._timers:
            handle.cancel()
        self._timers.clear()

    @property
    def pending(self) -> int:
        return len(self._timers)
