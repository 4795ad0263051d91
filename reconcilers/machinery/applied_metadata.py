"""Which labels and annotations of a child are ours: the keys we set, recorded on the child.

Children carry labels and annotations from several writers: ours (from the parent's spec), the
API server's and other controllers' (`deployment.kubernetes.io/revision`), and the user's. An
update must keep every key someone else set, and remove a key we set once and no longer want
(a label removed from a service must leave its Deployment and pods, or selectors keep matching).
So each child records the keys we last set, in one annotation (as `kubectl apply` keeps its
last-applied configuration): on update, a recorded key that is no longer desired is removed,
every other key not desired is left as it is.

A child written before the record existed has none: nothing is removed from it until its next
update writes the record, and it is not rewritten for the record alone.
"""

from __future__ import annotations

import json
from typing import Any

Json = dict[str, Any]

#: The keys of the labels and annotations the operator last set on a child (compact JSON).
APPLIED_KEYS_ANNOTATION = "nvidia.com/last-applied-metadata-keys"
_FIELDS = ("labels", "annotations")

__all__ = ["APPLIED_KEYS_ANNOTATION", "drifted", "merged", "record"]


def record(desired_meta: Json, own_annotations: frozenset[str]) -> str:
    """The record of what `desired_meta` sets, our own bookkeeping annotations left out."""
    keys = {name: sorted(k for k in desired_meta.get(name) or {} if k not in own_annotations)
            for name in _FIELDS}
    return json.dumps(keys, separators=(",", ":"), sort_keys=True)


def _recorded(live_meta: Json) -> dict[str, set[str]] | None:
    raw = (live_meta.get("annotations") or {}).get(APPLIED_KEYS_ANNOTATION)
    if not isinstance(raw, str):
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(value, dict):
        return None
    return {name: {k for k in value.get(name) or () if isinstance(k, str)} for name in _FIELDS}


def merged(live_meta: Json, desired_meta: Json, field: str) -> dict[str, str]:
    """`field` ("labels" or "annotations") as an update writes it: the live keys, less those we
    set before and no longer want, with the desired keys over them."""
    live = dict(live_meta.get(field) or {})
    recorded = _recorded(live_meta)
    desired = desired_meta.get(field) or {}
    if recorded is not None:
        for key in recorded[field] - desired.keys():
            live.pop(key, None)
    live.update(desired)
    return live


def drifted(live_meta: Json, desired_meta: Json) -> bool:
    """Whether the live labels or annotations differ from what an update would write: a
    desired key missing or changed, or a key we set before still there though undesired."""
    recorded = _recorded(live_meta)
    for field in _FIELDS:
        live = live_meta.get(field) or {}
        desired = desired_meta.get(field) or {}
        if any(live.get(k) != v for k, v in desired.items()):
            return True
        if recorded is not None and any(k in live for k in recorded[field] - desired.keys()):
            return True
    return False
