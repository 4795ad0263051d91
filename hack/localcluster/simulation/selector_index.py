"""Objects indexed by their equality selector (a Service's `spec.selector`), to answer
"which of them select these labels?" without trying every selector.

Selectors are grouped by their key set; for labels, each key set present in the labels is
looked up once by the labels' values for those keys, so a lookup costs the number of distinct
key sets in the namespace, not the number of selectors.
"""

from __future__ import annotations

from collections.abc import Mapping

ObjectKey = tuple[str, str]
_Shape = tuple[str, ...]


class SelectorIndex:
    """(namespace, name) -> equality selector, and the reverse lookup from labels."""

    def __init__(self) -> None:
        self._selector: dict[ObjectKey, tuple[_Shape, tuple[str, ...]]] = {}
        #: namespace -> key set -> values for those keys -> names
        self._names: dict[str, dict[_Shape, dict[tuple[str, ...], set[str]]]] = {}

    def put(self, key: ObjectKey, selector: Mapping[str, str] | None) -> None:
        """Index `key` under `selector`; an empty or absent selector selects nothing, and so
        does one with a value that is not a string (no label value can equal it)."""
        entry = None
        if selector and all(isinstance(v, str) for v in selector.values()):
            shape = tuple(sorted(selector))
            entry = (shape, tuple(selector[k] for k in shape))
        current = self._selector.get(key)
        if current == entry:
            return
        if current is not None:
            self._drop(key, current)
        if entry is not None:
            self._selector[key] = entry
            namespace, name = key
            (self._names.setdefault(namespace, {}).setdefault(entry[0], {})
             .setdefault(entry[1], set()).add(name))

    def remove(self, key: ObjectKey) -> None:
        current = self._selector.get(key)
        if current is not None:
            self._drop(key, current)

    def _drop(self, key: ObjectKey, entry: tuple[_Shape, tuple[str, ...]]) -> None:
        del self._selector[key]
        namespace, name = key
        shapes = self._names[namespace]
        by_values = shapes[entry[0]]
        names = by_values[entry[1]]
        names.discard(name)
        if not names:
            del by_values[entry[1]]
            if not by_values:
                del shapes[entry[0]]
                if not shapes:
                    del self._names[namespace]

    def selecting(self, namespace: str, labels: Mapping[str, str]) -> set[str]:
        """Names of the objects in `namespace` whose selector matches `labels`."""
        out: set[str] = set()
        for shape, by_values in self._names.get(namespace, {}).items():
            if all(k in labels for k in shape):
                out |= by_values.get(tuple(labels[k] for k in shape), set())
        return out
