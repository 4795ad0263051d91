"""The words of a DynamoGraphDeploymentRequest's status, and the step a reconcile takes.

A `Step` is the status a state handler wants and the events that go with it; the reconciler
writes the status (only when it differs) and then records the events.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from reconcilers.machinery.conditions import set_condition

Json = dict[str, Any]

# States (spec/controllers.md §8.3).
INITIAL = ""
PENDING = "Pending"
PROFILING = "Profiling"
DEPLOYING = "Deploying"
READY = "Ready"
DEPLOYMENT_DELETED = "DeploymentDeleted"
FAILED = "Failed"
TERMINAL = (DEPLOYMENT_DELETED, FAILED)

# Condition types.
VALIDATION = "Validation"
PROFILING_CONDITION = "Profiling"
SPEC_GENERATED = "SpecGenerated"
DEPLOYMENT_READY = "DeploymentReady"

#: DGD states that mean ready: `successful` is what the graph controller writes; `Ready` is
#: what the original waited for.
GRAPH_READY_STATES = ("successful", "Ready")


@dataclass
class Step:
    """The status to write and the events to record after writing it."""

    status: Json
    events: list[tuple[bool, str, str]] = field(default_factory=list)

    def warning(self, reason: str, message: str) -> Step:
        self.events.append((True, reason, message))
        return self

    def normal(self, reason: str, message: str) -> Step:
        self.events.append((False, reason, message))
        return self


def step(live: Json, state: str | None = None, **fields: Any) -> Step:
    """A step from the object's current status, with `state` and top-level fields changed."""
    status = copy.deepcopy(live.get("status") or {})
    if state is not None:
        status["state"] = state
    status.update(fields)
    return Step(status)


def condition(s: Step, live: Json, ctype: str, ok: bool, reason: str, message: str) -> Step:
    """Set a condition on the step's status, at the object's generation."""
    generation = int(live["metadata"].get("generation") or 0)
    s.status["conditions"] = set_condition(list(s.status.get("conditions") or []), ctype, ok,
                                           reason, message, observed_generation=generation)
    return s


# --- the steps to the end states, with their conditions and events -------------------------

def invalid(live: Json, message: str) -> Step:
    s = step(live, FAILED)
    condition(s, live, VALIDATION, False, "ValidationFailed", message)
    return s.warning("ValidationFailed", message)


def job_creation_failed(live: Json, s: Step, message: str) -> Step:
    s.status["state"] = FAILED
    condition(s, live, PROFILING_CONDITION, False, "JobCreationFailed", message)
    return s.warning("ProfilingJobFailed", f"Failed to create profiling job: {message}")


def profiling_failed(live: Json, message: str) -> Step:
    s = step(live, FAILED)
    condition(s, live, PROFILING_CONDITION, False, "ProfilingFailed", message)
    return s.warning("ProfilingCheckFailed", message)


def graph_deleted(live: Json, deployment: Json) -> Step:
    name = deployment.get("name")
    s = step(live, DEPLOYMENT_DELETED, deployment={**deployment, "state": "Deleted"})
    condition(s, live, DEPLOYMENT_READY, False, "DeploymentDeleted",
              "Deployment was deleted by user. Create a new DGDR to redeploy.")
    return s.warning("DeploymentDeleted", f"DGD {name} was deleted. DGDR will not recreate it. "
                     "Delete this DGDR and create a new one to redeploy.")
