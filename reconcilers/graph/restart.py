"""Graph restarts (`spec.restart`): which services restart now and what `status.restart` says.

Pure functions. Everything they decide comes from what the cluster holds: the previous
`status.restart` (status survives a `kubectl replace`), the restart token each service's child
carries (`nvidia.com/restartAt` on a DCD's spec.annotations or a Grove clique) and whether that
child has rolled out. Nothing is remembered between reconciles.

A service counts as restarted only when its child carries the requested token *and* reports
ready at its current generation; a stale cache still showing the child before our write
therefore never advances a restart.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from api.v1beta1 import Restart

Json = dict[str, Any]

PENDING, RESTARTING, COMPLETED, FAILED = "Pending", "Restarting", "Completed", "Failed"
SEQUENTIAL, PARALLEL = "Sequential", "Parallel"
_FINISHED = (COMPLETED, FAILED)


@dataclass(frozen=True)
class RestartPlan:
    """The new `status.restart` (None: absent) and the token each service's child must carry
    (None: no token)."""

    status: Json | None
    tokens: dict[str, str | None]

    def starts_new_request(self, previous: Json | None) -> bool:
        """Whether this plan records a restart id that `previous` did not: the status must be
        saved before any child gets the new token, so a lost write can never make a restart in
        progress look like a fresh graph."""
        new_id = (self.status or {}).get("observedID")
        return bool(new_id) and new_id != (previous or {}).get("observedID")


def plan_restart(
    restart: Restart | None,
    previous: Json | None,
    services: Sequence[str],
    current: Mapping[str, str | None],
    ready: Collection[str],
) -> RestartPlan:
    """The restart plan of a graph.

    `current` maps each service whose child exists to the token it carries (None when it carries
    none); `ready` holds the services whose child is rolled out and ready.
    """
    status = restart_status(restart, previous, services, current, ready)
    return RestartPlan(status, _tokens(restart, status, services, current))


def restart_status(
    restart: Restart | None,
    previous: Json | None,
    services: Sequence[str],
    current: Mapping[str, str | None],
    ready: Collection[str],
) -> Json | None:
    """The `status.restart` the graph should report now."""
    wanted = restart.id if restart is not None else ""
    if not wanted:
        # No request: a finished one stays on record, an unfinished one is dropped.
        return previous if previous and previous.get("phase") in _FINISHED else None
    if previous and previous.get("observedID") == wanted and previous.get("phase") in _FINISHED:
        return previous
    new_request = not previous or previous.get("observedID") != wanted
    if new_request and previous is None and all(v == wanted for v in current.values()):
        # A graph created with a restart id (or whose children already carry it): its pods are
        # fresh, restarting them would only interrupt model loading.
        return _completed(wanted)

    def done(service: str) -> bool:
        return current.get(service) == wanted and service in ready

    if _strategy(restart) == PARALLEL:
        if new_request:
            return _restarting(wanted, sorted(services)) if services else _completed(wanted)
        candidates = list((previous or {}).get("inProgress") or sorted(services))
        remaining = [s for s in candidates if s in services and not done(s)]
        return _restarting(wanted, remaining) if remaining else _completed(wanted)

    order = _order(restart, services)
    if not order:
        return _completed(wanted)
    if new_request:
        return _restarting(wanted, [order[0]])
    in_progress = list((previous or {}).get("inProgress") or [])
    if not in_progress:
        return _restarting(wanted, [order[0]])
    now = in_progress[0]
    if now not in order:
        # The service being restarted left the graph: go on with the first one not done.
        left = [s for s in order if not done(s)]
        return _restarting(wanted, [left[0]]) if left else _completed(wanted)
    if not done(now):
        return _restarting(wanted, [now])
    position = order.index(now)
    if position + 1 < len(order):
        return _restarting(wanted, [order[position + 1]])
    return _completed(wanted)


def _tokens(
    restart: Restart | None,
    status: Json | None,
    services: Sequence[str],
    current: Mapping[str, str | None],
) -> dict[str, str | None]:
    """Services selected by the status carry its id; every other one keeps what it has."""
    tokens = {s: current.get(s) for s in services}
    if status is None:
        return tokens
    observed = str(status.get("observedID") or "")
    wanted = restart.id if restart is not None else ""
    if not observed:
        return tokens
    if not wanted or (observed == wanted and status.get("phase") in _FINISHED):
        # Finished, or the request was removed: everyone keeps the last id (no new restart).
        return dict.fromkeys(services, observed)
    if _strategy(restart) == PARALLEL:
        return dict.fromkeys(services, observed)
    order = _order(restart, services)
    in_progress = [s for s in status.get("inProgress") or [] if s in order]
    last = max((order.index(s) for s in in_progress), default=0)
    for service in order[: last + 1]:
        tokens[service] = observed
    return tokens


def _strategy(restart: Restart | None) -> str:
    strategy = restart.strategy if restart is not None else None
    return (strategy.type if strategy is not None else None) or SEQUENTIAL


def _order(restart: Restart | None, services: Sequence[str]) -> list[str]:
    strategy = restart.strategy if restart is not None else None
    order = list(strategy.order or []) if strategy is not None else []
    # Validation makes order list every service; keep only those that exist, just in case.
    return [s for s in order if s in services] if order else sorted(services)


def _restarting(restart_id: str, services: list[str]) -> Json:
    return {"observedID": restart_id, "phase": RESTARTING, "inProgress": services}


def _completed(restart_id: str) -> Json:
    return {"observedID": restart_id, "phase": COMPLETED}
