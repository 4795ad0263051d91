"""ChildWriter against the local API server: creates, drift repair, no-op writes, ownership."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from controller.cache import Cache
from controller.client import ClientConfig, KubeClient
from controller.events import EventRecorder
from controller.resource import Resource
from hack.localcluster.server import LocalCluster
from reconcilers.machinery.children import (
    GENERATION_ANNOTATION,
    HASH_ANNOTATION,
    ChildWriter,
    Outcome,
    spec_hash,
)

Json = dict[str, Any]
CONFIG_MAPS = Resource("", "v1", "configmaps", "ConfigMap")
SERVICES = Resource("", "v1", "services", "Service")
DEPLOYMENTS = Resource("apps", "v1", "deployments", "Deployment")
AGENT = "children-test"


@pytest.fixture
async def kube(kubeconfig: Path) -> AsyncIterator[KubeClient]:
    client = await KubeClient.connect(kubeconfig, ClientConfig(qps=0, user_agent=AGENT))
    try:
        yield client
    finally:
        await client.close()


@pytest.fixture
async def writer(kube: KubeClient) -> AsyncIterator[ChildWriter]:
    cache = Cache(kube)
    for resource in (CONFIG_MAPS, SERVICES, DEPLOYMENTS):
        cache.informer(resource)
    task = asyncio.create_task(cache.run())
    await cache.wait_for_sync()
    try:
        yield ChildWriter(kube, cache, EventRecorder(kube, "children-test"))
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def parent(kube: KubeClient) -> Json:
    return await kube.create(CONFIG_MAPS, {"apiVersion": "v1", "kind": "ConfigMap",
                                           "metadata": {"name": "parent",
                                                        "namespace": "default"}})


def deployment(image: str = "nginx:1", labels: dict[str, str] | None = None) -> Json:
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "child", "namespace": "default", "labels": labels or {"a": "1"}},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "x"}},
                 "template": {"metadata": {"labels": {"app": "x"}},
                              "spec": {"containers": [{"name": "main", "image": image}]}}},
    }


async def settled(writer: ChildWriter, resource: Resource, name: str, rv: str) -> None:
    """Wait until the cache has seen resourceVersion `rv` of an object."""
    for _ in range(200):
        live = await writer._live(resource, "default", name)
        if live is not None and int(live["metadata"]["resourceVersion"]) >= int(rv):
            return
        await asyncio.sleep(0.01)
    raise AssertionError("cache did not catch up")


async def test_create_sets_owner_and_markers_then_reapply_is_a_no_op(
        writer: ChildWriter, kube: KubeClient, cluster: LocalCluster) -> None:
    owner = await parent(kube)
    first = await writer.apply(owner, DEPLOYMENTS, deployment())
    assert first.outcome is Outcome.CREATED
    assert first.live is not None
    meta = first.live["metadata"]
    assert meta["ownerReferences"][0]["uid"] == owner["metadata"]["uid"]
    assert meta["ownerReferences"][0]["controller"] is True
    assert meta["annotations"][HASH_ANNOTATION] == spec_hash(deployment())
    assert meta["annotations"][GENERATION_ANNOTATION] == "1"
    await settled(writer, DEPLOYMENTS, "child", meta["resourceVersion"])
    cluster.stats.reset()
    again = await writer.apply(owner, DEPLOYMENTS, deployment())
    assert again.outcome is Outcome.UNCHANGED
    assert cluster.stats.writes(user_agent=AGENT) == 0


async def test_hand_edit_of_spec_is_reverted_but_foreign_labels_survive(
        writer: ChildWriter, kube: KubeClient) -> None:
    owner = await parent(kube)
    created = await writer.apply(owner, DEPLOYMENTS, deployment())
    assert created.live is not None
    edited = await kube.patch(DEPLOYMENTS, "default", "child", {
        "metadata": {"labels": {"team": "blue"}},
        "spec": {"template": {"spec": {"containers": [{"name": "main",
                                                        "image": "hacked:1"}]}}}})
    await settled(writer, DEPLOYMENTS, "child", edited["metadata"]["resourceVersion"])
    result = await writer.apply(owner, DEPLOYMENTS, deployment())
    assert result.outcome is Outcome.UPDATED
    assert result.live is not None
    containers = result.live["spec"]["template"]["spec"]["containers"]
    assert containers[0]["image"] == "nginx:1"
    assert result.live["metadata"]["labels"] == {"a": "1", "team": "blue"}


async def test_desired_change_updates_once(writer: ChildWriter, kube: KubeClient,
                                           cluster: LocalCluster) -> None:
    owner = await parent(kube)
    await writer.apply(owner, DEPLOYMENTS, deployment())
    updated = await writer.apply(owner, DEPLOYMENTS, deployment(image="nginx:2"))
    assert updated.outcome is Outcome.UPDATED
    assert updated.live is not None
    await settled(writer, DEPLOYMENTS, "child", updated.live["metadata"]["resourceVersion"])
    cluster.stats.reset()
    assert (await writer.apply(owner, DEPLOYMENTS, deployment(image="nginx:2"))).outcome \
        is Outcome.UNCHANGED
    assert cluster.stats.writes(user_agent=AGENT) == 0


async def test_service_without_generation_is_repaired_by_comparing_fields(
        writer: ChildWriter, kube: KubeClient) -> None:
    owner = await parent(kube)
    svc = {"apiVersion": "v1", "kind": "Service",
           "metadata": {"name": "child", "namespace": "default"},
           "spec": {"selector": {"app": "x"}, "ports": [{"name": "http", "port": 8000}]}}
    created = await writer.apply(owner, SERVICES, svc)
    assert created.live is not None
    await settled(writer, SERVICES, "child", created.live["metadata"]["resourceVersion"])
    assert (await writer.apply(owner, SERVICES, svc)).outcome is Outcome.UNCHANGED
    edited = await kube.patch(SERVICES, "default", "child", {"spec": {"selector": {"app": "y"}}})
    await settled(writer, SERVICES, "child", edited["metadata"]["resourceVersion"])
    repaired = await writer.apply(owner, SERVICES, svc)
    assert repaired.outcome is Outcome.UPDATED
    assert repaired.live is not None
    assert repaired.live["spec"]["selector"] == {"app": "x"}


async def test_objects_we_do_not_own_are_neither_adopted_nor_deleted(
        writer: ChildWriter, kube: KubeClient) -> None:
    owner = await parent(kube)
    foreign = await kube.create(DEPLOYMENTS, deployment(image="theirs:1"))
    await settled(writer, DEPLOYMENTS, "child", foreign["metadata"]["resourceVersion"])
    assert (await writer.apply(owner, DEPLOYMENTS, deployment())).outcome is Outcome.NOT_OWNED
    assert (await writer.delete(owner, DEPLOYMENTS, "default", "child")).outcome \
        is Outcome.NOT_OWNED
    live = await kube.get(DEPLOYMENTS, "default", "child")
    assert live["spec"]["template"]["spec"]["containers"][0]["image"] == "theirs:1"


async def test_delete_removes_owned_child_and_records_an_event(
        writer: ChildWriter, kube: KubeClient) -> None:
    owner = await parent(kube)
    created = await writer.apply(owner, DEPLOYMENTS, deployment())
    assert created.live is not None
    await settled(writer, DEPLOYMENTS, "child", created.live["metadata"]["resourceVersion"])
    assert (await writer.delete(owner, DEPLOYMENTS, "default", "child")).outcome \
        is Outcome.DELETED
    events = await kube.list(Resource("", "v1", "events", "Event"), "default")
    reasons = sorted(e["reason"] for e in events["items"])
    assert reasons == ["CreateDeployment", "DeleteDeployment"]


async def test_a_label_or_annotation_we_no_longer_want_is_removed_and_foreign_keys_stay(
        writer: ChildWriter, kube: KubeClient, cluster: LocalCluster) -> None:
    owner = await parent(kube)
    wanted = deployment(labels={"a": "1", "team": "a"})
    wanted["metadata"]["annotations"] = {"note": "x"}
    created = await writer.apply(owner, DEPLOYMENTS, wanted)
    assert created.live is not None
    # Someone else labels and annotates our child.
    edited = await kube.patch(DEPLOYMENTS, "default", "child", {"metadata": {
        "labels": {"theirs": "1"}, "annotations": {"their-note": "y"}}})
    await settled(writer, DEPLOYMENTS, "child", edited["metadata"]["resourceVersion"])

    changed = deployment(labels={"a": "2"})  # team removed, a changed, spec unchanged
    result = await writer.apply(owner, DEPLOYMENTS, changed)
    assert result.outcome is Outcome.UPDATED
    assert result.live is not None
    meta = result.live["metadata"]
    assert meta["labels"] == {"a": "2", "theirs": "1"}
    assert "note" not in meta["annotations"] and meta["annotations"]["their-note"] == "y"
    await settled(writer, DEPLOYMENTS, "child", meta["resourceVersion"])
    cluster.stats.reset()
    assert (await writer.apply(owner, DEPLOYMENTS, changed)).outcome is Outcome.UNCHANGED
    assert cluster.stats.writes(user_agent=AGENT) == 0


async def test_a_child_without_the_key_record_is_not_rewritten_for_it(
        writer: ChildWriter, kube: KubeClient, cluster: LocalCluster) -> None:
    """Children made before the record existed: no write until something really changes."""
    owner = await parent(kube)
    created = await writer.apply(owner, DEPLOYMENTS, deployment())
    assert created.live is not None
    old = await kube.patch(DEPLOYMENTS, "default", "child", [
        {"op": "remove", "path": "/metadata/annotations/nvidia.com~1last-applied-metadata-keys"},
    ], patch_type="json")
    await settled(writer, DEPLOYMENTS, "child", old["metadata"]["resourceVersion"])
    cluster.stats.reset()
    assert (await writer.apply(owner, DEPLOYMENTS, deployment())).outcome is Outcome.UNCHANGED
    assert cluster.stats.writes(user_agent=AGENT) == 0
