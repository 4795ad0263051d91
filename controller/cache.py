"""The cache: one shared informer per resource and namespace scope, and reads from them.

However many controllers watch a resource, it is listed and watched once. Informers asked
for while the cache runs start at once; reads of a resource nobody watched yet start its
informer and wait for it to sync, as controller-runtime's cache does.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from .client import KubeClient
from .errors import NotFound
from .informer import Informer, Transform, WatchSettings, compact_object
from .resource import Resource
from .store import IndexFunc

Json = dict[str, Any]
JsonList = list[Json]
InformerKey = tuple[str, str, str, str | None, str]


class Cache:
    """Owns the informers of one manager; `run` drives them all until cancelled.

    The shape of what is cached is fixed here, once, as controller-runtime's
    `cache.Options.ByObject` does: `by_object` gives a resource its own transform, replacing
    `transform`, which applies to every other resource (None keeps objects whole), and
    `label_selectors` restricts what is listed and watched of a resource to the objects
    matching its selector (the server sends nothing else; reads see only those).
    """

    def __init__(self, client: KubeClient, *, namespace: str | None = None,
                 settings: WatchSettings | None = None,
                 transform: Transform | None = compact_object,
                 by_object: Mapping[Resource, Transform] | None = None,
                 label_selectors: Mapping[Resource, str] | None = None) -> None:
        self.client = client
        self.namespace = namespace
        self.settings = settings or WatchSettings()
        self.transform = transform
        # Keyed as informers are, so that a Resource spelled with another kind still matches.
        self._by_object = {_identity(r): t for r, t in (by_object or {}).items()}
        self._selectors = {_identity(r): s for r, s in (label_selectors or {}).items()}
        self._informers: dict[InformerKey, Informer] = {}
        #: The informer reads of a resource go to, once it synced (see `_synced`).
        self._readers: dict[Resource, Informer] = {}
        self._to_start: asyncio.Queue[Informer] = asyncio.Queue()
        self._running = False

    def informer(self, resource: Resource, namespace: str | None = None, *,
                 indexers: dict[str, IndexFunc] | None = None,
                 field_selector: str = "") -> Informer:
        """The shared informer of a resource (created on first use).

        `namespace` defaults to the cache's scope. `indexers` are added to the informer, new
        or not; a name already taken by a different function raises ValueError. An informer
        with a `field_selector` holds only the matching objects and is never the one reads
        go to (`get`, `list`): it is shared only by callers asking the same selector.
        """
        scope = namespace if namespace is not None else self.namespace
        scope = scope if resource.namespaced else None
        key = (*_identity(resource), scope, field_selector)
        informer = self._informers.get(key)
        if informer is None:
            informer = Informer(self.client, resource, scope,
                                label_selector=self.label_selector_for(resource),
                                field_selector=field_selector,
                                transform=self.transform_for(resource), indexers=indexers,
                                settings=self.settings)
            self._informers[key] = informer
            self._to_start.put_nowait(informer)
        elif indexers:
            informer.add_indexers(indexers)
        return informer

    def transform_for(self, resource: Resource) -> Transform | None:
        """The transform every cached object of `resource` goes through."""
        return self._by_object.get(_identity(resource), self.transform)

    def label_selector_for(self, resource: Resource) -> str:
        """The label selector every cached object of `resource` matches ("": all)."""
        return self._selectors.get(_identity(resource), "")

    @property
    def informers(self) -> list[Informer]:
        return list(self._informers.values())

    def discard(self, resource: Resource) -> None:
        """Forget the informers of a resource before they start (one the API server does not
        serve, say): `run` skips them."""
        if self._running:
            raise RuntimeError("discard informers before the cache runs")
        identity = _identity(resource)
        for key in [k for k in self._informers if k[:len(identity)] == identity]:
            del self._informers[key]

    async def run(self) -> None:
        """Run every informer, present and future, until cancelled."""
        self._running = True
        try:
            async with asyncio.TaskGroup() as tg:
                while True:
                    informer = await self._to_start.get()
                    if informer not in self._informers.values():
                        continue  # discarded
                    tg.create_task(informer.run(), name=f"informer {informer.resource}")
        finally:
            self._running = False

    @property
    def has_synced(self) -> bool:
        return all(i.has_synced for i in self._informers.values())

    async def wait_for_sync(self) -> None:
        for informer in list(self._informers.values()):
            await informer.wait_for_sync()

    # --- reads -----------------------------------------------------------------------------

    async def get(self, resource: Resource, namespace: str | None, name: str) -> Json:
        """The cached object; NotFound if the cache does not hold it."""
        informer = self._readers.get(resource)
        if informer is None or not informer.has_synced:
            informer = await self._synced(resource)
        obj = informer.store.get(namespace if resource.namespaced else None, name)
        if obj is None:
            raise NotFound(message=f'{resource.plural} "{name}" not found')
        return obj

    async def get_or_none(self, resource: Resource, namespace: str | None,
                          name: str) -> Json | None:
        """The cached object, or None if the cache does not hold it."""
        informer = self._readers.get(resource)
        if informer is None or not informer.has_synced:
            informer = await self._synced(resource)
        return informer.store.get(namespace if resource.namespaced else None, name)

    async def list(self, resource: Resource, namespace: str | None = None, *,
                   labels: dict[str, str] | None = None) -> JsonList:
        """Cached objects, optionally in one namespace and matching every label given."""
        informer = await self._synced(resource)
        items = informer.store.list(namespace if resource.namespaced else None)
        if labels:
            items = [o for o in items if _has_labels(o, labels)]
        return items

    async def by_index(self, resource: Resource, index: str, value: str) -> JsonList:
        informer = await self._synced(resource)
        return informer.store.by_index(index, value)

    async def _synced(self, resource: Resource) -> Informer:
        informer = self.informer(resource)
        if not informer.has_synced:
            await informer.wait_for_sync()
        # Reads are most of what a reconcile does: later ones skip the key building above.
        self._readers[resource] = informer
        return informer


def _identity(resource: Resource) -> tuple[str, str, str]:
    return (resource.group, resource.version, resource.plural)


def _has_labels(obj: Json, wanted: dict[str, str]) -> bool:
    labels = obj.get("metadata", {}).get("labels") or {}
    return all(labels.get(k) == v for k, v in wanted.items())
