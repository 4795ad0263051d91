"""managedFields entries recorded at another API version of the object's kind.

kube-apiserver's field manager keeps each entry at the apiVersion it was written in and never
rewrites its paths. When a write arrives in another version, structured-merge-diff's Updater
converts the write's old and new objects to each entry's version, with the conversion the
object itself takes (a CRD's webhook, through the versionConverter), compares them there, and
takes from that entry what changed or went at its version: a v1alpha1 edit of
``spec.services.X.replicas`` takes ``spec.components[name=X].replicas`` from the manager that
last wrote it in v1beta1. Server-side apply does the same for its conflicts (reported in the
paths and version of the entry they clash with) and prunes at the version the applier last
applied in (`version_prune`).

`Versions` is what the caller supplies: a conversion and the served versions of the kind.
Entries at an apiVersion the kind does not serve are compared at the request's version, as
before (kube-apiserver drops or fails on those; see `hack.localcluster.apply`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ..managed_fields import Entry, Managed
from ..registry import ResourceType
from .comparison import Diff, compare_fields
from .field_types import FieldType, root_type
from .ownership import keep_fn, kept_roots

Json = dict[str, Any]

__all__ = ["Changes", "Versions", "at_other_versions"]

#: What a conversion needs of an object's metadata; an intermediate object of a prune may
#: have lost it (kube-apiserver's restoreObjectMeta puts it back after the webhook).
_IDENTITY = ("name", "namespace")
_NOTHING = Diff()


@dataclass(frozen=True)
class Versions:
    """The other served versions of one custom kind, and the conversion between them."""

    #: The objects (each at its own apiVersion) at the given apiVersion; may raise
    #: `conversion.ConversionPending` (the request is replayed with the answers).
    convert: Callable[[list[Json], str], list[Json]]
    #: The served resource of an apiVersion of the kind; None when it is not served.
    resource: Callable[[str], ResourceType | None]
    #: name and namespace of the object written, for objects a prune stripped of them.
    identity: Json = field(default_factory=dict)

    def at(self, objs: list[Json], api_version: str) -> list[Json]:
        """`objs` at `api_version`; what a prune stripped of their identity stays stripped."""
        pending: list[Json] = []
        stripped: list[list[str]] = []
        for obj in objs:
            meta = obj.get("metadata")
            meta = meta if isinstance(meta, dict) else {}
            missing = [k for k in _IDENTITY if k not in meta and k in self.identity]
            stripped.append(missing)
            if missing or "metadata" not in obj:
                obj = {**obj, "metadata": {**meta, **{k: self.identity[k] for k in missing}}}
            pending.append(obj)
        out = []
        for original, converted, missing in zip(objs, self.convert(pending, api_version),
                                                stripped, strict=True):
            if missing or "metadata" not in original:
                meta = {k: v for k, v in (converted.get("metadata") or {}).items()
                        if k not in missing}
                converted = {**converted, "metadata": meta}
                if not meta and "metadata" not in original:
                    del converted["metadata"]
            out.append(converted)
        return out


def at_other_versions(rt: ResourceType, versions: Versions | None,
                      api_versions: Iterable[str]) -> dict[str, ResourceType]:
    """The served resources of the versions among `api_versions` other than the request's."""
    if versions is None:
        return {}
    out: dict[str, ResourceType] = {}
    for api_version in api_versions:
        if api_version != rt.api_version and api_version not in out:
            other = versions.resource(api_version)
            if other is not None:
                out[api_version] = other
    return out


def version_types(rt: ResourceType, others: dict[str, ResourceType]) -> dict[str, FieldType]:
    """The root field type at the request's version and at each other one."""
    return {rt.api_version: root_type(rt), **{v: root_type(o) for v, o in others.items()}}


class Changes:
    """What one write changed (endpoint-owned paths only), at the request's version and, on
    demand, at each version entries were recorded in."""

    def __init__(self, rt: ResourceType, subresource: str, at_request: Diff,
                 old: Json, new: Json, versions: Versions | None,
                 others: dict[str, ResourceType]) -> None:
        self._rt = rt
        self._subresource = subresource
        self._old = old
        self._new = new
        self._versions = versions
        self._others = others
        self._diffs: dict[str, Diff] = {rt.api_version: at_request}

    def at(self, api_version: str) -> Diff:
        """The diff at `api_version` (the request's own for a version not served)."""
        diff = self._diffs.get(api_version)
        if diff is not None:
            return diff
        other = self._others.get(api_version)
        at_request = self._diffs[self._rt.api_version]
        if other is None or self._versions is None:
            return at_request
        if not (at_request.added or at_request.modified or at_request.removed):
            return at_request  # the same object converts to the same object
        old, new = self._versions.at([self._old, self._new], api_version)
        found = Diff()
        compare_fields(old, new, root_type(other), kept_roots(other, self._subresource), found)
        diff = found.only(keep_fn(other, self._subresource))
        self._diffs[api_version] = diff
        return diff

    def for_entry(self, entry: Entry) -> Diff:
        """The diff at the entry's version; empty, without converting anything, when none of
        its fields is one this endpoint may change (a status write and a spec owner)."""
        other = self._others.get(entry.api_version)
        if other is not None and entry.api_version not in self._diffs:
            keep = keep_fn(other, self._subresource)
            if not any(keep(p) for p in entry.fields):
                return _NOTHING
        return self.at(entry.api_version)

    def taken_from(self, managed: Managed, skip: object = None) -> None:
        """An update's ownership change: every entry but `skip` loses what changed or went at
        its version (structured-merge-diff's update with force)."""
        for mid, entry in managed.items():
            if mid == skip:
                continue
            diff = self.for_entry(entry)
            taken = diff.changed() | diff.removed
            if not entry.fields.isdisjoint(taken):
                entry.fields = entry.fields - taken
