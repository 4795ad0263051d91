"""metadata.managedFields entries: who owns which fields, decoded and encoded as the apiserver does.

Entries are keyed the way the apiserver keys them: by manager, operation, subresource and, for
Update only, apiVersion (an applier keeps one entry whatever version it applies in). The field
sets themselves are FieldsV1 (`fields_v1`); `fields_to_set` and `set_to_fields` are re-exported
from there.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Set
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from .fields_v1 import Path, decoded_fields, fields_to_set, go_json, set_to_fields

Json = dict[str, Any]

__all__ = [
    "APPLY",
    "UPDATE",
    "Entry",
    "Managed",
    "ManagerId",
    "decode_managed_fields",
    "encode_managed_fields",
    "fields_to_set",
    "set_to_fields",
    "union",
    "unix_seconds",
]

APPLY = "Apply"
UPDATE = "Update"


@dataclass(frozen=True)
class ManagerId:
    """Who owns a managedFields entry: the apiserver's manager identifier, as a value."""

    manager: str
    operation: str
    #: Only for Update entries; an applier's identity does not depend on the version it used.
    api_version: str = ""
    subresource: str = ""

    def identifier(self) -> str:
        """The JSON the apiserver keys entries by (and sorts conflicting managers by)."""
        out: Json = {"manager": self.manager, "operation": self.operation}
        if self.api_version:
            out["apiVersion"] = self.api_version
        if self.subresource:
            out["subresource"] = self.subresource
        return go_json_ordered(out)

    def describe(self) -> str:
        """The manager as conflict messages print it."""
        text = json.dumps(self.manager, ensure_ascii=False)
        if self.subresource:
            text += f" with subresource {json.dumps(self.subresource, ensure_ascii=False)}"
        if self.operation == UPDATE:
            text += f" using {self.api_version}"
        return text


def go_json_ordered(obj: Json) -> str:
    """Compact Go-style JSON of an object whose keys stay in the given (struct) order."""
    parts = [f"{go_json(k)}:{go_json(v)}" for k, v in obj.items()]
    return "{" + ",".join(parts) + "}"


@dataclass
class Entry:
    """The fields one manager owns, at the API version it last wrote them in.

    `fields` may be shared with other entries and caches: replace it, never change it.
    """

    fields: Set[Path]
    api_version: str
    time: str | None = None


Managed = dict[ManagerId, Entry]


def decode_managed_fields(raw: Any) -> Managed:
    """Decode metadata.managedFields; raises ValueError on an entry the apiserver rejects."""
    managed: Managed = {}
    if raw is None:
        return managed
    if not isinstance(raw, list):
        raise ValueError("managedFields must be a list")
    for i, entry in enumerate(raw):
        if not isinstance(entry, dict):
            raise ValueError(f"managed fields entry {i} is not an object")
        operation = entry.get("operation") or ""
        if operation not in (APPLY, UPDATE):
            raise ValueError("operation must be `Apply` or `Update`")
        api_version = entry.get("apiVersion") or ""
        if not api_version:
            raise ValueError("apiVersion must not be empty")
        fields_type = entry.get("fieldsType") or ""
        if not fields_type:
            raise ValueError(f"missing fieldsType in managed fields entry {i}")
        if fields_type != "FieldsV1":
            raise ValueError(f'invalid fieldsType "{fields_type}" in managed fields entry {i}')
        fields_v1 = entry.get("fieldsV1")
        paths = decoded_fields({} if fields_v1 is None else fields_v1)
        mid = ManagerId(
            manager=str(entry.get("manager") or ""),
            operation=operation,
            api_version=api_version if operation == UPDATE else "",
            subresource=str(entry.get("subresource") or ""),
        )
        time = entry.get("time")
        managed[mid] = Entry(paths, api_version, time if isinstance(time, str) else None)
    return managed


@functools.lru_cache(maxsize=4096)
def unix_seconds(time: str | None) -> int:
    """Seconds since the epoch of an RFC 3339 timestamp; 0 when absent or unreadable."""
    if not time:
        return 0
    try:
        return int(datetime.fromisoformat(time).timestamp())
    except ValueError:
        return 0


def encode_managed_fields(managed: Managed) -> list[Json] | None:
    """Encode entries in the apiserver's order; None when there are none (the field is omitted)."""
    entries = [(mid, e) for mid, e in managed.items() if e.fields]
    if not entries:
        return None
    entries.sort(
        key=lambda me: (
            me[0].operation,
            unix_seconds(me[1].time),
            me[0].manager,
            me[1].api_version,
            me[0].subresource,
        )
    )
    out: list[Json] = []
    for mid, entry in entries:
        item: Json = {}
        if mid.manager:
            item["manager"] = mid.manager
        item["operation"] = mid.operation
        item["apiVersion"] = entry.api_version
        if entry.time is not None:
            item["time"] = entry.time
        item["fieldsType"] = "FieldsV1"
        item["fieldsV1"] = set_to_fields(entry.fields)
        if mid.subresource:
            item["subresource"] = mid.subresource
        out.append(item)
    return out


def union(sets: Iterable[Set[Path]]) -> set[Path]:
    """All paths of several sets."""
    out: set[Path] = set()
    for s in sets:
        out |= s
    return out
