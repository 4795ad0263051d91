"""Holding a not-ready object's intermediate status for a moment, so that a burst of steps
becomes one write.

A rollout moves a status several times within a second or two: a DCD's Deployment is
created, observed, its pod scheduled and ready; a graph's DCDs report one after the other.
Writing every step costs the API server a write and every watcher an event, and an object
that is ready a moment later needs none of them. So a reconciler asks the pacer before it
writes an *intermediate* status (the object is not ready, nothing failed, no problem is
reported: the caller decides what that is) and, while the pacer holds it, writes nothing and
asks to be reconciled again when the hold ends. The status is recomputed then, from the
cluster as it is, so what is finally written is never stale; it is at most `interval` seconds
late.

The hold runs from the moment the reconciler first found an intermediate status to write
since the object's last one (or since it was first seen): an object that becomes ready
within `interval` of its start gets no intermediate status at all, and the steps that follow
one another within `interval` (a graph's DCDs reporting together) make one write. A final
status (ready), a failure or a problem is written at once; `clear` ends the hold when a
status was written or nothing is left to write.

State is per process and per controller: a new leader starts every hold afresh, which delays
an intermediate status by at most `interval`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable

#: Seconds an intermediate status is held: short against how long a user watches a rollout
#: (real pods take far longer to pull and load a model), long against the steps of one (the
#: simulated cluster's graphs are Ready within two seconds of their first reconcile, so they
#: get no intermediate status at all). Becoming Ready is never held.
INTERVAL = 2.0


class StatusPacer:
    """Since when each object has had an intermediate status waiting to be written."""

    def __init__(self, interval: float = INTERVAL,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.interval = interval
        self._clock = clock
        self._since: dict[Hashable, float] = {}

    def hold(self, key: Hashable) -> float:
        """Seconds to hold `key`'s intermediate status still; 0 means write it now (then
        `clear`). The first call since the last `clear` starts the hold."""
        now = self._clock()
        since = self._since.setdefault(key, now)
        return max(0.0, since + self.interval - now)

    def clear(self, key: Hashable) -> None:
        """Nothing of `key` waits any more: its status was written, is unchanged, or the
        object is gone. The next intermediate status starts a new hold."""
        self._since.pop(key, None)

    def __len__(self) -> int:
        return len(self._since)
