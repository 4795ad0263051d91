"""The indexes `Storage` keeps over its objects, so reads need not scan a whole resource.

`KeyOrder` holds one resource's keys per namespace in sorted lists, so a list comes out in
(namespace, name) order, etcd's key order, without sorting or touching other namespaces.
`TermIndex` maps (resource, term) -> namespace -> names, where the terms of an object are
(key, value) pairs a function picks from it: its labels for label selectors, or a field such
as a pod's `spec.nodeName`, like the watch cache's indexers. Both are updated by `Storage` on
every commit, before watchers and listeners hear of it, so they are never behind a reader.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from .selectors import LabelSelector
from .selectors.label_requirement import DOUBLE_EQUALS, EQUALS, IN

Json = dict[str, Any]
ResourceKey = tuple[str, str]
ObjectKey = tuple[str, str]
#: One indexed (key, value) pair of an object: a label, or a field path and its value.
Term = tuple[str, str]

#: Fields indexed per resource, as kube-apiserver's watch cache indexes them.
INDEXED_FIELDS: dict[ResourceKey, tuple[str, ...]] = {("", "pods"): ("spec.nodeName",)}


def label_terms(resource: ResourceKey, obj: Json) -> Iterable[Term]:
    """The labels of an object."""
    labels = obj["metadata"].get("labels") or {}
    return [(k, v) for k, v in labels.items() if isinstance(v, str)]


def field_terms(resource: ResourceKey, obj: Json) -> Iterable[Term]:
    """The non-empty values of the resource's `INDEXED_FIELDS`."""
    out = []
    for path in INDEXED_FIELDS.get(resource, ()):
        value: Any = obj
        for part in path.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        if isinstance(value, str) and value:
            out.append((path, value))
    return out


class KeyOrder:
    """The keys of one resource, sorted within each namespace, namespaces sorted too."""

    def __init__(self) -> None:
        self._names: dict[str, list[str]] = {}
        self._namespaces: list[str] = []

    def add(self, key: ObjectKey) -> None:
        namespace, name = key
        names = self._names.get(namespace)
        if names is None:
            self._names[namespace] = [name]
            bisect.insort(self._namespaces, namespace)
            return
        i = bisect.bisect_left(names, name)
        if i == len(names) or names[i] != name:
            names.insert(i, name)

    def remove(self, key: ObjectKey) -> None:
        namespace, name = key
        names = self._names.get(namespace)
        if names is None:
            return
        i = bisect.bisect_left(names, name)
        if i < len(names) and names[i] == name:
            del names[i]
        if not names:
            del self._names[namespace]
            del self._namespaces[bisect.bisect_left(self._namespaces, namespace)]

    def keys(self, namespace: str | None = None) -> Iterator[ObjectKey]:
        """Keys in (namespace, name) order, of one namespace or of all."""
        spaces = self._namespaces if namespace is None else (
            [namespace] if namespace in self._names else [])
        for ns in spaces:
            for name in self._names[ns]:
                yield (ns, name)


class TermIndex:
    """(resource, term) -> namespace -> names of the objects that have that term."""

    def __init__(self, terms: Callable[[ResourceKey, Json], Iterable[Term]]) -> None:
        self._terms = terms
        self._names: dict[tuple[ResourceKey, str, str], dict[str, set[str]]] = {}

    def update(self, resource: ResourceKey, key: ObjectKey, old: Json | None,
               new: Json | None) -> None:
        """Re-index the object at `key`, which was `old` and is now `new` (None: absent)."""
        before = set(self._terms(resource, old)) if old is not None else set()
        after = set(self._terms(resource, new)) if new is not None else set()
        namespace, name = key
        for k, v in before - after:
            spaces = self._names.get((resource, k, v))
            if spaces is None:
                continue
            names = spaces.get(namespace)
            if names is not None:
                names.discard(name)
                if not names:
                    del spaces[namespace]
                    if not spaces:
                        del self._names[(resource, k, v)]
        for k, v in after - before:
            self._names.setdefault((resource, k, v), {}).setdefault(namespace, set()).add(name)

    def count(self, resource: ResourceKey, namespace: str | None, term: Term) -> int:
        spaces = self._names.get((resource, *term), {})
        if namespace is not None:
            return len(spaces.get(namespace, ()))
        return sum(len(names) for names in spaces.values())

    def keys(self, resource: ResourceKey, namespace: str | None, term: Term) -> set[ObjectKey]:
        """Keys of the objects of `resource` (in `namespace`, or any) that have `term`."""
        spaces = self._names.get((resource, *term), {})
        if namespace is not None:
            return {(namespace, name) for name in spaces.get(namespace, ())}
        return {(ns, name) for ns, names in spaces.items() for name in names}

    def candidates(self, resource: ResourceKey, namespace: str | None,
                   selector: LabelSelector) -> list[ObjectKey] | None:
        """Sorted keys of a superset of the objects `selector` matches, narrowed by its most
        selective equality (or `in`) requirement; None when it has no such requirement."""
        best: tuple[int, tuple[str, ...], str] | None = None
        for req in selector.requirements:
            if req.operator not in (EQUALS, DOUBLE_EQUALS, IN):
                continue
            n = sum(self.count(resource, namespace, (req.key, v)) for v in set(req.values))
            if best is None or n < best[0]:
                best = (n, req.values, req.key)
        if best is None:
            return None
        _, values, label = best
        found: set[ObjectKey] = set()
        for value in values:
            found |= self.keys(resource, namespace, (label, value))
        return sorted(found)
