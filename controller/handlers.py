"""Event handlers that turn informer events into work-queue keys.

A mapper says which Requests an object concerns: itself (`requests_for_object`), its
controlling owner (`requests_for_owner`), or anything a watch's own function decides. On an
update both the old and the new object are mapped, so a child that changes owner wakes both.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
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


def enqueue(queue: WorkQueue[Request], mapper: Mapper) -> EventHandler:
    """An EventHandler that adds the mapped Requests of every event to the queue."""
    def add(obj: Json) -> None:
        for request in mapper(obj):
            queue.add(request)

    def update(old: Json, new: Json) -> None:
        for request in {*mapper(old), *mapper(new)}:
            queue.add(request)

    def delete(obj: Json | DeletedFinalStateUnknown) -> None:
        add(obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj)

    return EventHandler(on_add=add, on_update=update, on_delete=delete)
