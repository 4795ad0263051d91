"""The local API server converts custom resources through a CRD's conversion webhook, as
kube-apiserver does: reads in the version asked for, writes stored in the storage version,
kube-apiserver's errors when the webhook fails or is down. The webhook is the runtime's own
(`controller.conversion_webhook`) with a toy converter
(`hack.localcluster.conversion.toy_webhook`)."""

from __future__ import annotations

import asyncio
import json
import ssl
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from webhook_support import TestWebhook, configuration, patch_of, webhook

from controller.client import ClientConfig, KubeClient
from controller.errors import ApiError
from controller.metrics import Metrics
from controller.resource import Resource
from hack.localcluster.conversion.toy_webhook import (
    CRD_NAME,
    V1,
    V2,
    WIDGETS_V1,
    WIDGETS_V2,
    ToyConversionWebhook,
    widget,
    widget_crd,
)
from hack.localcluster.server import LocalCluster
from hack.localcluster.testing import Kubectl, eventually

Json = dict[str, Any]
CRDS = Resource("apiextensions.k8s.io", "v1", "customresourcedefinitions",
                "CustomResourceDefinition", namespaced=False)


@pytest.fixture
async def toy() -> AsyncIterator[ToyConversionWebhook]:
    hook = await ToyConversionWebhook().start()
    try:
        yield hook
    finally:
        await hook.stop()
        hook.tls.close()


@pytest.fixture
async def client(kubeconfig: Path) -> AsyncIterator[KubeClient]:
    c = await KubeClient.connect(kubeconfig, ClientConfig(qps=None), Metrics())
    try:
        yield c
    finally:
        await c.close()


@pytest.fixture
async def widgets(client: KubeClient, cluster: LocalCluster,
                  toy: ToyConversionWebhook) -> ToyConversionWebhook:
    await client.create(CRDS, widget_crd(toy.client_config()))
    await cluster.settle()
    return toy


def _stored(cluster: LocalCluster, name: str) -> Json:
    obj = cluster.storage.get(("example.com", "widgets"), "default", name)
    assert obj is not None
    return obj


async def test_a_v1_write_is_stored_as_v2_and_read_in_either_version(
        client: KubeClient, cluster: LocalCluster, widgets: ToyConversionWebhook) -> None:
    created = await client.create(WIDGETS_V1, widget("a", size=3))
    assert created["apiVersion"] == V1 and created["spec"] == {"size": 3}
    stored = _stored(cluster, "a")
    assert stored["apiVersion"] == V2 and stored["spec"] == {"dimension": 3}
    assert created["metadata"]["resourceVersion"] == stored["metadata"]["resourceVersion"]
    assert widgets.converted == [(V2, "a"), (V1, "a")]  # stored, then answered

    widgets.converted.clear()
    as_v2 = await client.get(WIDGETS_V2, "default", "a")
    assert as_v2["apiVersion"] == V2 and as_v2["spec"] == {"dimension": 3}
    assert widgets.converted == []  # stored in v2: nothing to convert
    as_v1 = await client.get(WIDGETS_V1, "default", "a")
    assert as_v1["spec"] == {"size": 3} and as_v1["metadata"] == as_v2["metadata"]
    assert widgets.converted == [(V1, "a")]

    await client.create(WIDGETS_V2, widget("b", V2, dimension=4))
    widgets.converted.clear()
    listed = await client.list(WIDGETS_V1, "default")
    assert listed["apiVersion"] == V1
    assert [(o["apiVersion"], o["spec"]) for o in listed["items"]] == [
        (V1, {"size": 3}), (V1, {"size": 4})]
    assert sorted(widgets.converted) == [(V1, "a"), (V1, "b")]  # one review per object
    listed = await client.list(WIDGETS_V2, "default")
    assert [o["spec"] for o in listed["items"]] == [{"dimension": 3}, {"dimension": 4}]


async def test_updates_patches_status_and_scale_in_v1_keep_the_storage_version(
        client: KubeClient, cluster: LocalCluster, widgets: ToyConversionWebhook) -> None:
    await client.create(WIDGETS_V1, widget("a", size=1, replicas=1))
    patched = await client.patch(WIDGETS_V1, "default", "a", {"spec": {"size": 2}})
    assert patched["spec"] == {"size": 2, "replicas": 1}
    assert _stored(cluster, "a")["spec"] == {"dimension": 2, "replicas": 1}
    patched["spec"]["size"] = 5
    updated = await client.update(WIDGETS_V1, patched)
    assert updated["spec"]["size"] == 5 and updated["metadata"]["generation"] == 3
    assert _stored(cluster, "a")["spec"]["dimension"] == 5
    updated["status"] = {"replicas": 1}
    status = await client.update(WIDGETS_V1, updated, subresource="status")
    assert status["status"] == {"replicas": 1} and status["spec"]["size"] == 5
    stored = _stored(cluster, "a")
    assert stored["apiVersion"] == V2 and stored["status"] == {"replicas": 1}
    scale = await client.get(WIDGETS_V1, "default", "a", subresource="scale")
    assert scale["spec"] == {"replicas": 1} and scale["status"]["replicas"] == 1
    scale = await client.patch(WIDGETS_V1, "default", "a", {"spec": {"replicas": 3}},
                               subresource="scale")
    assert scale["spec"] == {"replicas": 3}
    stored = _stored(cluster, "a")
    assert stored["apiVersion"] == V2
    assert stored["spec"] == {"dimension": 5, "replicas": 3}
    deleted = await client.delete(WIDGETS_V1, "default", "a")
    assert deleted["apiVersion"] == V1 and deleted["spec"]["size"] == 5


async def _events(cluster: LocalCluster, path: str, count: int) -> list[Json]:
    """The first `count` events of a watch at `path` (ERROR ends it early)."""
    context = ssl.create_default_context(cadata=cluster.certs.ca_pem.decode())
    headers = {"Authorization": f"Bearer {cluster.config.token}"}
    events: list[Json] = []
    async with aiohttp.ClientSession() as session, session.get(
            f"{cluster.url}{path}", params={"watch": "true", "timeoutSeconds": "5"},
            headers=headers, ssl=context) as response:
        async for line in response.content:
            events.append(json.loads(line))
            if len(events) == count or events[-1]["type"] == "ERROR":
                break
    return events


async def test_watches_send_each_version(client: KubeClient, cluster: LocalCluster,
                                         widgets: ToyConversionWebhook) -> None:
    await client.create(WIDGETS_V1, widget("a", size=1))
    path_v1 = "/apis/example.com/v1/namespaces/default/widgets"
    watch_v1 = asyncio.create_task(_events(cluster, path_v1, 3))
    watch_v2 = asyncio.create_task(_events(cluster, path_v1.replace("/v1/", "/v2/"), 3))
    await asyncio.sleep(0.3)
    await client.create(WIDGETS_V2, widget("b", V2, dimension=2))
    await client.delete(WIDGETS_V1, "default", "a")
    v1_events, v2_events = await asyncio.gather(watch_v1, watch_v2)
    assert [(e["type"], e["object"]["metadata"]["name"], e["object"]["apiVersion"],
             e["object"]["spec"]) for e in v1_events] == [
        ("ADDED", "a", V1, {"size": 1}), ("ADDED", "b", V1, {"size": 2}),
        ("DELETED", "a", V1, {"size": 1})]
    assert [(e["type"], e["object"]["spec"]) for e in v2_events] == [
        ("ADDED", {"dimension": 1}), ("ADDED", {"dimension": 2}), ("DELETED", {"dimension": 1})]


async def test_a_watch_event_is_converted_once_for_all_watchers_of_a_version(
        client: KubeClient, cluster: LocalCluster, widgets: ToyConversionWebhook) -> None:
    # kube-apiserver serves each version's watchers from that version's watch cache, which
    # converts each change once: three v1 watchers cost one review per change, not three.
    path_v1 = "/apis/example.com/v1/namespaces/default/widgets"
    watches = [asyncio.create_task(_events(cluster, path_v1, 2)) for _ in range(3)]
    watch_v2 = asyncio.create_task(_events(cluster, path_v1.replace("/v1/", "/v2/"), 2))
    await asyncio.sleep(0.3)
    await client.create(WIDGETS_V2, widget("b", V2, dimension=2))
    await client.patch(WIDGETS_V2, "default", "b", {"spec": {"dimension": 3}})
    seen = await asyncio.gather(*watches)
    for events in seen:
        assert [(e["type"], e["object"]["apiVersion"], e["object"]["spec"])
                for e in events] == [("ADDED", V1, {"size": 2}), ("MODIFIED", V1, {"size": 3})]
    assert [e["object"]["spec"] for e in await watch_v2] == [{"dimension": 2},
                                                             {"dimension": 3}]
    assert widgets.converted == [(V1, "b"), (V1, "b")]


async def test_stored_versions_grow_when_the_storage_version_changes(
        client: KubeClient, cluster: LocalCluster, widgets: ToyConversionWebhook) -> None:
    crd = await client.get(CRDS, None, CRD_NAME)
    assert crd["status"]["storedVersions"] == ["v2"]
    await client.create(WIDGETS_V2, widget("old", V2, dimension=1))
    crd = widget_crd(widgets.client_config(), storage="v1")
    crd["metadata"] = (await client.get(CRDS, None, CRD_NAME))["metadata"]
    await client.update(CRDS, crd)
    await cluster.settle()
    assert (await client.get(CRDS, None, CRD_NAME))["status"]["storedVersions"] == ["v2", "v1"]
    await client.create(WIDGETS_V2, widget("new", V2, dimension=2))
    assert _stored(cluster, "new")["apiVersion"] == V1
    assert _stored(cluster, "new")["spec"] == {"size": 2}
    assert _stored(cluster, "old")["apiVersion"] == V2  # as written until written again
    listed = await client.list(WIDGETS_V1, "default")
    assert [o["spec"] for o in listed["items"]] == [{"size": 2}, {"size": 1}]


async def test_a_failed_conversion_is_kube_apiservers_500(
        client: KubeClient, cluster: LocalCluster, kubectl: Kubectl,
        widgets: ToyConversionWebhook) -> None:
    await client.create(WIDGETS_V2, widget("w", V2, broken=True))
    message = ("conversion webhook for example.com/v2, Kind=Widget failed: object 0 (Widget "
               "default/w): converting example.com/v2 to example.com/v1: spec.broken: cannot "
               "be converted")
    with pytest.raises(ApiError) as failed:
        await client.get(WIDGETS_V1, "default", "w")
    assert failed.value.code == 500 and failed.value.message == message
    assert failed.value.status == {"kind": "Status", "apiVersion": "v1", "metadata": {},
                                   "status": "Failure", "message": message, "code": 500}
    with pytest.raises(ApiError) as failed:
        await client.list(WIDGETS_V1, "default")
    assert failed.value.message == message
    result = await kubectl.run("get", "widgets.v1.example.com", "w")
    assert result.code == 1 and f"Error from server: {message}" in result.stderr
    assert (await client.get(WIDGETS_V2, "default", "w"))["spec"] == {"broken": True}

    with pytest.raises(ApiError) as failed:
        await client.create(WIDGETS_V1, widget("x", broken=True))
    assert failed.value.code == 500 and failed.value.message.startswith(
        "conversion webhook for example.com/v1, Kind=Widget failed: object 0 (Widget "
        "default/x): converting example.com/v1 to example.com/v2:")
    assert cluster.storage.get(("example.com", "widgets"), "default", "x") is None
    events = await _events(cluster, "/apis/example.com/v1/namespaces/default/widgets", 2)
    assert events == [{"type": "ERROR", "object": failed.value.status | {
        "message": message}}]


async def test_a_webhook_that_is_down_fails_what_needs_it(
        client: KubeClient, cluster: LocalCluster, kubectl: Kubectl,
        widgets: ToyConversionWebhook) -> None:
    await client.create(WIDGETS_V1, widget("a", size=1))
    await widgets.stop()
    port = widgets.server.port
    url = f"https://127.0.0.1:{port}/convert?timeout=30s"
    with pytest.raises(ApiError) as failed:
        await client.get(WIDGETS_V1, "default", "a")
    assert failed.value.code == 500
    assert failed.value.message == (
        f'conversion webhook for example.com/v2, Kind=Widget failed: Post "{url}": dial tcp '
        f"127.0.0.1:{port}: connect: connection refused")
    with pytest.raises(ApiError) as failed:
        await client.create(WIDGETS_V1, widget("b", size=1))
    assert failed.value.message.startswith(
        "conversion webhook for example.com/v1, Kind=Widget failed: Post")
    result = await kubectl.run("get", "widgets.v1.example.com")
    assert result.code == 1
    assert "Error from server: conversion webhook for example.com/v2, Kind=Widget failed: " \
        in result.stderr and "connection refused" in result.stderr
    # What is stored in the version asked for needs no webhook.
    assert (await client.get(WIDGETS_V2, "default", "a"))["spec"] == {"dimension": 1}
    await client.create(WIDGETS_V2, widget("c", V2, dimension=1))
    assert len((await client.list(WIDGETS_V2, "default"))["items"]) == 2


async def test_the_none_strategy_only_rewrites_the_api_version(
        client: KubeClient, cluster: LocalCluster) -> None:
    await client.create(CRDS, widget_crd(None))
    await cluster.settle()
    await client.create(WIDGETS_V1, widget("a", size=1))
    assert _stored(cluster, "a")["apiVersion"] == V2
    assert _stored(cluster, "a")["spec"] == {"size": 1}
    assert (await client.get(WIDGETS_V1, "default", "a"))["spec"] == {"size": 1}


async def test_the_conversion_stanza_is_validated_and_defaulted(client: KubeClient) -> None:
    async def causes(conversion: Json) -> list[tuple[str, str]]:
        crd = widget_crd(None)
        crd["spec"]["conversion"] = conversion
        with pytest.raises(ApiError) as refused:
            await client.create(CRDS, crd)
        assert refused.value.code == 422
        return [(c["field"], c["message"]) for c in refused.value.status["details"]["causes"]]

    assert await causes({"strategy": "Webhook"}) == [
        ("spec.conversion.webhookClientConfig",
         "Required value: required when strategy is set to Webhook"),
        ("spec.conversion.conversionReviewVersions", "Required value")]
    assert await causes({"strategy": "Webhook", "webhook": {
        "clientConfig": {"url": "http://127.0.0.1/convert"},
        "conversionReviewVersions": ["v2"]}}) == [
        ("spec.conversion.webhookClientConfig.url", "Invalid value: \"http\": 'https' is the "
         "only allowed URL scheme; desired format: https://host[/path]"),
        ("spec.conversion.conversionReviewVersions",
         'Invalid value: []string{"v2"}: must include at least one of v1, v1beta1')]
    assert await causes({"strategy": "None", "webhook": {
        "clientConfig": {"url": "https://127.0.0.1/convert"}}}) == [
        ("spec.conversion.webhookClientConfig",
         "Forbidden: should not be set when strategy is not set to Webhook")]
    crd = widget_crd({"service": {"namespace": "default", "name": "hook", "path": "/convert"}})
    created = await client.create(CRDS, crd)
    assert created["spec"]["conversion"]["webhook"]["clientConfig"]["service"]["port"] == 443


async def test_a_webhook_behind_a_service(client: KubeClient, cluster: LocalCluster,
                                          toy: ToyConversionWebhook) -> None:
    await client.create(CRDS, widget_crd(toy.service_client_config()))
    await cluster.settle()
    await client.create(WIDGETS_V2, widget("a", V2, dimension=1))
    with pytest.raises(ApiError) as failed:
        await client.get(WIDGETS_V1, "default", "a")
    assert failed.value.message == (
        "conversion webhook for example.com/v2, Kind=Widget failed: Post "
        '"https://widget-conversion.default.svc:443/convert?timeout=30s": no endpoints '
        'available for service "widget-conversion"')
    service, endpoints = toy.service_objects()
    await client.create(Resource("", "v1", "services", "Service"), service)
    await client.create(Resource("discovery.k8s.io", "v1", "endpointslices", "EndpointSlice"),
                        endpoints)
    assert (await client.get(WIDGETS_V1, "default", "a"))["spec"] == {"size": 1}


async def test_admission_webhooks_of_the_other_version_see_converted_objects(
        client: KubeClient, kubectl: Kubectl, widgets: ToyConversionWebhook,
        tmp_path: Path) -> None:
    admission = await TestWebhook(tmp_path).start()
    try:
        admission.answer = lambda request: patch_of([
            {"op": "replace", "path": "/spec/dimension", "value": 7}])
        config = {"url": admission.url("/mutate"), "caBundle": admission.ca_bundle}
        await kubectl("apply", "-f", "-", stdin=configuration(
            "MutatingWebhookConfiguration", "m", [webhook(
                "m.example.com", config, groups=["example.com"], resources=["widgets"],
                rules=[{"apiGroups": ["example.com"], "apiVersions": ["v2"],
                        "operations": ["CREATE"], "resources": ["widgets"]}])]))
        created = await client.create(WIDGETS_V1, widget("a", size=3))
        (request,) = admission.requests
        assert request["kind"] == {"group": "example.com", "version": "v2", "kind": "Widget"}
        assert request["requestKind"]["version"] == "v1"
        assert request["object"]["apiVersion"] == V2
        assert request["object"]["spec"] == {"dimension": 3}
        assert created["spec"] == {"size": 7}
        assert (await client.get(WIDGETS_V2, "default", "a"))["spec"] == {"dimension": 7}
    finally:
        await admission.stop()


async def test_garbage_collection_changes_stored_objects_without_converting(
        client: KubeClient, cluster: LocalCluster, widgets: ToyConversionWebhook) -> None:
    configmaps = Resource("", "v1", "configmaps", "ConfigMap")
    owners = [await client.create(configmaps, {"metadata": {"name": n, "namespace": "default"}})
              for n in ("orphaned", "cascaded")]
    for owner in owners:
        child = widget(f"of-{owner['metadata']['name']}", size=1)
        child["metadata"]["ownerReferences"] = [{
            "apiVersion": "v1", "kind": "ConfigMap", "name": owner["metadata"]["name"],
            "uid": owner["metadata"]["uid"]}]
        await client.create(WIDGETS_V1, child)
    widgets.converted.clear()
    await client.delete(configmaps, "default", "orphaned", propagation_policy="Orphan")
    await client.delete(configmaps, "default", "cascaded")

    async def collected() -> bool:
        names = [o["metadata"]["name"] for o in (await client.list(WIDGETS_V2))["items"]]
        orphan = _stored(cluster, "of-orphaned")
        return names == ["of-orphaned"] and not orphan["metadata"].get("ownerReferences")

    await eventually(collected, within=10, what="the GC done")
    assert _stored(cluster, "of-orphaned")["spec"] == {"dimension": 1}
    assert widgets.converted == []


async def test_a_wrong_path_is_the_servers_404(client: KubeClient, cluster: LocalCluster,
                                               toy: ToyConversionWebhook) -> None:
    config = toy.client_config()
    config["url"] = config["url"].replace("/convert", "/nothing")
    await client.create(CRDS, widget_crd(config))
    await cluster.settle()
    with pytest.raises(ApiError) as failed:
        await client.create(WIDGETS_V1, widget("a", size=1))
    assert failed.value.message == ("conversion webhook for example.com/v1, Kind=Widget "
                                    "failed: the server could not find the requested resource")
