"""Child by child, what the child writer would change in a live cluster: the writer's own
rules (`reconcilers.machinery.children`) read without writing.

An owned child is `created` when missing, `changed` when its spec hash, its labels and
annotations, or a hand edit since our last write say the writer would update it, and
`deleted` when an owned object of a pruned kind is no longer desired. A changed object is shown
as the API server would store it: the update is sent as a server-side dry run, so server
defaults do not show as changes. A name taken by an object the graph does not own is a
`conflict` (the reconcile would fail on it).
"""

from __future__ import annotations

import copy
import difflib
from dataclasses import dataclass
from typing import Any

import yaml

from api.conversion.payloads import PAYLOAD_ANNOTATIONS
from backends.children import Child, DesiredChildren, Write
from controller.client import KubeClient
from controller.errors import NotFound
from controller.resource import Resource
from reconcilers.machinery import applied_metadata
from reconcilers.machinery.applied_metadata import APPLIED_KEYS_ANNOTATION
from reconcilers.machinery.children import (
    GENERATION_ANNOTATION,
    HASH_ANNOTATION,
    is_owned_by,
    needs_update,
    spec_hash,
)
from reconcilers.machinery.resources import resource_for

Json = dict[str, Any]

__all__ = ["CHANGED", "CONFLICT", "CREATED", "DELETED", "Change", "changes", "manifest_yaml",
           "unified"]

CREATED, CHANGED, DELETED, CONFLICT = "created", "changed", "deleted", "conflict"
_NOT_SPEC = ("metadata", "apiVersion", "kind", "status")
_OWN = frozenset({HASH_ANNOTATION, GENERATION_ANNOTATION, APPLIED_KEYS_ANNOTATION,
                  *PAYLOAD_ANNOTATIONS})
_SERVER_METADATA = ("managedFields", "resourceVersion", "uid", "creationTimestamp",
                    "generation", "selfLink")


@dataclass(frozen=True)
class Change:
    """One child that applying would change: what happens to it, and the YAML diff (or, for
    a created or deleted object, its YAML)."""

    kind: str
    name: str
    action: str
    text: str


async def changes(client: KubeClient, parent: Json | None, desired: DesiredChildren,
                  namespace: str) -> list[Change]:
    """The children of `parent` (the live graph, None when it does not exist yet) that the
    writer would create, change or delete to reach `desired`."""
    out = []
    for child in desired.children:
        change = await _child(client, parent, child)
        if change is not None:
            out.append(change)
    if parent is None:
        return out
    wanted = {(c.kind, c.name) for c in desired.children}
    uid = parent["metadata"]["uid"]
    for kind in desired.pruned:
        resource = resource_for(kind)
        listing = await client.list(resource, namespace)
        for obj in sorted(listing.get("items") or [], key=lambda o: o["metadata"]["name"]):
            owned = any(r.get("uid") == uid and r.get("controller")
                        for r in obj["metadata"].get("ownerReferences") or [])
            if owned and (kind, obj["metadata"]["name"]) not in wanted \
                    and not obj["metadata"].get("deletionTimestamp"):
                obj.setdefault("apiVersion", kind[0])
                obj.setdefault("kind", kind[1])
                out.append(Change(kind[1], obj["metadata"]["name"], DELETED,
                                  manifest_yaml(_clean(obj))))
    return out


async def _child(client: KubeClient, parent: Json | None, child: Child) -> Change | None:
    resource = resource_for(child.kind)
    namespace = child.obj["metadata"].get("namespace")
    try:
        live: Json | None = await client.get(resource, namespace, child.name)
    except NotFound:
        live = None
    kind = child.obj["kind"]
    if child.write in (Write.REPLICAS, Write.SCALE):
        # Only spec.replicas of an object someone made; absent, it is left alone.
        if live is None or (live.get("spec") or {}).get("replicas") == \
                child.obj["spec"]["replicas"]:
            return None
        after = copy.deepcopy(live)
        after.setdefault("spec", {})["replicas"] = child.obj["spec"]["replicas"]
        return Change(kind, child.name, CHANGED, unified(kind, child.name, live, after))
    if live is None:
        return Change(kind, child.name, CREATED, manifest_yaml(_clean(child.obj)))
    if child.write is Write.CREATE_ONLY:
        return None
    if child.write is Write.UNOWNED:
        return await _unowned(client, resource, child, live)
    if parent is None or not is_owned_by(live, parent):
        return Change(kind, child.name, CONFLICT,
                      f"{kind} {child.name} exists and is not owned by the graph\n")
    if not needs_update(live, child.obj, spec_hash(child.obj)):
        return None
    after = await _dry_run_update(client, resource, _updated(live, child.obj))
    return Change(kind, child.name, CHANGED, unified(kind, child.name, live, after))


async def _unowned(client: KubeClient, resource: Resource, child: Child,
                   live: Json) -> Change | None:
    """Shared objects: fields restored on drift; a copy compared by its digest label."""
    kind = child.obj["kind"]
    fields = {k: v for k, v in child.obj.items() if k not in _NOT_SPEC}
    if child.drift_label is not None:
        have = (live["metadata"].get("labels") or {}).get(child.drift_label)
        want = (child.obj["metadata"].get("labels") or {}).get(child.drift_label)
        return None if have == want else Change(
            kind, child.name, CHANGED, f"{kind} {child.name}: its content would be copied again\n")
    if all(live.get(k) == v for k, v in fields.items()):
        return None
    after = await _dry_run_update(client, resource, {**live, **fields})
    return Change(kind, child.name, CHANGED, unified(kind, child.name, live, after))


def _updated(live: Json, desired: Json) -> Json:
    """The object the writer would send: our fields over the live object, metadata merged."""
    updated = copy.deepcopy(live)
    for key, value in desired.items():
        if key not in _NOT_SPEC:
            updated[key] = copy.deepcopy(value)
    meta, want = updated["metadata"], desired["metadata"]
    meta["labels"] = applied_metadata.merged(meta, want, "labels")
    annotations = applied_metadata.merged(meta, want, "annotations")
    annotations[APPLIED_KEYS_ANNOTATION] = applied_metadata.record(want, _OWN)
    annotations[HASH_ANNOTATION] = spec_hash(desired)
    meta["annotations"] = annotations
    return updated


async def _dry_run_update(client: KubeClient, resource: Resource, obj: Json) -> Json:
    meta = obj["metadata"]
    return await client.request("PUT", resource.path(meta.get("namespace"), meta["name"]),
                                query=[("dryRun", "All")], body=obj)


def unified(kind: str, name: str, before: Json, after: Json) -> str:
    """A unified diff of two objects' YAML, server bookkeeping left out."""
    lines = difflib.unified_diff(manifest_yaml(_clean(before)).splitlines(keepends=True),
                                 manifest_yaml(_clean(after)).splitlines(keepends=True),
                                 fromfile=f"live/{kind}/{name}", tofile=f"applied/{kind}/{name}")
    return "".join(lines)


def _clean(obj: Json) -> Json:
    out = {k: v for k, v in obj.items() if k != "status"}
    meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k not in _SERVER_METADATA}
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if k not in _OWN}
    if annotations:
        meta["annotations"] = annotations
    else:
        meta.pop("annotations", None)
    out["metadata"] = meta
    return out


class _Dumper(yaml.SafeDumper):
    """Repeated values written out in full, never as anchors."""

    def ignore_aliases(self, data: object) -> bool:
        return True


def manifest_yaml(obj: Json) -> str:
    """An object as block YAML, keys sorted."""
    return yaml.dump(obj, Dumper=_Dumper, sort_keys=True, width=1 << 16, allow_unicode=True)
