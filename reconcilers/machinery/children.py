"""Creating, updating and deleting the objects a parent owns, writing only when needed.

Every child goes through `ChildWriter.apply`: it reads the live object from the cache, creates
it when missing (with a controller owner reference to the parent), updates it only when our
desired spec differs from what we last applied or someone else changed the spec since, and
leaves alone what we do not own. The drift markers are the original operator's annotations
(`nvidia.com/last-applied-hash` and `nvidia.com/last-applied-generation`), so objects made by
either operator are recognised by the other.
"""

from __future__ import annotations

import copy
import enum
import hashlib
import json
from dataclasses import dataclass
from typing import Any

from controller.cache import Cache
from controller.client import KubeClient
from controller.errors import AlreadyExists, NotFound
from controller.events import EventRecorder
from controller.resource import Resource

Json = dict[str, Any]

HASH_ANNOTATION = "nvidia.com/last-applied-hash"
GENERATION_ANNOTATION = "nvidia.com/last-applied-generation"
#: Parts of a child we never copy from the desired object on update (the server owns them).
_SERVER_FIELDS = ("status",)


class Outcome(enum.Enum):
    """What `apply` or `delete` did."""

    CREATED = "created"
    UPDATED = "updated"
    UNCHANGED = "unchanged"
    DELETED = "deleted"
    ABSENT = "absent"
    #: An object of that name exists and is not ours: we neither adopt nor overwrite it.
    NOT_OWNED = "not-owned"


@dataclass(frozen=True)
class Applied:
    """The outcome and the live object after it (None when absent or deleted)."""

    outcome: Outcome
    live: Json | None


def spec_hash(obj: Json) -> str:
    """SHA-256 of the desired `.spec` in canonical form (objects without a spec: constant)."""
    spec = obj.get("spec")
    canonical = json.dumps(_canonical(spec) if spec is not None else None,
                           sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def _canonical(value: Any) -> Any:
    """Lists of objects sorted by `name` (or their first key), as the original hashes them."""
    if isinstance(value, dict):
        return {k: _canonical(v) for k, v in value.items()}
    if isinstance(value, list):
        items = [_canonical(v) for v in value]
        if items and all(isinstance(v, dict) for v in items):
            return sorted(items, key=_sort_key)
        return items
    return value


def _sort_key(item: Json) -> str:
    if "name" in item:
        return str(item["name"])
    if not item:
        return ""
    first = sorted(item)[0]
    return f"{first}={json.dumps(item[first], sort_keys=True)}"


def owner_reference(parent: Json) -> Json:
    return {
        "apiVersion": parent["apiVersion"],
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


class ChildWriter:
    """Applies desired children of one parent; events go to the parent's recorder."""

    def __init__(self, client: KubeClient, cache: Cache, recorder: EventRecorder) -> None:
        self.client = client
        self.cache = cache
        self.recorder = recorder

    async def _live(self, resource: Resource, namespace: str | None, name: str) -> Json | None:
        try:
            return await self.cache.get(resource, namespace, name)
        except NotFound:
            return None

    async def apply(self, parent: Json, resource: Resource, desired: Json) -> Applied:
        """Create or update one child so that it matches `desired`."""
        meta = desired["metadata"]
        namespace, name = meta.get("namespace"), meta["name"]
        live = await self._live(resource, namespace, name)
        wanted_hash = spec_hash(desired)
        if live is None:
            return await self._create(parent, resource, desired, wanted_hash)
        if not is_owned_by(live, parent):
            return Applied(Outcome.NOT_OWNED, live)
        if not self._needs_update(live, desired, wanted_hash):
            return Applied(Outcome.UNCHANGED, live)
        updated = copy.deepcopy(live)
        for key, value in desired.items():
            if key not in ("metadata", "apiVersion", "kind", *_SERVER_FIELDS):
                updated[key] = copy.deepcopy(value)
        umeta = updated["metadata"]
        umeta["labels"] = {**(umeta.get("labels") or {}), **(meta.get("labels") or {})}
        annotations = {**(umeta.get("annotations") or {}), **(meta.get("annotations") or {})}
        annotations[HASH_ANNOTATION] = wanted_hash
        annotations[GENERATION_ANNOTATION] = str(int(umeta.get("generation", 0)) + 1)
        umeta["annotations"] = annotations
        result = await self._record_generation(resource,
                                               await self.client.update(resource, updated))
        await self.recorder.normal(parent, f"Update{resource.kind}",
                                   f"Updated {resource.kind} {name}")
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
        return await self.client.patch(resource, meta.get("namespace"), meta["name"], patch)

    def _needs_update(self, live: Json, desired: Json, wanted_hash: str) -> bool:
        annotations = live["metadata"].get("annotations") or {}
        if annotations.get(HASH_ANNOTATION) != wanted_hash:
            return True
        generation = live["metadata"].get("generation")
        if generation is None:
            # Kinds without a generation (Services, ConfigMaps...): compare the fields we set.
            return not all(_subset(v, live.get(k)) for k, v in desired.items()
                           if k not in ("metadata", "apiVersion", "kind", *_SERVER_FIELDS))
        try:
            return int(generation) > int(annotations.get(GENERATION_ANNOTATION, ""))
        except ValueError:
            return True

    async def _create(self, parent: Json, resource: Resource, desired: Json,
                      wanted_hash: str) -> Applied:
        obj = copy.deepcopy(desired)
        meta = obj["metadata"]
        meta["ownerReferences"] = [owner_reference(parent)]
        meta["annotations"] = {**(meta.get("annotations") or {}),
                               HASH_ANNOTATION: wanted_hash, GENERATION_ANNOTATION: "1"}
        try:
            created = await self.client.create(resource, obj)
        except AlreadyExists:
            # The cache is behind a create of ours (or someone else's object appeared):
            # the next reconcile sees it and decides.
            live = await self._live(resource, meta.get("namespace"), meta["name"])
            return Applied(Outcome.UNCHANGED, live)
        await self.recorder.normal(parent, f"Create{resource.kind}",
                                   f"Created {resource.kind} {meta['name']}")
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
        return Applied(Outcome.DELETED, None)
