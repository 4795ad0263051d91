"""The informer's in-memory store: objects by namespace/name key, plus secondary indexes.

An index function maps an object to the index values it files under (a namespace, an owner
uid, a label value); `by_index` answers which keys file under one value. Stored objects are
shared with every reader: treat them as read-only, copy before changing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

Json = dict[str, Any]
JsonList = list[Json]
IndexFunc = Callable[[Json], Iterable[str]]

NAMESPACE_INDEX = "namespace"
OWNER_UID_INDEX = "owner-uid"


def object_key(obj: Json) -> str:
    """"namespace/name", or "name" for a cluster-scoped object (client-go's key format)."""
    meta = obj.get("metadata", {})
    namespace = meta.get("namespace")
    return f"{namespace}/{meta['name']}" if namespace else meta["name"]


def split_key(key: str) -> tuple[str, str]:
    namespace, _, name = key.rpartition("/")
    return namespace, name


def index_by_namespace(obj: Json) -> list[str]:
    return [obj.get("metadata", {}).get("namespace", "")]


def index_by_owner_uid(obj: Json) -> list[str]:
    refs = obj.get("metadata", {}).get("ownerReferences") or []
    return [ref["uid"] for ref in refs if ref.get("uid")]


def index_by_label(label: str) -> IndexFunc:
    """Files each object under the value of one label (objects without it are left out)."""
    def index(obj: Json) -> list[str]:
        labels = obj.get("metadata", {}).get("labels") or {}
        return [labels[label]] if label in labels else []
    return index


DEFAULT_INDEXERS: dict[str, IndexFunc] = {
    NAMESPACE_INDEX: index_by_namespace,
    OWNER_UID_INDEX: index_by_owner_uid,
}


class Store:
    """Objects by key with incrementally maintained indexes."""

    def __init__(self, indexers: dict[str, IndexFunc] | None = None) -> None:
        self._items: dict[str, Json] = {}
        self._indexers: dict[str, IndexFunc] = dict(DEFAULT_INDEXERS)
        self._indices: dict[str, dict[str, set[str]]] = {name: {} for name in self._indexers}
        self.add_indexers(indexers or {})

    def add_indexers(self, indexers: dict[str, IndexFunc]) -> None:
        """Add index functions, indexing what is already stored.

        Adding the same function under the same name again is a no-op; a different function
        under a taken name raises ValueError, since one of the two callers would read an
        index that is not the one it asked for.
        """
        for name, fn in indexers.items():
            if name in self._indexers:
                if self._indexers[name] is not fn:
                    raise ValueError(f"index {name!r} already exists with another function"
                                     f" ({_describe(self._indexers[name])}, not"
                                     f" {_describe(fn)})")
                continue
            self._indexers[name] = fn
            self._indices[name] = {}
            for key, obj in self._items.items():
                self._file(name, key, obj)

    # --- writes (the informer's) -----------------------------------------------------------

    def put(self, obj: Json) -> Json | None:
        """Store the object; the previous version, if any."""
        key = object_key(obj)
        old = self._items.get(key)
        self._items[key] = obj
        if old is None:
            self._index(key, obj)
        else:
            self._reindex(key, old, obj)
        return old

    def remove(self, key: str) -> Json | None:
        old = self._items.pop(key, None)
        if old is not None:
            self._unindex(key, old)
        return old

    # --- reads -----------------------------------------------------------------------------

    def get(self, namespace: str | None, name: str) -> Json | None:
        return self._items.get(f"{namespace}/{name}" if namespace else name)

    def get_by_key(self, key: str) -> Json | None:
        return self._items.get(key)

    def list_keys(self) -> list[str]:
        return list(self._items)

    def list(self, namespace: str | None = None) -> JsonList:
        if namespace is None:
            return list(self._items.values())
        return self.by_index(NAMESPACE_INDEX, namespace)

    def by_index(self, index: str, value: str) -> JsonList:
        try:
            keys = self._indices[index].get(value, ())
        except KeyError:
            raise KeyError(f"no index named {index!r}") from None
        return [self._items[k] for k in sorted(keys)]

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: object) -> bool:
        return key in self._items

    # --- internals -------------------------------------------------------------------------

    def _index(self, key: str, obj: Json) -> None:
        for name in self._indexers:
            self._file(name, key, obj)

    def _file(self, name: str, key: str, obj: Json) -> None:
        index = self._indices[name]
        for value in self._indexers[name](obj):
            index.setdefault(value, set()).add(key)

    def _reindex(self, key: str, old: Json, new: Json) -> None:
        # Most updates (a status, a resourceVersion) leave every index value as it was: the
        # sets are touched only where a value came or went.
        for name, fn in self._indexers.items():
            before, after = list(fn(old)), list(fn(new))
            if before == after:
                continue
            index = self._indices[name]
            for value in set(before).difference(after):
                keys = index.get(value)
                if keys is not None:
                    keys.discard(key)
                    if not keys:
                        del index[value]
            for value in after:
                index.setdefault(value, set()).add(key)

    def _unindex(self, key: str, obj: Json) -> None:
        for name, fn in self._indexers.items():
            index = self._indices[name]
            for value in fn(obj):
                keys = index.get(value)
                if keys is not None:
                    keys.discard(key)
                    if not keys:
                        del index[value]


def _describe(fn: IndexFunc) -> str:
    return str(getattr(fn, "__qualname__", None) or repr(fn))
