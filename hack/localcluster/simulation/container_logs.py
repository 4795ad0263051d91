"""What simulated containers print: each container run's lines, kept as the kubelet keeps logs.

The kubelet writes a line when a container starts, crashes, finishes or is stopped, and a
simulated Dynamo worker writes the lines its engine would (`workers`). Each run of a container
(its restart count) has its own `ContainerLog`; the current run and the one before it are
kept (what `kubectl logs` and `kubectl logs --previous` read), both bounded to `MAX_LINES`
lines of at most `MAX_LINE_BYTES` each, and all of a pod's logs go when the pod does.
A follower (`kubectl logs -f`) reads on as lines come, until the run ends.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime

#: Lines kept per container run (older lines are dropped, as log rotation would).
MAX_LINES = 2000
#: Longer lines are cut (the runtime splits them; one piece is enough here).
MAX_LINE_BYTES = 16 * 1024

Key = tuple[str, ...]


@dataclass(frozen=True)
class LogLine:
    """One line a container printed, and when."""

    at: datetime
    text: str

    def timestamp(self) -> str:
        """RFC 3339 with nanoseconds, as `kubectl logs --timestamps` prints it."""
        return self.at.strftime("%Y-%m-%dT%H:%M:%S.%f") + "000Z"


class ContainerLog:
    """The output of one container run: bounded lines, and readers waiting for more."""

    def __init__(self, restarts: int) -> None:
        self.restarts = restarts
        self.lines: deque[LogLine] = deque(maxlen=MAX_LINES)
        #: Sequence number of `lines[0]` (lines dropped from the front still count).
        self.first = 0
        self.ended = False
        self._waiters: list[asyncio.Future[None]] = []

    def write(self, text: str) -> None:
        if self.ended:
            return
        for part in text.splitlines() or [""]:
            if len(self.lines) == self.lines.maxlen:
                self.first += 1
            self.lines.append(LogLine(datetime.now(UTC), part[:MAX_LINE_BYTES]))
        self._wake()

    def end(self) -> None:
        """The run is over: followers finish once they have read everything."""
        self.ended = True
        self._wake()

    def _wake(self) -> None:
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    def snapshot(self) -> list[LogLine]:
        return list(self.lines)

    async def follow(self, skip: int) -> AsyncIterator[LogLine]:
        """Lines from sequence number `skip` on, then new ones as written, until the end."""
        seq = skip
        while True:
            seq = max(seq, self.first)
            while seq < self.first + len(self.lines):
                yield self.lines[seq - self.first]
                seq += 1
            if self.ended:
                return
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            await waiter


@dataclass
class _PodContainer:
    uid: str
    current: ContainerLog
    previous: ContainerLog | None = None


@dataclass
class ContainerLogs:
    """Every simulated container's logs on this cluster's kubelets, by pod and container."""

    _logs: dict[tuple[str, str, str], _PodContainer] = field(default_factory=dict)

    def start(self, key: Key, uid: str, container: str, restarts: int) -> ContainerLog:
        """A new run of `container` begins: the last run becomes the previous one."""
        namespace, name = key
        slot = self._logs.get((namespace, name, container))
        log = ContainerLog(restarts)
        if slot is None or slot.uid != uid:
            self._logs[(namespace, name, container)] = _PodContainer(uid, log)
        elif slot.current.restarts != restarts:
            slot.current.end()
            slot.previous, slot.current = slot.current, log
        else:
            return slot.current
        return log

    def write(self, key: Key, container: str, text: str) -> None:
        """A line of the container's current run (nothing when it never ran)."""
        log = self.current(key, container)
        if log is not None:
            log.write(text)

    def end(self, key: Key, container: str) -> None:
        log = self.current(key, container)
        if log is not None:
            log.end()

    def current(self, key: Key, container: str) -> ContainerLog | None:
        slot = self._logs.get((key[0], key[1], container))
        return slot.current if slot is not None else None

    def previous(self, key: Key, container: str) -> ContainerLog | None:
        slot = self._logs.get((key[0], key[1], container))
        return slot.previous if slot is not None else None

    def forget(self, key: Key) -> None:
        """The pod is gone, and its logs with it."""
        for k in [k for k in self._logs if k[:2] == key[:2]]:
            self._logs.pop(k).current.end()
