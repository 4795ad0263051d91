"""Who decides a scaled service's replica count: the pure decision of the adapter controller.

The scaling adapter owns the replicas of its service. Its `status.replicas` records the last
value it applied to (or adopted from) the graph, which is how it tells the two writers apart
without any memory of its own:

* graph value == last applied, adapter asks for something else -> an autoscaler (or
  `kubectl scale`) moved the adapter: write the adapter's value into the graph (`SCALE`);
* graph value != last applied -> someone edited the graph directly: the adapter takes the
  graph's value over once (`ADOPT`) instead of writing its own back, so the two never fight;
* anything else -> only the adapter's status may need a refresh (`RECORD`).

The status lags behind the graph when its write lost a race (a second scale request changed
the adapter meanwhile) or the process stopped in between. So before anything is adopted, the
graph's managedFields are asked who set its value (`written_by_us`): the adapter controller
patches the graph under a field manager of its own, and a value it wrote itself is never an
edit to adopt, whatever the status says.

A graph value that already equals what the adapter wants is never an edit to adopt: it is our
own write whose status update did not land yet, or a hand edit that agrees with us.

Multinode services cannot run zero replicas (Grove rejects an empty scaling group), so a
request for zero keeps one replica and says so in the adapter's Ready condition.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

#: Replicas a service runs when its spec leaves them out.
DEFAULT_REPLICAS = 1
#: The fewest replicas a multinode service can run.
MULTINODE_MINIMUM = 1

# Reasons of the adapter's Ready condition.
SYNCED = "Synced"
DGD_NOT_FOUND = "DGDNotFound"
SERVICE_NOT_FOUND = "ServiceNotFound"
SCALE_TO_ZERO_UNSUPPORTED = "ScaleToZeroUnsupported"
INVALID_SPEC = "InvalidSpec"


class Action(Enum):
    """What the adapter controller does to the graph or to itself."""

    RECORD = "record"  # nothing to write but the adapter's status
    SCALE = "scale"  # write the adapter's replicas into the graph's service
    ADOPT = "adopt"  # copy the graph's replicas into the adapter's spec


@dataclass(frozen=True)
class Plan:
    """The decision for one adapter, and the condition it leaves on the adapter."""

    action: Action
    #: The graph service's replicas now.
    current: int
    #: The replicas the service runs after the plan: the adapter's wish (within the
    #: workload's limits) or, for ADOPT, the graph's value.
    target: int
    ready: bool
    reason: str
    message: str


def plan(*, desired: int, applied: int | None, current: int, service: str,
         multinode: bool, written_by_us: bool = False) -> Plan:
    """Decide from the adapter's spec (`desired`) and status (`applied`, None before its first
    reconcile) and the graph's value (`current`; `written_by_us` when the adapter controller
    set it, as the graph's managedFields say)."""
    target, ready, reason, message = desired, True, SYNCED, _synced(service, desired)
    if desired == 0 and multinode:
        target, ready, reason = MULTINODE_MINIMUM, False, SCALE_TO_ZERO_UNSUPPORTED
        message = (f"service {service} is multinode and cannot scale to zero; it keeps "
                   f"{MULTINODE_MINIMUM} replica")
    # Before its first reconcile the adapter has applied nothing: its spec (seeded from the
    # graph, or set by an autoscaler since) is the truth, not an edit to adopt.
    edited = (applied is not None and current != applied and current != target
              and not written_by_us)
    if edited:
        # The message is the one the next (quiet) reconcile computes, so that reconcile has
        # nothing left to write.
        return Plan(Action.ADOPT, current, current, True, SYNCED, _synced(service, current))
    if current != target:
        return Plan(Action.SCALE, current, target, ready, reason, message)
    return Plan(Action.RECORD, current, target, ready, reason, message)


def _synced(service: str, replicas: int) -> str:
    return f"replicas of service {service} set to {replicas}, as the adapter asks"
