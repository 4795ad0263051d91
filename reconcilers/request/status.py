"""The words of a DynamoGraphDeploymentRequest's v1beta1 status, and the step a reconcile takes.

A `Step` is the status a phase handler wants and the events that go with it; the reconciler
writes the status (only when it differs, in one write: the status subresource of the v1beta1
object) and then records the events. Every step sets the aggregate `Succeeded` condition from
its phase, as the original does. v1alpha1 readers see the status the conversion maps
(`api.conversion.request`: Deployed reads as Ready with a created deployment).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from reconcilers.machinery.conditions import set_condition

Json = dict[str, Any]

# Phases (the reference's lifecycle).
INITIAL = ""
PENDING = "Pending"
PROFILING = "Profiling"
READY = "Ready"
DEPLOYING = "Deploying"
DEPLOYED = "Deployed"
FAILED = "Failed"
#: Phases in which the spec may no longer change.
FROZEN = (PROFILING, DEPLOYING, READY, DEPLOYED)
#: The profiler's first sub-phase; cleared when profiling ends.
PROFILING_INITIALIZING = "Initializing"

# Condition types.
SUCCEEDED = "Succeeded"
VALIDATION = "Validation"
PROFILING_CONDITION = "Profiling"
SPEC_GENERATED = "SpecGenerated"
DEPLOYMENT_READY = "DeploymentReady"

#: DGD states that mean ready: `successful` is what the graph controller writes; `Ready` is
#: what older originals waited for.
GRAPH_READY_STATES = ("successful", "Ready")

#: Succeeded by phase: (status, reason, message).
_SUCCEEDED = {
    INITIAL: (False, "Pending", "DGDR is pending"),
    PENDING: (False, "Pending", "DGDR is pending"),
    PROFILING: (False, "Profiling", "Profiling is in progress"),
    READY: (True, "SpecGenerated", "Profiling complete, spec available"),
    DEPLOYING: (False, "Deploying", "Deployment is in progress"),
    DEPLOYED: (True, "Deployed", "Deployment is healthy"),
    FAILED: (False, "Failed", "DGDR has failed"),
}


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


def _generation(live: Json) -> int:
    return int(live["metadata"].get("generation") or 0)


def step(live: Json, phase: str | None = None, **fields: Any) -> Step:
    """A step from the object's current status, with `phase` and top-level fields changed
    (a field given as None is removed); Succeeded follows the phase."""
    status = copy.deepcopy(live.get("status") or {})
    if phase is not None:
        status["phase"] = phase
    for key, value in fields.items():
        if value is None:
            status.pop(key, None)
        else:
            status[key] = value
    s = Step(status)
    ok, reason, message = _SUCCEEDED.get(str(status.get("phase") or ""),
                                         (False, "Unknown", "Unknown phase"))
    status["conditions"] = set_condition(list(status.get("conditions") or []), SUCCEEDED, ok,
                                         reason, message,
                                         observed_generation=_generation(live))
    return s


def set_phase(s: Step, live: Json, phase: str) -> Step:
    """Move a step to another phase (Succeeded follows)."""
    s.status["phase"] = phase
    ok, reason, message = _SUCCEEDED[phase]
    s.status["conditions"] = set_condition(list(s.status.get("conditions") or []), SUCCEEDED,
                                           ok, reason, message,
                                           observed_generation=_generation(live))
    return s


def condition(s: Step, live: Json, ctype: str, ok: bool, reason: str, message: str) -> Step:
    """Set a condition on the step's status, at the object's generation."""
    s.status["conditions"] = set_condition(list(s.status.get("conditions") or []), ctype, ok,
                                           reason, message,
                                           observed_generation=_generation(live))
    return s


def has_condition(live: Json, ctype: str) -> bool:
    return any(c.get("type") == ctype for c in (live.get("status") or {}).get("conditions")
               or [])


# --- the steps to Failed, with their conditions and events ---------------------------------

def invalid(live: Json, message: str) -> Step:
    s = step(live, FAILED)
    condition(s, live, VALIDATION, False, "ValidationFailed", message)
    return s.warning("ValidationFailed", message)


def job_creation_failed(live: Json, s: Step, message: str) -> Step:
    set_phase(s, live, FAILED)
    s.status.pop("profilingPhase", None)
    condition(s, live, PROFILING_CONDITION, False, "JobCreationFailed", message)
    return s.warning("ProfilingJobFailed", f"Failed to create profiling job: {message}")


def profiling_failed(live: Json, message: str) -> Step:
    s = step(live, FAILED, profilingPhase=None)
    condition(s, live, PROFILING_CONDITION, False, "ProfilingFailed", message)
    return s.warning("ProfilingCheckFailed", message)


def graph_deleted(live: Json, name: str) -> Step:
    """The original's v1beta1 answer to a deleted graph: Failed, and not recreated."""
    s = step(live, FAILED, dgdName=None, deploymentInfo=None)
    condition(s, live, DEPLOYMENT_READY, False, "DeploymentDeleted",
              "Deployment was deleted by user. Create a new DGDR to redeploy.")
    return s.warning("DeploymentDeleted", f"DGD {name} was deleted. DGDR will not recreate it. "
                     "Delete this DGDR and create a new one to redeploy.")
