"""Server-side apply's prune when managedFields entries span API versions.

structured-merge-diff's prune works at the version of the applier's last applied set: the
merged object is converted there and what the applier applied last time is removed; then, one
version at a time (the pruned version first, as structured-merge-diff does since v4.1), both
objects are converted to the version of a group of entries and what those entries own comes
back; what was removed but never applied by the applier comes back too (dangling items); the
result is converted to the version the applier applies in now. Each conversion is the object's
own (a CRD's webhook). With every entry at one version this is `merge.prune`.
"""

from __future__ import annotations

from collections.abc import Set
from typing import Any

from ..fields_v1 import Path, PathTrie
from ..managed_fields import Entry, Managed
from ..registry import ResourceType
from .field_sets import collect_fields, with_named_fields
from .field_types import FieldType
from .merge import remove_paths
from .versions import Versions, version_types

Json = dict[str, Any]

__all__ = ["prune_across_versions"]


def _fields(value: Any, root: FieldType) -> set[Path]:
    out: set[Path] = set()
    collect_fields(value, root, (), out)
    return with_named_fields(out, root)


def _remove(value: Any, paths: Set[Path], root: FieldType) -> Any:
    return remove_paths(value, PathTrie.of(paths), root) if paths else value


def prune_across_versions(merged: Json, managed: Managed, last: Entry, rt: ResourceType,
                          versions: Versions, others: dict[str, ResourceType]) -> Json:
    """`merged` (at the request's version) without what the applier applied last time (`last`,
    at its own version), no longer applies, and no entry of `managed` owns at its version."""
    types = version_types(rt, others)
    last_version = last.api_version if last.api_version in types else rt.api_version
    last_root = types[last_version]

    def at(obj: Json, version: str) -> Json:
        if obj.get("apiVersion") == version:
            return obj
        return versions.at([obj], version)[0]

    def both_at(a: Json, b: Json, version: str) -> tuple[Json, Json]:
        """Two objects at `version`, converted in one round (one replay of the request)."""
        if a.get("apiVersion") == version or b.get("apiVersion") == version:
            return at(a, version), at(b, version)
        a, b = versions.at([a, b], version)
        return a, b

    converted = at(merged, last_version)
    last_fields = with_named_fields(last.fields, last_root)
    pruned = _remove(converted, last_fields, last_root)

    owned: dict[str, set[Path]] = {}
    for entry in managed.values():
        version = entry.api_version if entry.api_version in types else rt.api_version
        owned.setdefault(version, set()).update(entry.fields)
    order = sorted(owned, key=lambda v: (v != last_version, v))
    current = converted
    for version in order:
        root = types[version]
        current, pruned = both_at(current, pruned, version)
        keep = _fields(pruned, root) | with_named_fields(owned[version], root)
        pruned = _remove(current, _fields(current, root) - keep, root)

    pruned_last = at(pruned, last_version)
    dangling = (_fields(converted, last_root) - _fields(pruned_last, last_root)) & last_fields
    return at(_remove(converted, dangling, last_root), rt.api_version)
