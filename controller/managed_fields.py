"""Who last set a field of an object, read from its `metadata.managedFields`.

The API server records, per field manager, the fields each writer set (FieldsV1: nested maps
whose keys are `f:<name>` for a struct or map field). A write that changes a field moves it to
the writer's entry, so the managers owning a field are those whose write set its current value
(co-owners when several appliers agree on it). A controller can therefore tell its own earlier
write from someone else's edit by the object alone, without any memory of its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

Json = dict[str, Any]

__all__ = ["owners_of"]


def owners_of(obj: Json, path: Sequence[str]) -> set[str]:
    """The managers of `obj` that own the field at `path` (field names from the root, such
    as ``("spec", "replicas")``); empty when nobody does or managedFields are not there."""
    owners = set()
    for entry in (obj.get("metadata") or {}).get("managedFields") or ():
        if not isinstance(entry, dict):
            continue
        fields = entry.get("fieldsV1")
        for name in path:
            fields = fields.get(f"f:{name}") if isinstance(fields, dict) else None
        if isinstance(fields, dict) and isinstance(entry.get("manager"), str):
            owners.add(entry["manager"])
    return owners
