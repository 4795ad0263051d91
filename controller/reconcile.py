"""What a reconciler is given and what it answers: Request in, Result (or None) out."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class Request:
    """The object to reconcile, by name only: the reconciler reads its state from the cache."""

    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name


@dataclass(frozen=True)
class Result:
    """Done (the default), requeue with backoff, or requeue after a fixed delay."""

    requeue: bool = False
    requeue_after: float = 0.0


DONE = Result()

#: A reconciler returns None for done, or a Result; it raises `TerminalError` for what
#: retrying cannot fix. A plain function or an object's bound method (`obj.reconcile`).
Reconciler = Callable[[Request], Awaitable[Result | None]]

#: Whether a key may be reconciled now (False: dropped, with its backoff, until enqueued again).
RequestFilter = Callable[[Request], Awaitable[bool]]
