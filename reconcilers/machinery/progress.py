"""Which status changes are only progress, not worth a write.

While an object is not ready, its condition messages and some replica counts move with every
step of a rollout ("waiting for the spec to be observed", "0/1 replicas available", ...). A
status write for each step costs the API server a write and every watcher an event, and tells
nobody anything the next real change will not. `only_progress` says when a new status differs
from the stored one only in such details: condition messages, and the `replicas` and
`updatedReplicas` counts of `status.component` (a DCD; `status.service` in v1alpha1) or
`status.components[*]` (a graph; `status.services[*]` in v1alpha1). A change of any
condition's status or reason, of the ready or available counts, of the observed generation or
of any other field is still written, and so is every change once the object is ready (the
caller decides that). A service that reports for the first time, or whose ready count moves,
is written: a graph stuck pending names what it waits for, as it is now.
"""

from __future__ import annotations

from typing import Any

Json = dict[str, Any]

#: Replica counts that move on their own during a rollout; ready and available counts are kept.
_MOVING_COUNTS = frozenset({"replicas", "updatedReplicas"})


def only_progress(current: Json, desired: Json) -> bool:
    """True when `desired` differs from `current` only in condition messages and moving
    replica counts (see the module docstring)."""
    return current != desired and _settled_view(current) == _settled_view(desired)


def _settled_view(status: Json) -> Json:
    view = dict(status)
    conditions = view.get("conditions")
    if isinstance(conditions, list):
        view["conditions"] = [{k: v for k, v in c.items() if k != "message"}
                              if isinstance(c, dict) else c for c in conditions]
    for key in ("service", "component"):
        service = view.get(key)
        if isinstance(service, dict):
            view[key] = _counts(service)
    for key in ("services", "components"):
        services = view.get(key)
        if isinstance(services, dict):
            view[key] = {k: _counts(v) if isinstance(v, dict) else v
                         for k, v in services.items()}
    return view


def _counts(replica_status: Json) -> Json:
    return {k: v for k, v in replica_status.items() if k not in _MOVING_COUNTS}
