"""Which version of a custom resource a validating webhook is sent, as kube-apiserver decides:
the version of the request when the webhook's rules list it; otherwise, with matchPolicy
Equivalent, a version they list, the objects converted by the CRD's conversion webhook (the
old object of an update too); with Exact, no call."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from webhook_support import TestWebhook, allow, configuration, webhook

from controller.client import ClientConfig, KubeClient
from controller.metrics import Metrics
from controller.resource import Resource
from hack.localcluster.conversion.toy_webhook import (
    V1,
    V2,
    WIDGETS_V1,
    ToyConversionWebhook,
    widget,
    widget_crd,
)
from hack.localcluster.server import LocalCluster
from hack.localcluster.testing import Kubectl

Json = dict[str, Any]
CRDS = Resource("apiextensions.k8s.io", "v1", "customresourcedefinitions",
                "CustomResourceDefinition", namespaced=False)


@pytest.fixture
async def client(kubeconfig: Path) -> AsyncIterator[KubeClient]:
    c = await KubeClient.connect(kubeconfig, ClientConfig(qps=None), Metrics())
    try:
        yield c
    finally:
        await c.close()


@pytest.fixture
async def widgets(client: KubeClient, cluster: LocalCluster) -> AsyncIterator[None]:
    """The two-version Widget CRD (v2 stored), converted by the toy webhook."""
    toy = await ToyConversionWebhook().start()
    try:
        await client.create(CRDS, widget_crd(toy.client_config()))
        await cluster.settle()
        yield
    finally:
        await toy.stop()
        toy.tls.close()


@pytest.fixture
async def hook(tmp_path: Path) -> AsyncIterator[TestWebhook]:
    server = await TestWebhook(tmp_path, answer=allow).start()
    try:
        yield server
    finally:
        await server.stop()


async def _register(kubectl: Kubectl, hook: TestWebhook, versions: list[str],
                    policy: str = "Equivalent") -> None:
    config = {"url": hook.url("/validate"), "caBundle": hook.ca_bundle}
    await kubectl("apply", "-f", "-", stdin=configuration(
        "ValidatingWebhookConfiguration", "v", [webhook(
            "v.example.com", config, groups=["example.com"], resources=["widgets"],
            matchPolicy=policy,
            rules=[{"apiGroups": ["example.com"], "apiVersions": versions,
                    "operations": ["CREATE", "UPDATE"], "resources": ["widgets"]}])]))


async def test_a_webhook_listing_the_requests_version_gets_the_object_as_written(
        client: KubeClient, kubectl: Kubectl, widgets: None, hook: TestWebhook) -> None:
    await _register(kubectl, hook, ["v1", "v2"])
    await client.create(WIDGETS_V1, widget("a", size=3))
    (request,) = hook.requests
    assert request["kind"]["version"] == request["requestKind"]["version"] == "v1"
    assert request["resource"]["version"] == "v1"
    assert request["object"]["apiVersion"] == V1
    assert request["object"]["spec"] == {"size": 3}


async def test_a_webhook_listing_another_version_gets_converted_objects(
        client: KubeClient, kubectl: Kubectl, widgets: None, hook: TestWebhook) -> None:
    await _register(kubectl, hook, ["v2"])
    created = await client.create(WIDGETS_V1, widget("a", size=3))
    created["spec"]["size"] = 4
    await client.update(WIDGETS_V1, created)
    create, update = hook.requests
    assert (create["kind"]["version"], create["requestKind"]["version"]) == ("v2", "v1")
    assert create["object"]["apiVersion"] == V2
    assert create["object"]["spec"] == {"dimension": 3}
    assert update["object"]["spec"] == {"dimension": 4}
    assert update["oldObject"]["apiVersion"] == V2
    assert update["oldObject"]["spec"] == {"dimension": 3}


async def test_an_exact_webhook_of_another_version_is_not_called(
        client: KubeClient, kubectl: Kubectl, widgets: None, hook: TestWebhook) -> None:
    await _register(kubectl, hook, ["v2"], policy="Exact")
    await client.create(WIDGETS_V1, widget("a", size=3))
    assert hook.requests == []
