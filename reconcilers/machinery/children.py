"""The one writer of children: creates, updates, scales and prunes, writing only when needed.

A reconciler hands `ChildWriter.sync` the parent's whole desired set (`backends.children`):
each object is written as its `Write` says, then every owned object of the pruned kinds that is
no longer desired is deleted. One ownership rule holds throughout: an object is the parent's
when it carries a controller reference to the parent's uid; anything else is neither updated,
adopted nor deleted.

An owned child is created when missing (with that controller reference) and updated only when
our desired spec differs from what we last applied or someone else changed the spec since, or
its labels and annotations differ from ours. The drift markers are the original operator's
annotations (`nvidia.com/last-applied-hash` and `nvidia.com/last-applied-generation`), so
objects made by either operator are recognised by the other. Labels and annotations are merged
with what others set on the child, and a key we set before and no longer want is removed
(`applied_metadata`). A child of our kinds (a graph's DCD) is built as the hub, as it is
stored; its spec hash is the same in either version (`api.conversion.hash_basis`), and the
conversion's payload annotations it carries are never compared nor recorded as keys we set,
so a child written by an older operator (built as `v1alpha1`, written through a conversion)
is found unchanged.
"""

from __future__ import annotations

import contextlib
import copy
import enum
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

import structlog

from api.conversion import HUB, SPOKE, VERSIONS
from api.conversion.hash_basis import hash_basis
from api.conversion.payloads import PAYLOAD_ANNOTATIONS
from backends.children import Child, DesiredChildren, Kind, Write
from controller.cache import Cache
from controller.client import KubeClient
from controller.errors import AlreadyExists, ApiError, NotFound, TerminalError
from controller.events import EventRecorder
from controller.resource import Resource
from controller.store import OWNER_UID_INDEX
from reconcilers.machinery import applied_metadata
from reconcilers.machinery.applied_metadata import APPLIED_KEYS_ANNOTATION
from reconcilers.machinery.availability import RECONCILE_FAILED
from reconcilers.machinery.resources import resource_for
from reconcilers.machinery.spec_hashes import Hashes, SpecHashes, intern_hash

Json = dict[str, Any]

HASH_ANNOTATION = "nvidia.com/last-applied-hash"
#: What marks an UNOWNED copy as ours (see `Child.drift_label`).
MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"
GENERATION_ANNOTATION = "nvidia.com/last-applied-generation"
#: Our bookkeeping annotations on a child, never counted among the keys we set for the parent.
#: The conversion's payloads come with the wire form of a child of ours, never from the
#: builders: recorded as ours, they would look undesired to the next reconcile, for ever.
_OWN_ANNOTATIONS = frozenset({HASH_ANNOTATION, GENERATION_ANNOTATION, APPLIED_KEYS_ANNOTATION,
                              *PAYLOAD_ANNOTATIONS})
#: Parts of a child we never copy from the desired object on update (status: the server's).
_NOT_SPEC_FIELDS = ("metadata", "apiVersion", "kind", "status")
log = structlog.get_logger("reconcilers.children")


_REFUSED_DETAIL_LIMIT = 2000
#: `ChildWriter.sync` without `inputs`: nothing is known to keep the hashes valid.
_UNKNOWN = object()


def refused_message(obj: Json, err: ApiError) -> str:
    """What the API server refused in a child, field by field, from its Status causes."""
    causes = [c for c in (err.status.get("details") or {}).get("causes") or []
              if isinstance(c, dict)]
    parts = [f"{c['field']}: {c.get('message', '')}" if c.get("field") else
             str(c.get("message", "")) for c in causes]
    detail = "; ".join(parts) if parts else (err.message or err.reason)
    if len(detail) > _REFUSED_DETAIL_LIMIT:  # the server quotes values whole, however long
        detail = detail[:_REFUSED_DETAIL_LIMIT] + f"... ({len(detail)} characters)"
    name = (obj.get("metadata") or {}).get("name", "")
    return f'{obj.get("kind", "object")} "{name}" refused by the API server ({err.code}): {detail}'


class Outcome(enum.Enum):
    """What `apply` or `delete` did."""

    CREATED = "created"
    UPDATED = "updated"
    UNCHANGED = "unchanged"
    DELETED = "deleted"
    ABSENT = "absent"
    #: An object of that name exists and is not ours: we neither adopt nor overwrite it.
    NOT_OWNED = "not-owned"
    #: An object of that name exists, is not ours, and serves as the desired one.
    SHARED = "shared"


@dataclass(frozen=True)
class Applied:
    """The outcome and the live object after it (None when absent or deleted)."""

    outcome: Outcome
    live: Json | None


def spec_hash(obj: Json) -> str:
    """SHA-256 of the desired `.spec` in canonical form (objects without a spec: constant).

    An object of our kinds is hashed over its `v1alpha1` spec (`api.conversion.hash_basis`),
    so one desired child has one hash in either version: the one children written before the
    hub move carry."""
    spec = hash_basis(obj) if obj.get("apiVersion") in VERSIONS else obj.get("spec")
    canonical = json.dumps(_canonical(spec) if spec is not None else None,
                           sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


_CONTAINERS = (dict, list)


def _canonical(value: Any) -> Any:
    """Lists of objects sorted by `name` (or their first key), as the original hashes them.

    Copy on write: a dict or list in which nothing needs sorting, at any depth, is returned
    as it is (the result is only serialised), so a spec is rebuilt only along the paths to
    its lists of objects."""
    if isinstance(value, dict):
        out: Json | None = None
        for key, item in value.items():
            if isinstance(item, _CONTAINERS):
                canonical = _canonical(item)
                if canonical is not item:
                    if out is None:
                        out = dict(value)
                    out[key] = canonical
        return value if out is None else out
    if isinstance(value, list):
        if not value:
            return value
        items = [_canonical(v) if isinstance(v, _CONTAINERS) else v for v in value]
        if all(isinstance(v, dict) for v in items):
            return sorted(items, key=_sort_key)
        if any(c is not v for c, v in zip(items, value, strict=True)):
            return items
        return value
    return value


def _sort_key(item: Json) -> str:
    if "name" in item:
        return str(item["name"])
    if not item:
        return ""
    first = sorted(item)[0]
    return f"{first}={json.dumps(item[first], sort_keys=True)}"


def owner_reference(parent: Json) -> Json:
    """The controller reference to `parent`. A parent of ours read as the hub is named in
    `v1alpha1`, as every child made before the hub move names it: the garbage collector and
    the owner mappers go by uid and group, and children stay as they were."""
    api_version = parent["apiVersion"]
    return {
        "apiVersion": SPOKE if api_version == HUB else api_version,
        "kind": parent["kind"],
        "name": parent["metadata"]["name"],
        "uid": parent["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def is_owned_by(obj: Json, parent: Json) -> bool:
    uid = parent["metadata"]["uid"]
    return any(ref.get("uid") == uid and ref.get("controller")
               for ref in obj["metadata"].get("ownerReferences") or [])


def _subset(desired: Any, live: Any) -> bool:
    """Whether every field we set has our value in the live object (server defaults aside)."""
    if isinstance(desired, dict):
        return isinstance(live, dict) and all(
            k in live and _subset(v, live[k]) for k, v in desired.items())
    if isinstance(desired, list):
        return isinstance(live, list) and len(desired) == len(live) and all(
            _subset(d, lv) for d, lv in zip(desired, live, strict=True))
    return bool(desired == live)


@dataclass
class Synced:
    """What `ChildWriter.sync` left: the live children by (kind, name), the conflicts, what
    was pruned, and the required objects that are missing (nothing was written then)."""

    live: dict[tuple[Kind, str], Json | None] = field(default_factory=dict)
    #: "Kind name" of desired objects whose name is taken by an object we do not own.
    not_owned: list[str] = field(default_factory=list)
    pruned: dict[Kind, list[Json]] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)

    def get(self, kind: Kind, name: str) -> Json | None:
        return self.live.get((kind, name))

    def not_owned_message(self, owner_kind: str) -> str:
        return (f"{', '.join(self.not_owned)} already exist(s) and is not owned by this "
                f"{owner_kind}")


class ChildWriter:
    """Applies desired children of one parent; events go to the parent's recorder."""

    def __init__(self, client: KubeClient, cache: Cache, recorder: EventRecorder) -> None:
        self.client = client
        self.cache = cache
        self.recorder = recorder
        self.hashes = SpecHashes()

    async def _live(self, resource: Resource, namespace: str | None, name: str) -> Json | None:
        return await self.cache.get_or_none(resource, namespace, name)

    async def sync(self, parent: Json, desired: DesiredChildren, *,
                   inputs: object = _UNKNOWN) -> Synced:
        """Bring the parent's children to the desired set, then prune the rest.

        `inputs`: everything besides the parent's metadata and spec that `desired` was
        rendered from (a value equal exactly when the rendering would be); given, the spec
        hashes of the last sync of the parent from an equal basis are used again
        (`spec_hashes`). Not given, every hash is computed."""
        count = len(desired.children)
        hashes: Hashes = ([None] * count if inputs is _UNKNOWN
                          else self.hashes.for_sync(parent, inputs, count))
        synced = Synced()
        for ref in desired.required:
            resource = resource_for((ref.api_version, ref.kind))
            if await self.cache.get_or_none(resource, _namespace(parent), ref.name) is None:
                synced.missing.append(f"{ref} not found")
        if synced.missing:
            return synced
        for index, child in enumerate(desired.children):
            try:
                applied = await self._write(parent, child, hashes, index)
            except ApiError as err:
                if err.code not in (400, 422):
                    raise
                # The server refuses what the spec renders to: only a new spec can help.
                raise TerminalError(refused_message(child.obj, err),
                                    reason=RECONCILE_FAILED) from None
            synced.live[(child.kind, child.name)] = (
                applied.live if applied.outcome is not Outcome.NOT_OWNED else None)
            if applied.outcome is Outcome.NOT_OWNED:
                synced.not_owned.append(f"{child.obj['kind']} {child.name}")
        wanted = {(c.kind, c.name) for c in desired.children}
        for kind in desired.pruned:
            synced.pruned[kind] = await self._prune(parent, kind, wanted)
        return synced

    def forget(self, namespace: str, name: str) -> None:
        """The parent is gone: drop the hashes remembered for it."""
        self.hashes.forget(namespace, name)

    async def _write(self, parent: Json, child: Child, hashes: Hashes, index: int) -> Applied:
        resource = resource_for(child.kind)
        if child.write is Write.SCALE:
            return await self._scale(parent, resource, child.obj)
        if child.write is Write.UNOWNED:
            return await self._apply_unowned(parent, resource, child)
        if child.write is Write.REPLICAS:
            return await self._set_replicas(parent, resource, child.obj)
        live = await self._live(resource, _namespace(child.obj), child.name)
        if live is not None and not is_owned_by(live, parent):
            shared = child.shared_labels is not None and _carries(live, child.obj,
                                                                  child.shared_labels)
            return Applied(Outcome.SHARED if shared else Outcome.NOT_OWNED, live)
        if live is not None and child.write is Write.CREATE_ONLY:
            return Applied(Outcome.UNCHANGED, live)
        wanted_hash = hashes[index]
        if wanted_hash is None:
            wanted_hash = hashes[index] = intern_hash(spec_hash(child.obj))
        if child.immutable and live is not None and needs_update(live, child.obj, wanted_hash):
            # The server changes none of these fields (a ResourceClaimTemplate's spec): the
            # child is made anew; what was made from the old one keeps what it has.
            await self.delete(parent, resource, _namespace(child.obj), child.name)
            return await self._create(parent, resource, child.obj, wanted_hash)
        return await self.apply(parent, resource, child.obj, wanted_hash)

    async def _prune(self, parent: Json, kind: Kind, wanted: set[tuple[Kind, str]]
                     ) -> list[Json]:
        resource = resource_for(kind)
        # The owner index, not a scan: a namespace may hold thousands of parents.
        owned = await self.cache.by_index(resource, OWNER_UID_INDEX, parent["metadata"]["uid"])
        deleted = []
        for child in sorted(owned, key=lambda o: str(o["metadata"]["name"])):
            name = str(child["metadata"]["name"])
            if (kind, name) in wanted:
                continue
            applied = await self.delete(parent, resource, child["metadata"].get("namespace"),
                                        name)
            if applied.outcome is Outcome.DELETED:
                deleted.append(child)
        return deleted

    async def _scale(self, parent: Json, resource: Resource, desired: Json) -> Applied:
        """Write spec.replicas through the scale subresource of an object someone else
        creates; absent, it is left for its creation to wake us."""
        live = await self._live(resource, _namespace(desired), desired["metadata"]["name"])
        if live is None:
            return Applied(Outcome.UNCHANGED, None)
        return await self._write_replicas(parent, resource, desired, live, subresource="scale")

    async def _set_replicas(self, parent: Json, resource: Resource, desired: Json) -> Applied:
        """Write only spec.replicas of an owned object kept as it is; absent or not ours, it
        is left alone."""
        live = await self._live(resource, _namespace(desired), desired["metadata"]["name"])
        if live is None:
            return Applied(Outcome.ABSENT, None)
        if not is_owned_by(live, parent):
            return Applied(Outcome.NOT_OWNED, live)
        return await self._write_replicas(parent, resource, desired, live)

    async def _write_replicas(self, parent: Json, resource: Resource, desired: Json,
                              live: Json, subresource: str = "") -> Applied:
        """Patch spec.replicas when it differs (the object itself carrying the resourceVersion
        read: a change meanwhile is a 409 and a new reconcile); an event and a log line."""
        namespace, name = _namespace(desired), str(desired["metadata"]["name"])
        replicas = desired["spec"]["replicas"]
        if (live.get("spec") or {}).get("replicas") == replicas:
            return Applied(Outcome.UNCHANGED, live)
        patch: Json = {"spec": {"replicas": replicas}}
        if not subresource:
            patch["metadata"] = {"resourceVersion": live["metadata"]["resourceVersion"]}
        try:
            written = await self.client.patch(resource, namespace, name, patch,
                                              subresource=subresource)
        except NotFound:
            return Applied(Outcome.ABSENT, None)
        await self.recorder.normal(parent, f"Scale{resource.kind}",
                                   f"Scaled {resource.kind} {name} to {replicas} replicas")
        log.info("child scaled", kind=resource.kind, child=name, replicas=replicas)
        return Applied(Outcome.UPDATED, live if subresource else written)

    async def _apply_unowned(self, parent: Json, resource: Resource, child: Child) -> Applied:
        """An object shared by every parent of a namespace: created without an owner, its
        fields brought back when they drift; an immutable field that drifted recreates it."""
        desired, name = child.obj, child.name
        namespace = _namespace(desired)
        live = await self._live(resource, namespace, name)
        fields = {k: v for k, v in desired.items() if k not in _NOT_SPEC_FIELDS}
        if live is not None and child.drift_label is not None:
            return await self._apply_copy(parent, resource, child, live, fields)
        if live is not None and any(live.get(k) != fields[k] for k in child.immutable
                                    if k in fields):
            with contextlib.suppress(NotFound):
                await self.client.delete(resource, namespace, name)
            live = None
        if live is None:
            try:
                created = await self.client.create(resource, desired)
            except AlreadyExists:
                return Applied(Outcome.UNCHANGED, None)
            await self._created(parent, resource, name)
            return Applied(Outcome.CREATED, created)
        if all(live.get(k) == v for k, v in fields.items()):
            return Applied(Outcome.UNCHANGED, live)
        updated = await self.client.update(resource, {**live, **fields})
        await self._updated(parent, resource, name)
        return Applied(Outcome.UPDATED, updated)

    async def _apply_copy(self, parent: Json, resource: Resource, child: Child, live: Json,
                          fields: Json) -> Applied:
        """An existing copy whose content the cache does not hold: its digest label tells
        whether it drifted; then it is read whole and rewritten. Not ours: used as it is."""
        if not _carries(live, child.obj, (MANAGED_BY_LABEL,)):
            return Applied(Outcome.SHARED, live)
        assert child.drift_label is not None
        if _carries(live, child.obj, (child.drift_label,)):
            return Applied(Outcome.UNCHANGED, live)
        meta = child.obj["metadata"]
        fresh = await self.client.get(resource, meta.get("namespace"), child.name)
        fresh["metadata"]["labels"] = {**(fresh["metadata"].get("labels") or {}),
                                       **(meta.get("labels") or {})}
        updated = await self.client.update(resource, {**fresh, **fields})
        await self._updated(parent, resource, child.name)
        return Applied(Outcome.UPDATED, updated)

    async def apply(self, parent: Json, resource: Resource, desired: Json,
                    wanted_hash: str | None = None) -> Applied:
        """Create or update one child so that it matches `desired` (whose `spec_hash` is
        `wanted_hash`, computed here when not given)."""
        meta = desired["metadata"]
        namespace, name = meta.get("namespace"), meta["name"]
        live = await self._live(resource, namespace, name)
        if wanted_hash is None:
            wanted_hash = spec_hash(desired)
        if live is None:
            return await self._create(parent, resource, desired, wanted_hash)
        if not is_owned_by(live, parent):
            return Applied(Outcome.NOT_OWNED, live)
        if not needs_update(live, desired, wanted_hash):
            return Applied(Outcome.UNCHANGED, live)
        updated = copy.deepcopy(live)
        for key, value in desired.items():
            if key not in _NOT_SPEC_FIELDS:
                updated[key] = copy.deepcopy(value)
        umeta = updated["metadata"]
        umeta["labels"] = applied_metadata.merged(umeta, meta, "labels")
        annotations = applied_metadata.merged(umeta, meta, "annotations")
        annotations[APPLIED_KEYS_ANNOTATION] = applied_metadata.record(meta, _OWN_ANNOTATIONS)
        annotations[HASH_ANNOTATION] = wanted_hash
        annotations[GENERATION_ANNOTATION] = str(int(umeta.get("generation", 0)) + 1)
        umeta["annotations"] = annotations
        result = await self._record_generation(
            resource, await self.client.update(resource, updated))
        await self._updated(parent, resource, name)
        return Applied(Outcome.UPDATED, result)

    async def _record_generation(self, resource: Resource, live: Json) -> Json:
        """Make the generation annotation match the generation the object really has.

        An update that leaves the spec as the server had it (a field set to its default,
        say) does not move `generation`; the "+1" we wrote would then hide the next hand
        edit, which brings generation up to exactly that value. Rare, so a second write."""
        meta = live["metadata"]
        generation = meta.get("generation")
        annotations = meta.get("annotations") or {}
        if generation is None or annotations.get(GENERATION_ANNOTATION) == str(generation):
            return live
        patch = {"metadata": {"resourceVersion": meta["resourceVersion"],
                              "annotations": {GENERATION_ANNOTATION: str(generation)}}}
        patched: Json = await self.client.patch(resource, meta.get("namespace"), meta["name"],
                                                patch)
        return patched

    async def _create(self, parent: Json, resource: Resource, desired: Json,
                      wanted_hash: str) -> Applied:
        # The desired object is built afresh for this reconcile: only the metadata we add to
        # is copied.
        meta = {**desired["metadata"]}
        obj = {**desired, "metadata": meta}
        meta["ownerReferences"] = [owner_reference(parent)]
        meta["annotations"] = {**(meta.get("annotations") or {}),
                               APPLIED_KEYS_ANNOTATION: applied_metadata.record(
                                   desired["metadata"], _OWN_ANNOTATIONS),
                               HASH_ANNOTATION: wanted_hash, GENERATION_ANNOTATION: "1"}
        try:
            created = await self.client.create(resource, obj)
        except AlreadyExists:
            # The cache is behind a create of ours (or someone else's object appeared):
            # the next reconcile sees it and decides.
            live = await self._live(resource, meta.get("namespace"), meta["name"])
            return Applied(Outcome.UNCHANGED, live)
        await self._created(parent, resource, meta["name"])
        return Applied(Outcome.CREATED, created)

    async def delete(self, parent: Json, resource: Resource, namespace: str | None,
                     name: str) -> Applied:
        """Delete a child we own; anything else of that name is left alone."""
        live = await self._live(resource, namespace, name)
        if live is None or live["metadata"].get("deletionTimestamp"):
            return Applied(Outcome.ABSENT, None)
        if not is_owned_by(live, parent):
            return Applied(Outcome.NOT_OWNED, live)
        try:
            await self.client.delete(resource, namespace, name, propagation_policy="Background")
        except NotFound:
            return Applied(Outcome.ABSENT, None)
        await self.recorder.normal(parent, f"Delete{resource.kind}",
                                   f"Deleted {resource.kind} {name}")
        log.info("child pruned", kind=resource.kind, child=name)
        return Applied(Outcome.DELETED, None)

    async def _created(self, parent: Json, resource: Resource, name: str) -> None:
        await self.recorder.normal(parent, f"Create{resource.kind}",
                                   f"Created {resource.kind} {name}")
        log.info("child created", kind=resource.kind, child=name)

    async def _updated(self, parent: Json, resource: Resource, name: str) -> None:
        await self.recorder.normal(parent, f"Update{resource.kind}",
                                   f"Updated {resource.kind} {name}")
        log.info("child updated", kind=resource.kind, child=name)


def needs_update(live: Json, desired: Json, wanted_hash: str) -> bool:
    """Whether an owned child must be written: our spec hash moved, our labels or annotations
    drifted, or someone else changed its spec since we wrote it (a kind without a generation:
    a field we set differs)."""
    annotations = live["metadata"].get("annotations") or {}
    if annotations.get(HASH_ANNOTATION) != wanted_hash:
        return True
    if applied_metadata.drifted(live["metadata"], _compared(desired["metadata"])):
        return True
    generation = live["metadata"].get("generation")
    if generation is None:
        # Kinds without a generation (Services, ConfigMaps...): compare the fields we set.
        return not all(_subset(v, live.get(k)) for k, v in desired.items()
                       if k not in _NOT_SPEC_FIELDS)
    try:
        return int(generation) > int(annotations.get(GENERATION_ANNOTATION, ""))
    except ValueError:
        return True


def _compared(meta: Json) -> Json:
    """The desired metadata a live child is compared with: the conversion's payloads of a
    child built as the hub left out. They follow from its spec (whose hash is compared), and
    their bytes need not be those an older operator's conversion wrote."""
    annotations = meta.get("annotations")
    if not annotations or PAYLOAD_ANNOTATIONS.isdisjoint(annotations):
        return meta
    kept = {k: v for k, v in annotations.items() if k not in PAYLOAD_ANNOTATIONS}
    return {**meta, "annotations": kept}


def _namespace(obj: Json) -> str | None:
    namespace = obj["metadata"].get("namespace")
    return str(namespace) if namespace is not None else None


def _carries(live: Json, desired: Json, labels: tuple[str, ...]) -> bool:
    """The live object carries each of `labels` with the desired object's value."""
    have = live["metadata"].get("labels") or {}
    want = desired["metadata"].get("labels") or {}
    return all(key in want and have.get(key) == want[key] for key in labels)
