"""Bookkeeping of managedFields around a write: which paths an endpoint may own, what a
subresource resets, the object a create is compared against, and the entries' upkeep (empty
entries dropped, old Update entries merged into "ancient-changes", request-supplied entries)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..fields_v1 import Path, is_shared_encoding, pe_field
from ..json_copy import copy_json
from ..managed_fields import (
    APPLY,
    UPDATE,
    Entry,
    Managed,
    ManagerId,
    decode_managed_fields,
    encode_managed_fields,
    unix_seconds,
)
from ..registry import ResourceType
from .applied_config import metadata_of

Json = dict[str, Any]

__all__ = [
    "ANCIENT_CHANGES",
    "MAX_UPDATE_MANAGERS",
    "STRIPPED",
    "cap_update_managers",
    "drop_empty",
    "empty_object",
    "keep_fn",
    "kept_roots",
    "managed_for_update",
    "reset",
    "store_managed_fields",
    "without_managed_fields",
]

#: Beyond this many Update entries, the oldest are merged into "ancient-changes" buckets.
MAX_UPDATE_MANAGERS = 10
ANCIENT_CHANGES = "ancient-changes"

# Paths never recorded as owned (the apiserver's stripMeta set); exact paths, not subtrees.
STRIPPED: frozenset[Path] = frozenset(
    {
        ("f:apiVersion",),
        ("f:kind",),
        ("f:metadata",),
        *(
            ("f:metadata", pe_field(name))
            for name in (
                "name",
                "namespace",
                "creationTimestamp",
                "selfLink",
                "uid",
                "clusterName",
                "generation",
                "managedFields",
                "resourceVersion",
            )
        ),
    }
)


def keep_fn(rt: ResourceType, subresource: str) -> Callable[[Path], bool]:
    """Which paths a write through this endpoint may own (the strategy's reset fields)."""
    if subresource == "status":
        return lambda p: bool(p) and p[0] == "f:status"
    if subresource == "scale":
        dotted = rt.scale.spec_replicas_path if rt.scale else ".spec.replicas"
        replicas = tuple(pe_field(part) for part in dotted.strip(".").split("."))
        return lambda p: p == replicas
    if rt.has_status:
        return lambda p: not (p and p[0] == "f:status")
    return lambda p: True


def kept_roots(rt: ResourceType, subresource: str) -> Callable[[str], bool]:
    """The top-level fields that hold every path `keep_fn` accepts: comparing the others is
    wasted work."""
    if subresource == "status":
        return lambda name: name == "status"
    if subresource == "scale":
        dotted = rt.scale.spec_replicas_path if rt.scale else ".spec.replicas"
        first = dotted.strip(".").split(".")[0]
        return lambda name: name == first
    if rt.has_status:
        return lambda name: name != "status"
    return lambda name: True


def reset(live: Json, merged: Json, rt: ResourceType, subresource: str) -> Json:
    """Keep out what this endpoint may not change: status on the main resource, the rest on
    the status subresource."""
    if subresource == "status":
        out = dict(live)
        source = merged
    elif rt.has_status:
        out = dict(merged)
        source = live
    else:
        return merged
    if "status" in source:
        out["status"] = source["status"]
    else:
        out.pop("status", None)
    return out


def _empty_template() -> Json:
    return {"metadata": {"creationTimestamp": None}, "spec": {"containers": None}}


_SPEC_KINDS = frozenset(
    {
        "Pod",
        "Service",
        "Namespace",
        "PersistentVolumeClaim",
        "PersistentVolume",
        "Node",
        "Deployment",
        "ReplicaSet",
        "StatefulSet",
        "DaemonSet",
        "Job",
        "CronJob",
        "Lease",
        "Ingress",
        "IngressClass",
        "HorizontalPodAutoscaler",
        "PodDisruptionBudget",
        "CustomResourceDefinition",
    }
)


def empty_object(rt: ResourceType) -> Json:
    """The object a create is compared against: a zero-valued Go object for built-in kinds.

    Its non-omitempty structs and lists decide which created fields carry a "." of their own.
    """
    if rt.custom:
        return {}
    obj: Json = {"metadata": {"creationTimestamp": None}}
    if rt.has_status:
        obj["status"] = {}
    if rt.kind not in _SPEC_KINDS:
        return obj
    spec: Json = {}
    obj["spec"] = spec
    if rt.kind == "Pod":
        spec["containers"] = None
    elif rt.kind in ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet"):
        spec["selector"] = None
        spec["template"] = _empty_template()
        if rt.kind == "Deployment":
            spec["strategy"] = {}
        elif rt.kind != "ReplicaSet":
            spec["updateStrategy"] = {}
    elif rt.kind == "Job":
        spec["template"] = _empty_template()
    elif rt.kind == "CronJob":
        spec["jobTemplate"] = {
            "metadata": {"creationTimestamp": None},
            "spec": {"template": _empty_template()},
        }
    return obj


def without_managed_fields(obj: Json, *, deep: bool = True) -> Json:
    """`obj` without metadata.managedFields: a deep copy, or (not `deep`) a new top level and
    metadata over `obj`'s values."""
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        out = dict(obj)
    else:
        out = {**obj, "metadata": {k: v for k, v in meta.items() if k != "managedFields"}}
    return copy_json(out) if deep else out


def store_managed_fields(obj: Json, managed: Managed) -> Json:
    encoded = encode_managed_fields(managed)
    meta = obj.get("metadata")
    if encoded is None:
        if isinstance(meta, dict):
            meta.pop("managedFields", None)
        return obj
    if not isinstance(meta, dict):
        meta = {}
        obj["metadata"] = meta
    meta["managedFields"] = encoded
    return obj


def drop_empty(managed: Managed) -> None:
    for mid in [m for m, e in managed.items() if not e.fields]:
        del managed[mid]


def cap_update_managers(managed: Managed) -> None:
    """Merge the oldest Update entries into per-version "ancient-changes" entries."""
    updaters = [mid for mid in managed if mid.operation != APPLY]
    if len(updaters) <= MAX_UPDATE_MANAGERS:
        return
    updaters.sort(key=lambda m: (unix_seconds(managed[m].time), m.identifier()))
    first_of_version: dict[str, ManagerId] = {}
    remaining = len(updaters)
    for mid in updaters:
        if remaining <= MAX_UPDATE_MANAGERS:
            break
        entry = managed[mid]
        version = entry.api_version
        if version not in first_of_version:
            first_of_version[version] = mid
            continue
        bucket = ManagerId(ANCIENT_CHANGES, UPDATE, version)
        if bucket not in managed:
            managed[bucket] = managed.pop(first_of_version[version])
        target = managed[bucket]
        managed[bucket] = Entry(target.fields | entry.fields, version, entry.time)
        del managed[mid]
        remaining -= 1


def _is_reset(raw: Any) -> bool:
    if not isinstance(raw, list):
        return False
    if not raw:
        return True
    keys = ("manager", "operation", "apiVersion", "time", "fieldsType", "fieldsV1", "subresource")
    return (
        len(raw) == 1
        and isinstance(raw[0], dict)
        and all(raw[0].get(k) in (None, "") for k in keys)
    )


def _decode_or_empty(raw: Any) -> Managed:
    try:
        return decode_managed_fields(raw)
    except ValueError:
        return {}


def managed_for_update(old: Json | None, new: Json, subresource: str) -> Managed:
    """Which managedFields an update starts from: the request's, when it sets valid ones."""
    live_raw = metadata_of(old).get("managedFields") if old is not None else None
    if subresource:
        return _decode_or_empty(live_raw)
    meta = metadata_of(new)
    new_raw = meta.get("managedFields")
    if "managedFields" in meta and _is_reset(new_raw):
        return {}
    if new_raw is not live_raw and _sent_back(new_raw, live_raw):
        new_raw = live_raw  # the same entries, whose field sets are decoded already
    managed = _decode_or_empty(new_raw)
    return managed if managed else _decode_or_empty(live_raw)


def _sent_back(raw: Any, live_raw: Any) -> bool:
    """Whether a request's managedFields are the stored ones unchanged, as clients that send
    back the object they read have them.

    The stored entries must be strings plus an encoding of ours (a tree of dicts): a request
    entry equal to such an entry is then the same JSON, not merely == (as 1 == True).
    """
    if not (isinstance(raw, list) and isinstance(live_raw, list) and len(raw) == len(live_raw)):
        return False
    for entry in live_raw:
        if type(entry) is not dict:
            return False
        for key, value in entry.items():
            if not (is_shared_encoding(value) if key == "fieldsV1" else type(value) is str):
                return False
    return raw == live_raw
