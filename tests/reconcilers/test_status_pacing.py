"""Intermediate statuses held for a moment (machinery.status_pacer) and which statuses count
as intermediate for a graph (graph.status.is_intermediate) and a DCD (the DCD controller)."""

from __future__ import annotations

from typing import Any

from reconcilers.component.reconciler import _is_intermediate as dcd_intermediate
from reconcilers.graph.status import (
    INSUFFICIENT_CAPACITY,
    NOT_READY,
    PENDING,
    ROLLING_UPDATE,
    SUCCESSFUL,
    Verdict,
    graph_status,
    is_intermediate,
)
from reconcilers.machinery.status_pacer import StatusPacer

Json = dict[str, Any]


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_pacer_holds_each_change_from_when_it_was_first_seen() -> None:
    clock = Clock()
    pacer = StatusPacer(interval=2.0, clock=clock)
    assert pacer.hold("a") == 2.0  # the first intermediate status starts the hold
    clock.now += 0.5
    assert pacer.hold("a") == 1.5  # later steps within it ride on the same hold
    clock.now += 1.5
    assert pacer.hold("a") == 0.0
    pacer.clear("a")  # written
    clock.now += 10.0
    assert pacer.hold("a") == 2.0  # after a quiet spell, a new step is held again
    assert pacer.hold("b") == 2.0
    pacer.clear("a")
    pacer.clear("b")
    pacer.clear("c")  # unknown keys are fine
    assert len(pacer) == 0


def pending(message: str, reason: str = NOT_READY, generation: int = 1,
            previous: Json | None = None) -> Json:
    return graph_status(previous, Verdict(PENDING, reason, message), generation, None, None)


def test_graph_intermediate_is_pending_with_nothing_wrong_at_one_generation() -> None:
    first = pending("Resources not ready: a: not reported")
    assert is_intermediate({}, first)
    later = pending("Resources not ready: a: 0/1 replicas ready", previous=first)
    assert is_intermediate(first, later)
    assert is_intermediate(first, pending("rolling", ROLLING_UPDATE, previous=first))
    # A problem, a problem going away, a new generation, a restart, the end: written at once.
    stuck = pending("a: Unschedulable", INSUFFICIENT_CAPACITY, previous=first)
    assert not is_intermediate(first, stuck)
    assert not is_intermediate(stuck, pending("a: 0/1", previous=stuck))
    assert not is_intermediate(first, pending("x", generation=2, previous=first))
    assert not is_intermediate(first, {**later, "restart": {"id": "r1"}})
    done = graph_status(first, Verdict(SUCCESSFUL, "all_resources_are_ready", "ok"), 1,
                        None, None)
    assert not is_intermediate(first, done)
    assert not is_intermediate(done, pending("again", previous=done))


def dcd_status(available: str, reason: str, message: str = "m", generation: int = 1,
               valid: str = "valid") -> Json:
    return {"observedGeneration": generation, "conditions": [
        {"type": "Valid", "status": "True", "reason": "ValidationPassed", "message": valid},
        {"type": "Available", "status": available, "reason": reason, "message": message}]}


def test_dcd_intermediate_is_not_available_only_because_not_ready_yet() -> None:
    waiting = dcd_status("False", "DeploymentNotReady", "0/1 replicas available")
    assert dcd_intermediate({}, waiting)
    assert dcd_intermediate(waiting, dcd_status("False", "DeploymentNotReady", "1/2"))
    assert not dcd_intermediate(waiting, dcd_status("True", "DeploymentReady"))
    assert not dcd_intermediate(waiting, dcd_status("False", "Unschedulable"))
    assert not dcd_intermediate(dcd_status("False", "Unschedulable"), waiting)
    assert not dcd_intermediate(waiting, dcd_status("False", "ReconcileFailed"))
    assert not dcd_intermediate(waiting, dcd_status("False", "DeploymentNotReady",
                                                    generation=2))
    assert not dcd_intermediate(waiting, dcd_status("False", "DeploymentNotReady",
                                                    valid="valid; warnings: x"))
    assert not dcd_intermediate(dcd_status("True", "DeploymentReady"), waiting)
