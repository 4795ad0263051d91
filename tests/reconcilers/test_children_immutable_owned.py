"""ChildWriter and an owned child whose spec the API server never changes (a GMS component's
ResourceClaimTemplate): written once, left alone while desired as it is, made anew when the
desired spec changes; against the local API server, which refuses such an update as
kube-apiserver does."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from backends.children import Child, DesiredChildren
from backends.gpu_memory_service import CLAIM_TEMPLATE_IMMUTABLE, claim_template
from controller.cache import Cache
from controller.client import ClientConfig, KubeClient
from controller.errors import ApiError
from controller.events import EventRecorder
from reconcilers.machinery.children import HASH_ANNOTATION, ChildWriter
from reconcilers.machinery.resources import CONFIG_MAPS, RESOURCE_CLAIM_TEMPLATES

Json = dict[str, Any]
KIND = ("resource.k8s.io/v1", "ResourceClaimTemplate")


@pytest.fixture
async def kube(kubeconfig: Path) -> AsyncIterator[KubeClient]:
    client = await KubeClient.connect(kubeconfig, ClientConfig(qps=0, user_agent="rct-test"))
    try:
        yield client
    finally:
        await client.close()


@pytest.fixture
async def writer(kube: KubeClient) -> AsyncIterator[ChildWriter]:
    cache = Cache(kube)
    cache.informer(RESOURCE_CLAIM_TEMPLATES)
    task = asyncio.create_task(cache.run())
    await cache.wait_for_sync()
    try:
        yield ChildWriter(kube, cache, EventRecorder(kube, "rct-test"))
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def desired(count: int) -> DesiredChildren:
    template = claim_template("g-w-gpu", "default", count, None)
    return DesiredChildren((Child(template, immutable=CLAIM_TEMPLATE_IMMUTABLE),), (KIND,))


async def settle(writer: ChildWriter, count: int) -> Json:
    """The template as the cache sees it once it asks `count` devices."""
    for _ in range(300):
        live = await writer.cache.get_or_none(RESOURCE_CLAIM_TEMPLATES, "default", "g-w-gpu")
        request = ((live or {}).get("spec") or {}).get("spec", {}).get("devices", {})
        if live is not None and request.get("requests", [{}])[0].get(
                "exactly", {}).get("count") == count:
            return live
        await asyncio.sleep(0.01)
    raise AssertionError("the cache never saw the template")


async def test_a_changed_template_is_made_anew_and_an_equal_one_left_alone(
        kube: KubeClient, writer: ChildWriter) -> None:
    parent = await kube.create(CONFIG_MAPS, {"apiVersion": "v1", "kind": "ConfigMap",
                                             "metadata": {"name": "p", "namespace": "default"}})
    await writer.sync(parent, desired(2))
    first = await settle(writer, 2)
    # The server refuses to change the spec in place, as kube-apiserver does.
    changed = {**first, "spec": desired(4).children[0].obj["spec"]}
    with pytest.raises(ApiError) as refused:
        await kube.update(RESOURCE_CLAIM_TEMPLATES, changed)
    assert refused.value.code == 422
    # Desired as it is: nothing written.
    await writer.sync(parent, desired(2))
    again = await kube.get(RESOURCE_CLAIM_TEMPLATES, "default", "g-w-gpu")
    assert again["metadata"]["uid"] == first["metadata"]["uid"]
    assert again["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
    # Desired with another count: deleted and created with it, still ours.
    await writer.sync(parent, desired(4))
    made = await kube.get(RESOURCE_CLAIM_TEMPLATES, "default", "g-w-gpu")
    assert made["metadata"]["uid"] != first["metadata"]["uid"]
    assert made["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"] == 4
    assert made["metadata"]["ownerReferences"][0]["uid"] == parent["metadata"]["uid"]
    assert made["metadata"]["annotations"][HASH_ANNOTATION]
