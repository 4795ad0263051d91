"""The cache's shape, declared where it is built: a transform per resource (by_object) over a
default one, a label selector per resource, strict indexers, and get_or_none."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from harness import FAST_WATCH, eventually, manager, widget

from controller.cache import Cache
from controller.client import KubeClient
from controller.informer import compact_object
from controller.resource import CONFIG_MAPS, Resource
from controller.store import NAMESPACE_INDEX, Store, index_by_label

Json = dict[str, Any]


def marker(value: str) -> Callable[[Json], Json]:
    """A transform that annotates what went through it."""
    def mark(obj: Json) -> Json:
        annotations = {**(obj["metadata"].get("annotations") or {}), "transformed": value}
        return {**obj, "metadata": {**obj["metadata"], "annotations": annotations}}
    return mark


by_default = marker("default")
tag = marker("by-object")


@pytest.fixture
async def running_cache(client: KubeClient) -> AsyncIterator[Cache]:
    cache = Cache(client, settings=FAST_WATCH, transform=by_default,
                  by_object={CONFIG_MAPS: tag})
    task = asyncio.create_task(cache.run())
    try:
        yield cache
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


def transformed(obj: Json | None) -> str:
    assert obj is not None
    return str(obj["metadata"]["annotations"]["transformed"])


async def test_by_object_transform_applies_to_its_resource_only(
        client: KubeClient, widgets: Resource, running_cache: Cache) -> None:
    cache = running_cache
    await client.create(CONFIG_MAPS, {"metadata": {"name": "cm", "namespace": "default"}})
    await client.create(widgets, widget("w"))
    assert transformed(await cache.get(CONFIG_MAPS, "default", "cm")) == "by-object", (
        "by_object replaces the default transform rather than adding to it")
    assert transformed(await cache.get(widgets, "default", "w")) == "default"

    # Later events go through the same transform.
    await client.patch(CONFIG_MAPS, "default", "cm", {"data": {"k": "v"}})
    store = cache.informer(CONFIG_MAPS).store
    await eventually(lambda: (store.get("default", "cm") or {}).get("data") == {"k": "v"})
    assert transformed(store.get("default", "cm")) == "by-object"
    # Every informer of the resource has it, whatever its namespace scope.
    assert cache.informer(CONFIG_MAPS, "default").transform is tag
    assert cache.informer(widgets).transform is by_default
    # Without a word, the cache strips managedFields from everything.
    assert Cache(client).transform_for(CONFIG_MAPS) is compact_object


async def test_get_or_none(client: KubeClient, running_cache: Cache) -> None:
    assert await running_cache.get_or_none(CONFIG_MAPS, "default", "missing") is None
    await client.create(CONFIG_MAPS, {"metadata": {"name": "here", "namespace": "default"}})
    await eventually(lambda: running_cache.get_or_none(CONFIG_MAPS, "default", "here"))
    found = await running_cache.get_or_none(CONFIG_MAPS, "default", "here")
    assert found is not None and found["metadata"]["name"] == "here"


async def test_manager_config_by_object_reaches_the_cache(kubeconfig: Path) -> None:
    mgr = await manager(kubeconfig, by_object={CONFIG_MAPS: tag}, transform=None)
    try:
        assert mgr.cache.transform_for(CONFIG_MAPS) is tag
        # A Resource spelled with another kind names the same resource.
        assert mgr.cache.transform_for(Resource("", "v1", "configmaps", "Cm")) is tag
        assert mgr.cache.transform_for(Resource("", "v1", "secrets", "Secret")) is None
    finally:
        await mgr.client.close()


async def test_conflicting_indexer_raises(client: KubeClient, widgets: Resource,
                                          running_cache: Cache) -> None:
    cache = running_cache
    by_tier = index_by_label("tier")
    informer = cache.informer(CONFIG_MAPS, indexers={"tier": by_tier})
    assert cache.informer(CONFIG_MAPS, indexers={"tier": by_tier}) is informer, "idempotent"
    await client.create(CONFIG_MAPS, {"metadata": {"name": "t", "namespace": "default",
                                                   "labels": {"tier": "gold"}}})
    await eventually(lambda: informer.store.by_index("tier", "gold"))

    with pytest.raises(ValueError, match="'tier' already exists"):
        cache.informer(CONFIG_MAPS, indexers={"tier": index_by_label("tier")})
    assert [o["metadata"]["name"] for o in informer.store.by_index("tier", "gold")] == ["t"]
    # Default indexes are taken names too, for a new informer as for an old one.
    with pytest.raises(ValueError, match="'namespace' already exists"):
        cache.informer(widgets, indexers={NAMESPACE_INDEX: index_by_label("x")})
    with pytest.raises(ValueError):
        Store({NAMESPACE_INDEX: index_by_label("x")})
    # A new name on a synced informer indexes what it already holds.
    cache.informer(CONFIG_MAPS, indexers={"name": lambda o: [o["metadata"]["name"]]})
    assert [o["metadata"]["name"] for o in informer.store.by_index("name", "t")] == ["t"]


async def test_an_update_moves_the_object_between_index_values(
        client: KubeClient, running_cache: Cache) -> None:
    """An update that changes an indexed label moves the object to the new value only; one
    that leaves it (a data change) keeps it where it was."""
    informer = running_cache.informer(CONFIG_MAPS, indexers={"tier": index_by_label("tier")})
    await client.create(CONFIG_MAPS, {"metadata": {"name": "m", "namespace": "default",
                                                   "labels": {"tier": "gold"}}})
    await eventually(lambda: informer.store.by_index("tier", "gold"))

    def names(tier: str) -> list[str]:
        return [o["metadata"]["name"] for o in informer.store.by_index("tier", tier)]

    await client.patch(CONFIG_MAPS, "default", "m", {"data": {"k": "v"}})
    await eventually(lambda: (informer.store.get("default", "m") or {}).get("data"))
    assert names("gold") == ["m"]
    await client.patch(CONFIG_MAPS, "default", "m",
                       {"metadata": {"labels": {"tier": "silver"}}})
    await eventually(lambda: names("silver") == ["m"])
    assert names("gold") == []
    await client.patch(CONFIG_MAPS, "default", "m", {"metadata": {"labels": {"tier": None}}})
    await eventually(lambda: names("silver") == [])
    assert [o["metadata"]["name"] for o in informer.store.by_index(NAMESPACE_INDEX,
                                                                     "default")] == ["m"]


def test_compact_object_shares_keys_and_short_strings() -> None:
    # Two objects decoded separately, as two watch events are.
    text = ('{"metadata": {"name": "a", "managedFields": [{"manager": "m"}],'
            ' "labels": {"nvidia.com/dynamo-component": "Frontend"}},'
            ' "status": {"message": "' + "x" * 100 + '", "replicas": 1}}')
    one, two = compact_object(json.loads(text)), compact_object(json.loads(text))
    assert one == two == {"metadata": {"name": "a", "labels": {
        "nvidia.com/dynamo-component": "Frontend"}}, "status": {"message": "x" * 100,
                                                               "replicas": 1}}
    key_one = next(iter(one["metadata"]["labels"]))
    key_two = next(iter(two["metadata"]["labels"]))
    assert key_one is key_two
    assert one["metadata"]["labels"][key_one] is two["metadata"]["labels"][key_two]


async def test_label_selector_caches_only_matching_objects(
        client: KubeClient, kubeconfig: Path) -> None:
    """A resource given a label selector is listed and watched with it: objects without the
    label never reach the cache, one losing the label leaves it, one gaining it enters."""
    mgr = await manager(kubeconfig, label_selectors={CONFIG_MAPS: "serves"})
    cache = mgr.cache
    task = asyncio.create_task(cache.run())
    try:
        await client.create(CONFIG_MAPS, {"metadata": {"name": "before", "namespace": "default",
                                                       "labels": {"serves": "a"}}})
        await client.create(CONFIG_MAPS, {"metadata": {"name": "plain", "namespace": "default"}})
        informer = cache.informer(CONFIG_MAPS)
        assert informer.label_selector == "serves"
        assert cache.label_selector_for(Resource("", "v1", "secrets", "Secret")) == ""
        await informer.wait_for_sync()
        assert [o["metadata"]["name"] for o in await cache.list(CONFIG_MAPS, "default")] == [
            "before"]
        await client.create(CONFIG_MAPS, {"metadata": {"name": "after", "namespace": "default",
                                                       "labels": {"serves": "b"}}})
        await client.patch(CONFIG_MAPS, "default", "before",
                           {"metadata": {"labels": {"serves": None}}})
        await client.patch(CONFIG_MAPS, "default", "plain",
                           {"metadata": {"labels": {"serves": "c"}}})

        async def moved() -> bool:
            names = sorted(o["metadata"]["name"] for o in await cache.list(CONFIG_MAPS))
            return names == ["after", "plain"]
        await eventually(moved, what="the cache following the selector")
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await mgr.client.close()
