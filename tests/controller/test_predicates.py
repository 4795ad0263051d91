"""Predicates: which events of a source wake a controller. Its own objects' status-only
updates do not (STATUS_ONLY_IGNORED); the creation of its children does not
(CREATE_IGNORED); everything else does."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from harness import CRDS, eventually, manager, running, schemaless_crd

from controller.client import KubeClient
from controller.handlers import (
    CREATE_IGNORED,
    STATUS_ONLY_IGNORED,
    Predicate,
    changed_beyond_status,
)
from controller.reconcile import Request
from controller.resource import CONFIG_MAPS, Resource

GADGETS = Resource("test.example.com", "v1", "gadgets", "Gadget")
QUIET = 0.4


def gadget_crd() -> dict[str, Any]:
    """A kind with a status subresource: a status write does not move its generation."""
    return schemaless_crd("gadget", "Gadget", status_subresource=True)


def test_changed_beyond_status() -> None:
    meta = {"name": "g", "uid": "u", "generation": 1, "resourceVersion": "1",
            "labels": {"a": "1"}}
    old = {"kind": "Gadget", "metadata": meta, "spec": {"size": 1}, "status": {"n": 1}}
    status_only = {**old, "metadata": {**meta, "resourceVersion": "2"}, "status": {"n": 2}}
    assert not changed_beyond_status(old, status_only)
    assert changed_beyond_status(old, {**old, "metadata": {**meta, "generation": 2}})
    assert changed_beyond_status(old, {**old, "metadata": {**meta, "labels": {"a": "2"}}})
    assert changed_beyond_status(old, {**old, "metadata": {**meta, "finalizers": ["f"]}})
    assert changed_beyond_status(old, {**old, "data": {"k": "v"}})
    # Without a generation, nothing stands for the spec: it is compared.
    plain = {"metadata": {"name": "c", "resourceVersion": "1"}, "spec": {"x": 1}}
    assert changed_beyond_status(plain, {**plain, "spec": {"x": 2}})
    assert not changed_beyond_status(plain, {**plain, "status": {"y": 1}})


async def test_status_writes_and_child_creations_wake_nobody(
        kubeconfig: Path, client: KubeClient) -> None:
    await client.create(CRDS, gadget_crd())
    await asyncio.sleep(0.2)
    mgr = await manager(kubeconfig)
    seen: list[Request] = []

    async def reconcile(request: Request) -> None:
        seen.append(request)

    mgr.add_controller("gadget", reconcile, for_=GADGETS, owns=[CONFIG_MAPS],
                       for_predicate=STATUS_ONLY_IGNORED, owns_predicate=CREATE_IGNORED)
    key = Request("default", "g")

    async def woken_by(change: Any) -> None:
        seen.clear()
        await change
        await eventually(lambda: key in seen, what="a reconcile")

    async def not_woken_by(change: Any) -> None:
        seen.clear()
        await change
        await asyncio.sleep(QUIET)
        assert seen == []

    async with running(mgr):
        g = await client.create(GADGETS, {"apiVersion": "test.example.com/v1", "kind": "Gadget",
                                          "metadata": {"name": "g", "namespace": "default"},
                                          "spec": {"size": 1}})
        await eventually(lambda: key in seen)
        await not_woken_by(client.patch(GADGETS, "default", "g", {"status": {"n": 1}},
                                        subresource="status"))
        await woken_by(client.patch(GADGETS, "default", "g", {"spec": {"size": 2}}))
        await woken_by(client.patch(GADGETS, "default", "g",
                                    {"metadata": {"labels": {"a": "b"}}}))
        child = {"apiVersion": "v1", "kind": "ConfigMap",
                 "metadata": {"name": "g-child", "namespace": "default",
                              "ownerReferences": [{"apiVersion": "test.example.com/v1",
                                                   "kind": "Gadget", "name": "g",
                                                   "uid": g["metadata"]["uid"],
                                                   "controller": True}]}}
        await not_woken_by(client.create(CONFIG_MAPS, child))
        await woken_by(client.patch(CONFIG_MAPS, "default", "g-child", {"data": {"k": "v"}}))
        await woken_by(client.delete(CONFIG_MAPS, "default", "g-child"))


async def test_creates_filtered_by_the_object_and_deletes_ignored(
        kubeconfig: Path, client: KubeClient) -> None:
    """A controller of ConfigMaps that cares only for those labelled `wanted` (as the pod
    controllers care only for a pod needing their work): other creates, and every delete,
    never reach its queue; an object already there when it starts is judged as a create."""
    def wanted(obj: dict[str, Any]) -> bool:
        return (obj["metadata"].get("labels") or {}).get("wanted") == "yes"

    def config_map(name: str, **labels: str) -> dict[str, Any]:
        return {"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": name, "namespace": "default", "labels": labels}}

    await client.create(CONFIG_MAPS, config_map("before", wanted="yes"))
    await client.create(CONFIG_MAPS, config_map("before-other"))
    mgr = await manager(kubeconfig)
    seen: list[Request] = []

    async def reconcile(request: Request) -> None:
        seen.append(request)

    mgr.add_controller("picky", reconcile, for_=CONFIG_MAPS,
                       for_predicate=Predicate(create=wanted, delete=False))
    async with running(mgr):
        await eventually(lambda: Request("default", "before") in seen, what="the listed one")
        await client.create(CONFIG_MAPS, config_map("other"))
        await client.create(CONFIG_MAPS, config_map("new", wanted="yes"))
        await eventually(lambda: Request("default", "new") in seen, what="the new one")
        await client.delete(CONFIG_MAPS, "default", "new")
        await client.delete(CONFIG_MAPS, "default", "before")
        await asyncio.sleep(QUIET)
    assert sorted(r.name for r in seen) == ["before", "new"], seen
