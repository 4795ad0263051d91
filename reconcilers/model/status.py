"""A DynamoModel's status, computed from its endpoints, and the events its changes deserve.

Conditions (reasons and messages as the original operator words them):

- `ServicesFound`: True `ServicesFound` "Found <n> service(s)", or False `NoServicesFound`;
- `EndpointsReady`: for a LoRA, True `AllEndpointsReady` when every endpoint has the adapter,
  False `NotReady` "Found <r> ready endpoint(s) out of <t> total", False `NoEndpoints`; for a
  base model (or an adapter) True `EndpointsDiscovered` as soon as one endpoint exists.

Both carry the generation they were computed from. Events follow transitions of
`EndpointsReady` only, so a model that stays as it is records nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from reconcilers.machinery.conditions import get_condition, set_condition

Json = dict[str, Any]

SERVICES_FOUND = "ServicesFound"
ENDPOINTS_READY = "EndpointsReady"
NO_SERVICES_FOUND = "NoServicesFound"
NO_ENDPOINTS = "NoEndpoints"
ALL_ENDPOINTS_READY = "AllEndpointsReady"
NOT_READY = "NotReady"
ENDPOINTS_DISCOVERED = "EndpointsDiscovered"
VALIDATION_FAILED = "ValidationFailed"
NO_ENDPOINTS_FOUND = "NoEndpointsFound"


@dataclass(frozen=True)
class Event:
    warning: bool
    reason: str
    message: str


def _conditions(live: Json) -> list[Json]:
    return list((live.get("status") or {}).get("conditions") or [])


def _generation(live: Json) -> int:
    return int(live["metadata"].get("generation") or 0)


def no_slices_status(live: Json, base_model: str) -> Json:
    """No EndpointSlice carries the base model's label: nothing serves it."""
    message = f"No endpoint slices found for base model {base_model}"
    generation = _generation(live)
    conditions = set_condition(_conditions(live), SERVICES_FOUND, False, NO_SERVICES_FOUND,
                               message, generation)
    conditions = set_condition(conditions, ENDPOINTS_READY, False, NO_ENDPOINTS, message,
                               generation)
    return {"observedGeneration": generation, "readyEndpoints": 0, "totalEndpoints": 0,
            "conditions": conditions}


def invalid_status(live: Json, message: str) -> Json:
    """A spec the operator cannot act on: EndpointsReady False `ValidationFailed`."""
    status = dict(live.get("status") or {})
    generation = _generation(live)
    status["observedGeneration"] = generation
    status["conditions"] = set_condition(_conditions(live), ENDPOINTS_READY, False,
                                         VALIDATION_FAILED, message, generation)
    return status


def endpoints_status(live: Json, endpoints: list[Json], services: set[str],
                     lora: bool) -> Json:
    """The status of a model whose slices list `endpoints` (already marked ready or not)."""
    generation = _generation(live)
    total = len(endpoints)
    ready = sum(1 for e in endpoints if e.get("ready"))
    if services:
        found: tuple[bool, str, str] = (True, SERVICES_FOUND, f"Found {len(services)} service(s)")
    else:
        found = (False, NO_SERVICES_FOUND, "No services associated with endpoint slices")
    conditions = set_condition(_conditions(live), SERVICES_FOUND, *found, generation)
    if total == 0:
        verdict: tuple[bool, str, str] = (False, NO_ENDPOINTS, "No endpoints found")
    elif not lora:
        verdict = (True, ENDPOINTS_DISCOVERED, f"Found {total} endpoint(s) for base model")
    elif ready == total:
        verdict = (True, ALL_ENDPOINTS_READY, f"All {total} endpoint(s) are ready")
    else:
        verdict = (False, NOT_READY, f"Found {ready} ready endpoint(s) out of {total} total")
    conditions = set_condition(conditions, ENDPOINTS_READY, *verdict, generation)
    status: Json = {"observedGeneration": generation, "readyEndpoints": ready,
                    "totalEndpoints": total, "conditions": conditions}
    if endpoints:
        status["endpoints"] = endpoints
    return status


def transition_event(before: Json | None, after: Json) -> Event | None:
    """The event of a change of EndpointsReady (reason or message), if it changed."""
    old = get_condition((before or {}).get("conditions"), ENDPOINTS_READY) or {}
    new = get_condition(after.get("conditions"), ENDPOINTS_READY) or {}
    if (old.get("reason"), old.get("message")) == (new.get("reason"), new.get("message")):
        return None
    reason = str(new.get("reason") or "")
    message = str(new.get("message") or "")
    if reason in (ALL_ENDPOINTS_READY, ENDPOINTS_DISCOVERED):
        return Event(False, ENDPOINTS_READY if reason == ALL_ENDPOINTS_READY else reason,
                     message)
    if reason == NOT_READY:
        return Event(True, NOT_READY, message)
    if reason == NO_ENDPOINTS:
        services = get_condition(after.get("conditions"), SERVICES_FOUND) or {}
        if services.get("reason") == NO_SERVICES_FOUND:
            return Event(True, NO_ENDPOINTS_FOUND, message)
        return None
    if reason == VALIDATION_FAILED:
        return Event(True, VALIDATION_FAILED, message)
    return None
