"""A status write on the hub, for code that keeps objects as `v1alpha1` views.

The view is converted to the hub with its old and with its new status, the whole object each
time, so that what the view cannot show (kept in payloads) is the same on both sides and a diff
of the two statuses leaves it alone. What the hub cannot show of the new status lives in the
status payload annotation, which the status subresource does not write: it is returned as a
metadata merge patch, built here so that only this package knows the payloads' names.
"""

from __future__ import annotations

from dataclasses import dataclass

from api.conversion.dispatch import CONVERSIONS, convert
from api.conversion.objects import HUB
from api.kube import Json

__all__ = ["HubStatusWrite", "hub_status_write"]


@dataclass(frozen=True)
class HubStatusWrite:
    """The hub's status of an object before and after, and the metadata merge patch that
    carries its status payload when that changed (None when it did not)."""

    old: Json
    new: Json
    metadata_patch: Json | None


def hub_status_write(view: Json, status: Json) -> HubStatusWrite:
    """`view` (a `v1alpha1` object with its payloads) given `status`, as the hub sees it."""
    name = CONVERSIONS[str(view["kind"])].status_annotation
    before = convert(view, HUB)
    after = convert({**view, "status": status}, HUB)
    old_payload, new_payload = _annotation(before, name), _annotation(after, name)
    patch = None if old_payload == new_payload else {"annotations": {name: new_payload}}
    return HubStatusWrite(before.get("status") or {}, after.get("status") or {}, patch)


def _annotation(obj: Json, name: str) -> str | None:
    value = ((obj.get("metadata") or {}).get("annotations") or {}).get(name)
    return value if isinstance(value, str) else None
