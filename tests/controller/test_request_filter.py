"""The manager's generic hooks: request filters with resync, field-selected informers, and
stop hooks told whether the stop was clean."""

from __future__ import annotations

import asyncio
from pathlib import Path

from harness import eventually, manager, running, widget

from controller.client import KubeClient
from controller.reconcile import Request
from controller.resource import Resource

NAMESPACES = Resource("", "v1", "namespaces", "Namespace", namespaced=False)


async def test_filtered_keys_are_dropped_until_resynced(
        kubeconfig: Path, client: KubeClient, widgets: Resource) -> None:
    await client.create(NAMESPACES, {"metadata": {"name": "blocked"}})
    mgr = await manager(kubeconfig)
    seen: list[Request] = []
    blocked = {"blocked"}

    async def reconcile(request: Request) -> None:
        seen.append(request)

    async def admit(request: Request) -> bool:
        return request.namespace not in blocked

    mgr.add_controller("widgets", reconcile, for_=widgets)
    mgr.add_request_filter(admit)
    async with running(mgr):
        await client.create(widgets, widget("a", "default"))
        await client.create(widgets, widget("b", "blocked"))
        await eventually(lambda: Request("default", "a") in seen, what="a reconciled")
        await asyncio.sleep(0.3)
        assert Request("blocked", "b") not in seen
        blocked.clear()
        mgr.resync("blocked")
        await eventually(lambda: Request("blocked", "b") in seen, what="b reconciled")
    assert seen.count(Request("default", "a")) == 1  # a resync of one namespace only


async def test_field_selected_informer_holds_only_matches(
        kubeconfig: Path, client: KubeClient, widgets: Resource) -> None:
    mgr = await manager(kubeconfig)
    named = mgr.cache.informer(widgets, field_selector="metadata.name=wanted")
    whole = mgr.cache.informer(widgets)
    assert named is not whole
    assert mgr.cache.informer(widgets, field_selector="metadata.name=wanted") is named
    async with running(mgr):
        await client.create(widgets, widget("wanted"))
        await client.create(widgets, widget("other"))
        await eventually(lambda: len(whole.store) == 2, what="both widgets cached")
        await asyncio.sleep(0.2)
        assert [o["metadata"]["name"] for o in named.store.list()] == ["wanted"]


async def test_stop_hooks_know_a_clean_stop_from_a_cancel(kubeconfig: Path) -> None:
    calls: list[bool] = []

    async def hook(clean: bool) -> None:
        calls.append(clean)

    clean = await manager(kubeconfig)
    clean.add_stop_hook(hook)
    async with running(clean):
        await asyncio.sleep(0.1)
    abrupt = await manager(kubeconfig)
    abrupt.add_stop_hook(hook)
    task = asyncio.create_task(abrupt.run())
    await asyncio.sleep(0.1)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    assert calls == [True, False]
