"""Object storage of the local API server: one global resourceVersion, history, watchers.

Objects are plain JSON dicts, stored in their storage version and never mutated once stored
(every write stores a new dict), so readers may hand them out after a shallow look. Every
committed change gets the next resourceVersion and goes to a bounded history that watches
replay from; a watch asking for a version older than the history gets 410 Gone. Indexes
(`storage_indexes`: keys in order per namespace, labels, a pod's spec.nodeName) are updated
with every commit, so lists read one namespace and selectors narrow by an equality first.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from .selectors import LabelSelector
from .storage_indexes import KeyOrder, TermIndex, field_terms, label_terms

Json = dict[str, Any]
#: (group, plural): the storage identity of a resource, shared by its versions.
ResourceKey = tuple[str, str]
#: (namespace, name); namespace is "" for cluster-scoped objects.
ObjectKey = tuple[str, str]

ADDED, MODIFIED, DELETED = "ADDED", "MODIFIED", "DELETED"


@dataclass(frozen=True)
class Change:
    """A committed change: the object after it (before it, for DELETED) and before it."""

    type: str
    resource: ResourceKey
    rv: int
    obj: Json
    old: Json | None
    #: Encoded watch events of this change, shared by all watchers: (type, apiVersion) -> bytes.
    encoded: dict[tuple[str, str], bytes] = field(default_factory=dict, compare=False, repr=False)
    #: The object converted by its CRD's webhook for watchers of another version, shared by
    #: all of them: apiVersion -> the conversion (a future, filled once).
    converted: dict[str, asyncio.Future[Json]] = field(default_factory=dict, compare=False,
                                                       repr=False)


@dataclass(eq=False)
class Watcher:
    """One open watch: its filter and the queue the HTTP layer drains."""

    resource: ResourceKey
    namespace: str | None
    matches: Callable[[Json], bool]
    queue: asyncio.Queue[Change | None] = field(default_factory=asyncio.Queue)
    closed: bool = False
    #: Changes a slow client may have pending before the server drops it, as the watch cache does.
    max_pending: int = 100_000

    def offer(self, change: Change) -> None:
        if self.closed:
            return
        if self.queue.qsize() >= self.max_pending:
            self.close()
            return
        self.queue.put_nowait(change)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.queue.put_nowait(None)


class Storage:
    """In-memory objects with optional write-ahead persistence to a directory."""

    def __init__(self, history_limit: int = 20_000, data_dir: Path | None = None) -> None:
        self.rv = 0
        self._objects: dict[ResourceKey, dict[ObjectKey, Json]] = {}
        self._order: dict[ResourceKey, KeyOrder] = {}
        self._labels = TermIndex(label_terms)
        self._fields = TermIndex(field_terms)
        self._by_uid: dict[str, tuple[ResourceKey, ObjectKey]] = {}
        #: owner uid -> dependents, for the garbage collector.
        self._dependents: dict[str, set[tuple[ResourceKey, ObjectKey]]] = {}
        self._history: deque[Change] = deque(maxlen=history_limit)
        #: Changes at or below this version can no longer be replayed.
        self.compacted_rv = 0
        self._watchers: dict[ResourceKey, set[Watcher]] = {}
        self._listeners: list[Callable[[Change], None]] = []
        self._log: IO[str] | None = None
        if data_dir is not None:
            self._open_log(data_dir)

    # --- reads -----------------------------------------------------------------------------

    def get(self, resource: ResourceKey, namespace: str, name: str) -> Json | None:
        return self._objects.get(resource, {}).get((namespace, name))

    def list_objects(self, resource: ResourceKey, namespace: str | None = None) -> list[Json]:
        """Objects of a resource, in (namespace, name) order like etcd's key order."""
        order = self._order.get(resource)
        if order is None:
            return []
        objs = self._objects[resource]
        return [objs[k] for k in order.keys(namespace)]

    def list_selected(self, resource: ResourceKey, namespace: str | None,
                      selector: LabelSelector) -> list[Json]:
        """The objects `selector` matches, in `list_objects` order, found through the label
        index when the selector has an equality requirement."""
        if selector.nothing:
            return []
        keys = self._labels.candidates(resource, namespace, selector)
        objs = self._objects.get(resource, {})
        candidates = self.list_objects(resource, namespace) if keys is None else [
            objs[k] for k in keys]
        return [o for o in candidates if selector.matches(o["metadata"].get("labels"))]

    def list_by_field(self, resource: ResourceKey, namespace: str | None, path: str,
                      value: str) -> list[Json]:
        """Objects whose indexed field `path` (see `INDEXED_FIELDS`) is `value`, in order."""
        objs = self._objects.get(resource, {})
        return [objs[k] for k in sorted(self._fields.keys(resource, namespace, (path, value)))]

    def count(self, resource: ResourceKey) -> int:
        return len(self._objects.get(resource, {}))

    def by_uid(self, uid: str) -> tuple[ResourceKey, Json] | None:
        ref = self._by_uid.get(uid)
        if ref is None:
            return None
        obj = self._objects.get(ref[0], {}).get(ref[1])
        return (ref[0], obj) if obj is not None else None

    def dependents(self, owner_uid: str) -> list[tuple[ResourceKey, Json]]:
        out: list[tuple[ResourceKey, Json]] = []
        for resource, key in sorted(self._dependents.get(owner_uid, ())):
            obj = self._objects.get(resource, {}).get(key)
            if obj is not None:
                out.append((resource, obj))
        return out

    def resources(self) -> list[ResourceKey]:
        return list(self._objects)

    def objects_in_namespace(self, namespace: str) -> Iterator[tuple[ResourceKey, Json]]:
        for resource, objs in list(self._objects.items()):
            for (ns, _), obj in list(objs.items()):
                if ns == namespace:
                    yield resource, obj

    # --- writes ----------------------------------------------------------------------------

    def next_rv(self) -> int:
        return self.rv + 1

    def put(self, resource: ResourceKey, obj: Json, *, event: str | None = None) -> Change:
        """Store `obj` (its metadata.resourceVersion must already be next_rv())."""
        meta = obj["metadata"]
        key = (meta.get("namespace", ""), meta["name"])
        objs = self._objects.setdefault(resource, {})
        old = objs.get(key)
        objs[key] = obj
        self._index(resource, key, old, obj)
        change = Change(event or (MODIFIED if old is not None else ADDED), resource,
                        int(meta["resourceVersion"]), obj, old)
        self._commit(change)
        return change

    def remove(self, resource: ResourceKey, obj: Json, rv: int) -> Change:
        """Delete an object; the DELETED event carries it with the deletion's version."""
        meta = obj["metadata"]
        key = (meta.get("namespace", ""), meta["name"])
        old = self._objects.get(resource, {}).pop(key, None)
        self._index(resource, key, old, None)
        final = {**obj, "metadata": {**meta, "resourceVersion": str(rv)}}
        change = Change(DELETED, resource, rv, final, old)
        self._commit(change)
        return change

    def _index(self, resource: ResourceKey, key: ObjectKey, old: Json | None,
               new: Json | None) -> None:
        if old is None and new is not None:
            self._order.setdefault(resource, KeyOrder()).add(key)
        elif old is not None and new is None:
            self._order[resource].remove(key)
        self._labels.update(resource, key, old, new)
        self._fields.update(resource, key, old, new)
        if old is not None:
            self._by_uid.pop(old["metadata"].get("uid", ""), None)
            for ref in old["metadata"].get("ownerReferences") or ():
                deps = self._dependents.get(ref.get("uid", ""))
                if deps is not None:
                    deps.discard((resource, key))
                    if not deps:
                        del self._dependents[ref["uid"]]
        if new is not None:
            self._by_uid[new["metadata"]["uid"]] = (resource, key)
            for ref in new["metadata"].get("ownerReferences") or ():
                self._dependents.setdefault(ref.get("uid", ""), set()).add((resource, key))

    def _commit(self, change: Change) -> None:
        self.rv = change.rv
        self._history.append(change)
        if self._log is not None:
            self._write_log(change)
        for watcher in list(self._watchers.get(change.resource, ())):
            watcher.offer(change)
        for listener in self._listeners:
            listener(change)

    # --- watch -----------------------------------------------------------------------------

    def add_listener(self, listener: Callable[[Change], None]) -> None:
        """Call `listener` synchronously after every commit (the GC and controllers use it)."""
        self._listeners.append(listener)

    def oldest_replayable_rv(self) -> int:
        """A watch may resume from any version >= this one."""
        if self._history:
            return max(self._history[0].rv - 1, self.compacted_rv)
        return max(self.compacted_rv, self.rv)

    def watch(self, watcher: Watcher, since: int) -> list[Change] | None:
        """Register a watcher; return the retained changes after `since`, or None if too old."""
        if since < self.oldest_replayable_rv():
            return None
        backlog = [c for c in self._history if c.rv > since and c.resource == watcher.resource]
        self._watchers.setdefault(watcher.resource, set()).add(watcher)
        return backlog

    def unwatch(self, watcher: Watcher) -> None:
        self._watchers.get(watcher.resource, set()).discard(watcher)
        watcher.close()

    def close_all_watches(self) -> int:
        """Fault injection and shutdown: end every open watch stream."""
        n = 0
        for watchers in self._watchers.values():
            for watcher in list(watchers):
                watcher.close()
                n += 1
            watchers.clear()
        return n

    def compact(self) -> None:
        """Forget all history, so any watch resuming from an older version gets 410 Gone."""
        self._history.clear()
        self.compacted_rv = self.rv

    # --- persistence -----------------------------------------------------------------------

    def _open_log(self, data_dir: Path) -> None:
        data_dir.mkdir(parents=True, exist_ok=True)
        snapshot, log = data_dir / "snapshot.json", data_dir / "changes.jsonl"
        if snapshot.exists():
            state = json.loads(snapshot.read_text())
            self.rv = int(state["rv"])
            for entry in state["objects"]:
                self._restore((entry["resource"][0], entry["resource"][1]), entry["object"])
        if log.exists():
            for line in log.read_text().splitlines():
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError:
                    break  # a torn last line from a crash: everything before it is intact
                resource = (rec["resource"][0], rec["resource"][1])
                self.rv = max(self.rv, int(rec["rv"]))
                if rec["type"] == DELETED:
                    meta = rec["object"]["metadata"]
                    key = (meta.get("namespace", ""), meta["name"])
                    old = self._objects.get(resource, {}).pop(key, None)
                    self._index(resource, key, old, None)
                else:
                    self._restore(resource, rec["object"])
        self.compacted_rv = self.rv
        tmp = snapshot.with_suffix(".tmp")
        tmp.write_text(json.dumps({
            "rv": self.rv,
            "objects": [{"resource": list(r), "object": o}
                        for r, objs in self._objects.items() for o in objs.values()],
        }))
        os.replace(tmp, snapshot)
        self._log = log.open("w", encoding="utf-8")

    def _restore(self, resource: ResourceKey, obj: Json) -> None:
        meta = obj["metadata"]
        key = (meta.get("namespace", ""), meta["name"])
        objs = self._objects.setdefault(resource, {})
        old = objs.get(key)
        objs[key] = obj
        self._index(resource, key, old, obj)

    def _write_log(self, change: Change) -> None:
        assert self._log is not None
        self._log.write(json.dumps({"type": change.type, "resource": list(change.resource),
                                    "rv": change.rv, "object": change.obj}) + "\n")
        self._log.flush()

    def close(self) -> None:
        self.close_all_watches()
        if self._log is not None:
            self._log.close()
            self._log = None
