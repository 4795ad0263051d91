"""Event handlers that turn informer events into work-queue keys.

A mapper says which Requests an object concerns: itself (`requests_for_object`), its
controlling owner (`requests_for_owner`), or anything a watch's own function decides. On an
update both the old and the new object are mapped, so a child that changes owner wakes both.
A `Predicate` first says which events count at all (controller-runtime's predicate.Funcs):
`STATUS_ONLY_IGNORED` for a controller's own objects, whose status it writes itself, and
`CREATE_IGNORED` for the children it creates itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from .informer import DeletedFinalStateUnknown, EventHandler
from .reconcile import Request
from .resource import Resource, group_of
from .workqueue import WorkQueue

Json = dict[str, Any]
Mapper = Callable[[Json], Iterable[Request]]


def requests_for_object(obj: Json) -> list[Request]:
    meta = obj.get("metadata", {})
    return [Request(meta.get("namespace", ""), meta["name"])]


def requests_for_owner(owner: Resource) -> Mapper:
    """Map a child to the owner that controls it (ownerReference with controller=true)."""
    def mapper(obj: Json) -> list[Request]:
        meta = obj.get("metadata", {})
        for ref in meta.get("ownerReferences") or []:
            if (ref.get("controller") and ref.get("kind") == owner.kind
                    and group_of(ref.get("apiVersion", "")) == owner.group):
                namespace = meta.get("namespace", "") if owner.namespaced else ""
                return [Request(namespace, ref["name"])]
        return []
    return mapper


@dataclass(frozen=True)
class Predicate:
    """Which events of a source enqueue anything: creates (`create`: all, none, or those of
    objects it holds for), the updates for which `update(old, new)` holds (None: every
    update), and deletes (`delete`)."""

    create: bool | Callable[[Json], bool] = True
    update: Callable[[Json, Json], bool] | None = None
    delete: bool = True


#: Metadata the server moves on a status write.
_MOVED_BY_STATUS_WRITES = frozenset({"resourceVersion", "managedFields"})
#: Top-level fields not compared: with a generation, which stands for the spec, and without.
_NOT_COMPARED = frozenset({"status", "metadata", "spec"})
_NOT_COMPARED_PLAIN = frozenset({"status", "metadata"})
_ABSENT = object()


def changed_beyond_status(old: Json, new: Json) -> bool:
    """Whether an update changed more than the status: the metadata (resourceVersion and
    managedFields aside; `generation` moves with every change of the spec of a resource with
    a status subresource) or any other top-level field but the spec, which the generation
    stands for. An object without a generation compares its spec too."""
    old_meta, new_meta = old.get("metadata") or {}, new.get("metadata") or {}
    if _differ(old_meta, new_meta, _MOVED_BY_STATUS_WRITES):
        return True
    return _differ(old, new, _NOT_COMPARED if "generation" in new_meta else _NOT_COMPARED_PLAIN)


def _differ(old: Json, new: Json, skip: frozenset[str]) -> bool:
    return any(old.get(k, _ABSENT) != new.get(k, _ABSENT)
               for k in old.keys() | new.keys() if k not in skip)


#: Every event.
ALL = Predicate()
#: A controller's own objects: a status write (its own, most of the time) wakes nobody.
STATUS_ONLY_IGNORED = Predicate(update=changed_beyond_status)
#: Children a controller creates: their creation tells it nothing it did not just do; their
#: updates and deletion do.
CREATE_IGNORED = Predicate(create=False)


def enqueue(queue: WorkQueue[Request], mapper: Mapper,
            predicate: Predicate = ALL) -> EventHandler:
    """An EventHandler that adds the mapped Requests of the events `predicate` lets through
    to the queue."""
    def add(obj: Json) -> None:
        for request in mapper(obj):
            queue.add(request)

    def update(old: Json, new: Json) -> None:
        if predicate.update is not None and not predicate.update(old, new):
            return
        for request in {*mapper(old), *mapper(new)}:
            queue.add(request)

    def add_if(obj: Json) -> None:
        if callable(predicate.create) and predicate.create(obj):
            add(obj)

    def delete(obj: Json | DeletedFinalStateUnknown) -> None:
        add(obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj)

    on_add = add_if if callable(predicate.create) else add if predicate.create else None
    return EventHandler(on_add=on_add, on_update=update,
                        on_delete=delete if predicate.delete else None)
