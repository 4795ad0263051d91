"""Status conditions (metav1.Condition) whose lastTransitionTime moves only on transitions."""

from __future__ import annotations

from typing import Any

from controller.clock import now_rfc3339

Json = dict[str, Any]


def now() -> str:
    """The time a condition changes, as the API writes it."""
    return now_rfc3339()


def set_condition(conditions: list[Json], ctype: str, status: bool | str, reason: str,
                  message: str, observed_generation: int | None = None) -> list[Json]:
    """A new list with `ctype` set; the transition time is kept unless the status changed."""
    value = status if isinstance(status, str) else ("True" if status else "False")
    old = next((c for c in conditions if c.get("type") == ctype), None)
    condition: Json = {
        "type": ctype,
        "status": value,
        "reason": reason,
        "message": message,
        "lastTransitionTime": old["lastTransitionTime"]
        if old is not None and old.get("status") == value and old.get("lastTransitionTime")
        else now(),
    }
    if observed_generation is not None:
        condition["observedGeneration"] = observed_generation
    out = [c for c in conditions if c.get("type") != ctype]
    out.append(condition)
    return sorted(out, key=lambda c: str(c.get("type")))


def get_condition(conditions: list[Json] | None, ctype: str) -> Json | None:
    return next((c for c in conditions or [] if c.get("type") == ctype), None)
