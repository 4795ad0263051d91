"""A mirror of some resources of an API server: list and watch each, keep the latest objects,
and report every change as the local cluster's storage reports a committed one (`Change`).

A resource not served yet (its CRD not installed: 404) is listed again every second; it counts
as served once a list succeeds, and that is reported as its CRD's change. Objects written by
the mirror's owner can be put in at once (`observe`), so its next read sees its own write
before the watch brings it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import aiohttp
import structlog

from controller.client import KubeClient
from controller.errors import ApiError
from controller.resource import Resource
from hack.localcluster.storage import Change, ResourceKey

Json = dict[str, Any]
Key = tuple[str, str]
log = structlog.get_logger("nodesim.mirror")

CRDS: ResourceKey = ("apiextensions.k8s.io", "customresourcedefinitions")
WATCH_SECONDS = 300
RETRY = 1.0


def resource_key(resource: Resource) -> ResourceKey:
    return (resource.group, resource.plural)


def _key(obj: Json) -> Key:
    meta = obj.get("metadata") or {}
    return (str(meta.get("namespace", "")), str(meta.get("name", "")))


def _version(obj: Json | None) -> int:
    try:
        return int(((obj or {}).get("metadata") or {}).get("resourceVersion") or 0)
    except ValueError:  # opaque elsewhere; etcd's are integers
        return 0


class Mirror:
    """The latest objects of `resources`, and a callback for each change."""

    def __init__(self, client: KubeClient, resources: list[Resource],
                 on_change: Callable[[Change], None]) -> None:
        self.client = client
        self.resources = {resource_key(r): r for r in resources}
        self.objects: dict[ResourceKey, dict[Key, Json]] = {k: {} for k in self.resources}
        self.served: set[ResourceKey] = set()
        #: Set once a resource's first list has succeeded.
        self.listed = {k: asyncio.Event() for k in self.resources}
        self.on_change = on_change
        self._tasks: list[asyncio.Task[None]] = []

    def start(self) -> None:
        self._tasks = [asyncio.create_task(self._reflect(r), name=f"mirror {r.plural}")
                       for r in self.resources.values()]

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks = []

    # --- what the owner reads and writes --------------------------------------------------

    def get(self, resource: ResourceKey, namespace: str, name: str) -> Json | None:
        return self.objects.get(resource, {}).get((namespace, name))

    def items(self, resource: ResourceKey, namespace: str | None = None) -> list[Json]:
        objects = self.objects.get(resource, {})
        return [objects[k] for k in sorted(objects) if namespace is None or k[0] == namespace]

    def observe(self, resource: ResourceKey, obj: Json) -> None:
        """An object the owner wrote: kept unless the mirror already has a newer one."""
        objects = self.objects.get(resource)
        if objects is None:
            return
        key = _key(obj)
        if _version(objects.get(key)) < _version(obj):
            objects[key] = obj

    # --- list and watch -------------------------------------------------------------------

    async def _reflect(self, resource: Resource) -> None:
        version = ""
        while True:
            try:
                if not version:
                    version = await self._list(resource)
                version = await self._watch(resource, version)
            except ApiError as err:
                if err.code == 410:
                    version = ""
                    continue
                if err.code != 404:
                    log.warning("nodesim mirror watch failed", resource=resource.plural,
                                error=str(err))
                version = ""
                await asyncio.sleep(RETRY)
            except (aiohttp.ClientError, OSError, TimeoutError) as err:
                log.warning("nodesim mirror watch broke", resource=resource.plural,
                            error=repr(err))
                await asyncio.sleep(RETRY)

    async def _list(self, resource: Resource) -> str:
        listing = await self.client.list(resource)
        rkey = resource_key(resource)
        objects = self.objects[rkey]
        seen = set()
        for item in listing.get("items") or ():
            item.setdefault("apiVersion", resource.api_version)
            item.setdefault("kind", resource.kind)
            seen.add(_key(item))
            self._apply(rkey, "MODIFIED" if _key(item) in objects else "ADDED", item)
        for key in set(objects) - seen:
            self._apply(rkey, "DELETED", objects[key])
        if rkey not in self.served and resource.group:
            # Served from now on: as the local cluster reports its CRD's change, so that
            # controllers that found it missing look again.
            self.served.add(rkey)
            self.on_change(Change("ADDED", CRDS, 0, {
                "metadata": {"name": f"{resource.plural}.{resource.group}"},
                "spec": {"group": resource.group, "names": {"plural": resource.plural}}}, None))
        self.served.add(rkey)
        self.listed[rkey].set()
        return str(listing["metadata"]["resourceVersion"])

    async def _watch(self, resource: Resource, version: str) -> str:
        rkey = resource_key(resource)
        async with self.client.watch(resource, None, resource_version=version,
                                     timeout_seconds=WATCH_SECONDS,
                                     read_timeout=WATCH_SECONDS + 30) as events:
            async for event in events:
                obj = event.get("object") or {}
                kind = event.get("type")
                if kind == "ERROR":
                    raise ApiError(int(obj.get("code") or 500), str(obj.get("reason", "")),
                                   str(obj.get("message", "")))
                version = str((obj.get("metadata") or {}).get("resourceVersion") or version)
                if kind in ("ADDED", "MODIFIED", "DELETED"):
                    self._apply(rkey, str(kind), obj)
        return version

    def _apply(self, rkey: ResourceKey, kind: str, obj: Json) -> None:
        objects = self.objects[rkey]
        key = _key(obj)
        old = objects.get(key)
        if kind == "DELETED":
            objects.pop(key, None)
        elif _version(old) > _version(obj):
            return  # the owner's own write is newer already
        else:
            objects[key] = obj
        self.on_change(Change(kind, rkey, _version(obj), obj, old))
