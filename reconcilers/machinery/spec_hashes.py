"""The spec hashes of a parent's children, remembered while what they were rendered from holds.

Every reconcile renders the parent's desired children again and the child writer compares each
with its live object through the hash of its spec (`children.spec_hash`: the spec serialised
with sorted keys and sorted lists of objects, then SHA-256), a twentieth of the operator's CPU
at 1,000 graphs. Most reconciles render exactly what the one before rendered: a child's status
changed, or the parent's own status was written. The desired set is a pure function of the
parent's metadata and spec (never its status) and of a few inputs the reconciler reads
elsewhere (the namespace's pull Secrets, restart tokens, ...), so while those are unchanged
the hashes are too.

The basis compared is small, so that thousands of parents cost little: the parent's uid and
`metadata.generation` (which the API server moves on every change of the spec of a resource
with a status subresource, as ours have), the labels, annotations and owner references the
rendering may read (the cached object's own dicts, not copies: the cache replaces an object on
every event and never changes one in place), and the caller's `inputs`. The hashes are kept in
the order of the desired children (equal bases render equal lists) and interned, so they are
the very strings the cached children's hash annotations hold. A reconciler that leaves an
input out gets stale hashes: `inputs` must name everything besides the parent that its desired
set is rendered from.
"""

from __future__ import annotations

import sys
from typing import Any

Json = dict[str, Any]
#: A hash per desired child, in order; None until computed (or for children not hashed).
Hashes = list[str | None]


def _basis(parent: Json, inputs: object) -> tuple[object, ...] | None:
    meta = parent.get("metadata") or {}
    uid, generation = meta.get("uid"), meta.get("generation")
    if not uid or type(generation) is not int:
        return None  # nothing tells a changed spec from an unchanged one
    return (uid, generation, meta.get("labels"), meta.get("annotations"),
            meta.get("ownerReferences"), inputs)


def intern_hash(value: str) -> str:
    """One string object per hash value, shared with the cache's annotations."""
    return sys.intern(value)


class SpecHashes:
    """Spec hashes of the children of many parents, one entry per parent (by namespace and
    name; a parent recreated under the same name has another uid, so another basis)."""

    def __init__(self, limit: int = 65536) -> None:
        self._entries: dict[tuple[str, str], tuple[tuple[object, ...], Hashes]] = {}
        self._limit = limit

    def for_sync(self, parent: Json, inputs: object, children: int) -> Hashes:
        """The hashes to use and fill while syncing `parent`'s `children` desired objects
        rendered from `inputs`: the last sync's when its basis is equal, else a new table."""
        basis = _basis(parent, inputs)
        if basis is None:
            return [None] * children
        meta = parent["metadata"]
        key = (str(meta.get("namespace", "")), str(meta.get("name", "")))
        entry = self._entries.pop(key, None)
        hashes: Hashes
        if entry is not None and entry[0] == basis and len(entry[1]) == children:
            hashes = entry[1]
        else:
            hashes = [None] * children
            if len(self._entries) >= self._limit:
                del self._entries[next(iter(self._entries))]
        # Today's dicts in the basis: yesterday's can be freed.
        self._entries[key] = (basis, hashes)
        return hashes

    def forget(self, namespace: str, name: str) -> None:
        """Drop what is known of a parent (it is gone)."""
        self._entries.pop((namespace, name), None)

    def __len__(self) -> int:
        return len(self._entries)
