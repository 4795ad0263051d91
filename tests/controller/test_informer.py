"""Informers against the local API server: every change is seen across dropped streams and a
forced 410 Gone; the store, its indexes and the transform; one shared informer per resource."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from harness import FAST_WATCH, OPERATOR_AGENT, TcpProxy, eventually, widget

from controller.cache import Cache
from controller.client import ClientConfig, KubeClient
from controller.errors import NotFound
from controller.informer import (
    DeletedFinalStateUnknown,
    EventHandler,
    Informer,
    strip_managed_fields,
)
from controller.metrics import Metrics
from controller.resource import CONFIG_MAPS, Resource
from controller.store import OWNER_UID_INDEX, index_by_label, object_key
from hack.localcluster.server import LocalCluster

Json = dict[str, Any]


class Mirror:
    """Rebuilds the object set from handler calls alone, checking they are consistent."""

    def __init__(self) -> None:
        self.objects: dict[str, Json] = {}
        self.unknown_deletes: list[str] = []
        self.errors: list[str] = []

    def handler(self) -> EventHandler:
        return EventHandler(on_add=self.add, on_update=self.update, on_delete=self.delete)

    def add(self, obj: Json) -> None:
        key = object_key(obj)
        if key in self.objects:
            self.errors.append(f"add of known {key}")
        self.objects[key] = obj

    def update(self, old: Json, new: Json) -> None:
        key = object_key(new)
        if self.objects.get(key) is not old:
            self.errors.append(f"update of {key} with a stale old object")
        self.objects[key] = new

    def delete(self, obj: Json | DeletedFinalStateUnknown) -> None:
        if isinstance(obj, DeletedFinalStateUnknown):
            self.unknown_deletes.append(obj.key)
            key = obj.key
        else:
            key = object_key(obj)
        if self.objects.pop(key, None) is None:
            self.errors.append(f"delete of unknown {key}")

    def versions(self) -> dict[str, str]:
        return {k: o["metadata"]["resourceVersion"] for k, o in self.objects.items()}


async def server_versions(client: KubeClient, resource: Resource) -> dict[str, str]:
    items = (await client.list(resource))["items"]
    return {object_key(o): o["metadata"]["resourceVersion"] for o in items}


async def test_sees_every_change_across_dropped_streams_and_410(
        cluster: LocalCluster, client: KubeClient, widgets: Resource, proxy: TcpProxy,
        proxied: Path) -> None:
    for i in range(5):
        await client.create(widgets, widget(f"w{i}", n=i))
    ours = await KubeClient.connect(proxied, ClientConfig(qps=None), Metrics())
    informer = Informer(ours, widgets, settings=FAST_WATCH)
    mirror = Mirror()
    informer.add_handler(mirror.handler())

    async def converged() -> bool:
        truth = await server_versions(client, widgets)
        store = {k: informer.store.get_by_key(k)["metadata"]["resourceVersion"]  # type: ignore[index]
                 for k in informer.store.list_keys()}
        return mirror.versions() == truth == store

    async def update(name: str, n: int) -> None:
        await client.patch(widgets, "default", name, {"spec": {"n": n}})

    task = asyncio.create_task(informer.run())
    try:
        await asyncio.wait_for(informer.wait_for_sync(), 5)
        assert informer.has_synced and len(mirror.objects) == 5
        await client.create(widgets, widget("w5"))
        await update("w0", 100)
        await eventually(converged)

        proxy.drop()  # the connection dies mid-stream
        await client.create(widgets, widget("w6"))
        await client.delete(widgets, "default", "w1")
        await update("w2", 200)
        await eventually(converged)

        cluster.storage.close_all_watches()  # the server ends the streams
        await client.create(widgets, widget("w7"))
        await eventually(converged)
        assert cluster.stats.count(verb="list", resource="widgets.test.example.com",
                                   user_agent=OPERATOR_AGENT) == 1, "resumed, never relisted"

        # Forced 410: the informer is cut off while changes happen and history is compacted.
        proxy.pause()
        cluster.storage.close_all_watches()
        await client.delete(widgets, "default", "w3")
        await client.create(widgets, widget("w8"))
        await update("w4", 400)
        cluster.storage.compact()
        proxy.resume()
        await eventually(converged)
        assert mirror.unknown_deletes == ["default/w3"]
        assert cluster.stats.count(verb="list", resource="widgets.test.example.com",
                                   user_agent=OPERATOR_AGENT) == 2, "relisted once on 410"
        assert mirror.errors == []
        watches = cluster.stats.count(verb="watch", resource="widgets.test.example.com",
                                      user_agent=OPERATOR_AGENT)
        assert watches >= 4
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await ours.close()


async def test_bookmarks_advance_the_resource_version(client: KubeClient, widgets: Resource,
                                                      cluster: LocalCluster) -> None:
    await client.create(widgets, widget("a"))
    informer = Informer(client, widgets, settings=FAST_WATCH)
    task = asyncio.create_task(informer.run())
    try:
        await informer.wait_for_sync()
        synced_at = int(informer.last_resource_version)
        await client.create(CONFIG_MAPS, {"metadata": {"name": "other", "namespace": "default"}})
        # Writes to other resources move the global version; bookmarks carry it to us.
        await eventually(lambda: int(informer.last_resource_version) > synced_at, within=3)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def test_store_indexes_transform_and_late_handlers(client: KubeClient) -> None:
    owner = await client.create(CONFIG_MAPS, {"metadata": {"name": "owner",
                                                           "namespace": "default"}})
    uid = owner["metadata"]["uid"]
    for i in range(3):
        await client.create(CONFIG_MAPS, {"metadata": {
            "name": f"child{i}", "namespace": "default", "labels": {"tier": f"t{i % 2}"},
            "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner",
                                 "uid": uid, "controller": True}]}})
    informer = Informer(client, CONFIG_MAPS, "default", transform=strip_managed_fields,
                        indexers={"tier": index_by_label("tier")}, settings=FAST_WATCH)
    task = asyncio.create_task(informer.run())
    try:
        await informer.wait_for_sync()
        names = sorted(o["metadata"]["name"] for o in informer.store.by_index(OWNER_UID_INDEX,
                                                                              uid))
        assert names == ["child0", "child1", "child2"]
        assert [o["metadata"]["name"] for o in informer.store.by_index("tier", "t1")] == [
            "child1"]
        assert all("managedFields" not in o["metadata"] for o in informer.store.list())
        assert all(o["kind"] == "ConfigMap" for o in informer.store.list())
        await client.delete(CONFIG_MAPS, "default", "child1")
        await eventually(lambda: informer.store.by_index("tier", "t1") == [])
        late: list[str] = []
        informer.add_handler(EventHandler(on_add=lambda o: late.append(o["metadata"]["name"])))
        assert sorted(late) == ["child0", "child2", "owner"], "a late handler gets a replay"
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def test_cache_shares_one_informer_per_resource(cluster: LocalCluster,
                                                      kubeconfig: Path) -> None:
    ours = await KubeClient.connect(kubeconfig, ClientConfig(qps=None), Metrics())
    cache = Cache(ours, settings=FAST_WATCH)
    first = cache.informer(CONFIG_MAPS)
    assert cache.informer(CONFIG_MAPS) is first
    assert cache.informer(CONFIG_MAPS, "default") is not first
    task = asyncio.create_task(cache.run())
    try:
        await asyncio.wait_for(cache.wait_for_sync(), 5)
        assert cache.has_synced
        with pytest.raises(NotFound):
            await cache.get(CONFIG_MAPS, "default", "missing")
        await ours.create(CONFIG_MAPS, {"metadata": {"name": "x", "namespace": "default",
                                                     "labels": {"a": "b"}}})
        await eventually(lambda: "default/x" in first.store)
        assert (await cache.get(CONFIG_MAPS, "default", "x"))["metadata"]["name"] == "x"
        assert [o["metadata"]["name"] for o in await cache.list(
            CONFIG_MAPS, "default", labels={"a": "b"})] == ["x"]
        # Two informers (all namespaces, and "default"): one list each, never more.
        assert cluster.stats.count(verb="list", resource="configmaps",
                                   user_agent=OPERATOR_AGENT) == 2
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await ours.close()
