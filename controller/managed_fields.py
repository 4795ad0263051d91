"""Who last set a field of an object, read from its `metadata.managedFields`.

The API server records, per field manager, the fields each writer set (FieldsV1: nested maps
whose keys are `f:<name>` for a struct or map field, `k:<key fields as JSON>` for an item of a
list-map). Each entry is in the shape of the version it was written at, so a field that moved
between versions is looked for at each of its paths. A write that changes a field moves it to
the writer's entry, so the managers owning a field are those whose write set its current value
(co-owners when several appliers agree on it); a manager that set an ancestor as a whole (an
atomic list or map, a leaf in its entry) owns everything under it. A controller can therefore
tell its own earlier write from someone else's edit by the object alone, without any memory of
its own.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

Json = dict[str, Any]

__all__ = ["owners_of"]

#: One step of a path: a field name, or the key fields of a list-map item (``{"name": "x"}``).
Step = str | Mapping[str, Any]


def _key(step: Step) -> str:
    if isinstance(step, str):
        return f"f:{step}"
    # The API server writes the key fields as compact JSON, sorted by name.
    return "k:" + json.dumps(dict(step), separators=(",", ":"), sort_keys=True,
                             ensure_ascii=False)


def owners_of(obj: Json, path: Sequence[Step], *alternatives: Sequence[Step]) -> set[str]:
    """The managers of `obj` that own the field at `path` (steps from the root, such as
    ``("spec", "replicas")``) or at any of the `alternatives` (the same field as another
    version places it); empty when nobody does or managedFields are not there."""
    owners = set()
    paths = [[_key(step) for step in p] for p in (path, *alternatives)]
    for entry in (obj.get("metadata") or {}).get("managedFields") or ():
        if not isinstance(entry, dict) or not isinstance(entry.get("manager"), str):
            continue
        if any(_owns(entry.get("fieldsV1"), keys) for keys in paths):
            owners.add(entry["manager"])
    return owners


def _owns(fields: Any, keys: Sequence[str]) -> bool:
    for key in keys:
        if not isinstance(fields, dict):
            return False
        if not fields:
            # A leaf above the field: its owner set that whole value, as an atomic list or
            # map records it (Kubernetes before 1.21 deduces our CRDs' lists atomic).
            return True
        fields = fields.get(key)
    return isinstance(fields, dict)
