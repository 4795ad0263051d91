"""The field manager's two operations: server-side apply, and tracking an update's changes."""

from __future__ import annotations

from collections.abc import Set
from typing import Any

from ..errors import ApiError
from ..errors import not_found as _not_found
from ..fields_v1 import Path
from ..json_copy import copy_json
from ..managed_fields import APPLY, UPDATE, Entry, ManagerId, decode_managed_fields, union
from ..registry import ResourceType
from .applied_config import check_applied, check_typed, metadata_of
from .comparison import Diff, compare, compare_fields, values_equal
from .conflicts import conflict_error
from .field_sets import field_set
from .field_types import root_type
from .merge import drop_applied_nulls, merge, prune
from .ownership import (
    STRIPPED,
    cap_update_managers,
    drop_empty,
    empty_object,
    keep_fn,
    kept_roots,
    managed_for_update,
    reset,
    store_managed_fields,
    without_managed_fields,
)
from .version_prune import prune_across_versions
from .versions import Changes, Versions, at_other_versions

Json = dict[str, Any]

__all__ = ["server_side_apply", "track_update"]


def server_side_apply(
    live: Json | None,
    applied: Json,
    *,
    manager: str,
    force: bool,
    rt: ResourceType,
    subresource: str = "",
    now: str,
    versions: Versions | None = None,
) -> Json:
    """Apply a configuration to the live object (None: create) and return the new object.

    The applied configuration's fields become exactly what `manager` owns with operation
    Apply; fields it owned before and no longer applies are removed unless another manager owns
    them. Changing a field another manager owns raises the apiserver's 409 Conflict, unless
    `force` moves the field to the applier. Setting a field to the value it already has shares
    its ownership. On the main resource of a kind with a status subresource, status is left as
    it was; on the status subresource only status changes.

    Metadata the configuration carries but does not own (name, namespace, uid,
    resourceVersion, ...) is merged into the result as given: the caller checks it against the
    URL (`check_name`) and the stored object (preconditions), and sets system fields.

    Entries recorded at another served version (`versions`) are compared at their own
    version, the objects converted there; conflicts with them name their paths there.

    Raises ApiError: 400 for a configuration of another kind or version or with managedFields,
    500 (as the apiserver) for list elements it cannot key or duplicates and fields a CRD schema
    does not declare, 409 for conflicts, 404 for the status of an object that does not exist.
    """
    applied = check_applied(applied, rt)
    root = root_type(rt)
    check_typed(applied, rt, root)
    if live is None and subresource:
        raise _not_found(rt.group, rt.plural, str(metadata_of(applied).get("name") or ""))
    try:
        managed = decode_managed_fields(metadata_of(live).get("managedFields") if live else None)
    except ValueError as e:
        raise ApiError(500, "", f"failed to decode managed fields: {e}") from e
    # Merging builds new containers and never changes its inputs, and the result is copied at
    # the end, so neither the live object nor the configuration needs a copy of its own.
    live_obj = without_managed_fields(live, deep=False) if live is not None else {}
    config = applied
    keep = keep_fn(rt, subresource)
    me = ManagerId(manager or "unknown", APPLY, "", subresource)

    merged = merge(live_obj, config, root)
    previous = managed.get(me)
    applied_fields = {p for p in field_set(config, rt) if keep(p)}
    managed[me] = Entry(applied_fields, rt.api_version, previous.time if previous else None)
    others = at_other_versions(rt, versions, (e.api_version for e in managed.values()))
    if versions is not None and others and previous is not None and previous.fields:
        merged = prune_across_versions(merged, managed, previous, rt, versions, others)
    else:
        merged = prune(
            merged,
            union(e.fields for e in managed.values()),
            previous.fields if previous else set(),
            root,
        )
    merged = reset(live_obj, merged, rt, subresource)

    diff = Diff()
    compare(live_obj, merged, root, (), diff)
    diff = diff.only(keep)
    changes = Changes(rt, subresource, diff, live_obj, merged, versions, others)
    conflicts: dict[ManagerId, Set[Path]] = {}
    for mid, entry in managed.items():
        if mid != me:
            clash = entry.fields & changes.for_entry(entry).changed()
            if clash:
                conflicts[mid] = clash
    if conflicts and not force:
        raise conflict_error(conflicts)
    for mid, entry in managed.items():
        if mid != me:
            removed = changes.for_entry(entry).removed
            entry.fields = entry.fields - conflicts.get(mid, set()) - removed
    managed[me].fields -= STRIPPED
    drop_empty(managed)

    result = drop_applied_nulls(merged, live_obj, root)
    if (live is None or not values_equal(result, live_obj)) and me in managed:
        managed[me].time = now
    return store_managed_fields(copy_json(result), managed)


def track_update(
    old: Json | None,
    new: Json,
    *,
    manager: str,
    rt: ResourceType,
    operation: str = UPDATE,
    subresource: str = "",
    now: str,
    copy_new: bool = True,
    versions: Versions | None = None,
) -> Json:
    """Return `new` with managedFields updated for a create (old None), update or patch.

    The fields that differ between old and new (every set field on create) become owned by
    `manager` with the given operation, in one entry per (manager, operation, apiVersion,
    subresource) whose time is `now`; other managers lose them, and entries left empty are
    dropped. An entry's time only changes when the write changed something it now owns.

    managedFields set in `new` replace the stored ones when they are valid and not empty;
    ``[]`` or ``[{}]`` clears them first; invalid or absent ones keep the stored ones. On a
    subresource the request's managedFields are ignored. More than ten Update entries are
    merged oldest first into "ancient-changes". An entry recorded at another served version
    (`versions`) loses what changed at its version, the objects converted there.

    The result is a copy of `new`; with `copy_new` False it is `new` handed over: only its top
    level and metadata are new dicts, the rest is `new`'s own values.
    """
    root = root_type(rt)
    managed = managed_for_update(old, new, subresource)
    new_obj = without_managed_fields(new, deep=copy_new)
    old_obj = without_managed_fields(old, deep=False) if old is not None else empty_object(rt)
    keep = keep_fn(rt, subresource)
    me = ManagerId(
        manager or "unknown",
        operation,
        rt.api_version if operation != APPLY else "",
        subresource,
    )

    diff = Diff()
    compare_fields(old_obj, new_obj, root, kept_roots(rt, subresource), diff)
    kept = diff.only(keep)
    others = at_other_versions(rt, versions, (e.api_version for e in managed.values()))
    if others:
        Changes(rt, subresource, kept, old_obj, new_obj, versions, others).taken_from(managed)
    else:
        taken = kept.changed() | kept.removed
        for entry in managed.values():
            if not entry.fields.isdisjoint(taken):
                entry.fields = entry.fields - taken
    drop_empty(managed)
    current = {p for p in diff.changed() if keep(p)} - STRIPPED
    if current:
        previous = managed.get(me)
        fields = current | (previous.fields if previous else set())
        managed[me] = Entry(fields, rt.api_version, now)
    cap_update_managers(managed)
    return store_managed_fields(new_obj, managed)
