"""The generic conversion webhook (`/convert` on the webhook server, over HTTPS) and the
keeping of a CRD's `spec.conversion`: a toy converter renaming one field between versions."""

from __future__ import annotations

import asyncio
import base64
import datetime
import ssl
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from harness import CRDS, schemaless_crd
from prometheus_client import CollectorRegistry

from controller.certificates import CertificateAuthority, new_authority, serving_certificate
from controller.client import KubeClient
from controller.conversion_webhook import ConversionMetrics, ConversionWebhook
from controller.crd_conversion import (
    ConversionKeeper,
    desired_conversion,
    service_client_config,
    url_client_config,
)
from controller.resource import Resource
from controller.webhook import TLSConfig, WebhookMetrics, WebhookServer
from controller.webhook_certs import SECRETS, ManagedCertificates

Json = dict[str, Any]
V1, V2 = "test.example.com/v1", "test.example.com/v2"


def rename_size(obj: Json, desired: str) -> Json:
    """v1 `spec.size` is v2 `spec.dimension`; `spec.broken` cannot be converted."""
    spec = dict(obj.get("spec") or {})
    if "broken" in spec:
        raise ValueError("spec.broken: cannot be converted")
    if desired == V2 and "size" in spec:
        spec["dimension"] = spec.pop("size")
    elif desired == V1 and "dimension" in spec:
        spec["size"] = spec.pop("dimension")
    return {**obj, "apiVersion": desired, "spec": spec}


def _widget(name: str, api_version: str = V1, **spec: Any) -> Json:
    return {"apiVersion": api_version, "kind": "Widget",
            "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
            "spec": spec}


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[tuple[WebhookServer, ConversionWebhook,
                                                         CertificateAuthority]]:
    ca = new_authority("t", datetime.timedelta(days=1))
    cert = serving_certificate(ca, ["localhost"], ["127.0.0.1"])
    tls = TLSConfig()
    tls.load(cert.cert_pem, cert.key_pem)
    registry = CollectorRegistry()
    server = WebhookServer(tls, WebhookMetrics(registry), host="127.0.0.1", port=0)
    conversion = ConversionWebhook(ConversionMetrics(registry))
    conversion.register("test.example.com", rename_size)
    server.route("/convert", conversion.handle)
    await server.start()
    try:
        yield server, conversion, ca
    finally:
        await server.stop()
        tls.close()


async def _post(server: WebhookServer, ca: CertificateAuthority, body: Any) -> tuple[int, Json]:
    context = ssl.create_default_context(cadata=ca.cert_pem.decode())
    async with aiohttp.ClientSession() as session, session.post(
            f"https://127.0.0.1:{server.port}/convert", json=body, ssl=context) as answer:
        return answer.status, await answer.json()


def _review(uid: str, desired: str, objects: list[Json]) -> Json:
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
            "request": {"uid": uid, "desiredAPIVersion": desired, "objects": objects}}


async def test_objects_are_converted_in_order_under_the_request_uid(served: Any) -> None:
    server, conversion, ca = served
    assert "/convert" in server.paths
    objects = [_widget("a", size=1), _widget("b", V2, dimension=2), _widget("c", size=3)]
    code, review = await _post(server, ca, _review("u-1", V2, objects))
    assert code == 200
    assert review["apiVersion"] == "apiextensions.k8s.io/v1"
    assert review["kind"] == "ConversionReview"
    response = review["response"]
    assert response["uid"] == "u-1"
    assert response["result"] == {"status": "Success"}
    assert [(o["metadata"]["name"], o["apiVersion"], o["spec"])
            for o in response["convertedObjects"]] == [
        ("a", V2, {"dimension": 1}), ("b", V2, {"dimension": 2}), ("c", V2, {"dimension": 3})]
    code, review = await _post(server, ca, _review("u-2", V1, response["convertedObjects"]))
    assert [o["spec"] for o in review["response"]["convertedObjects"]] == [
        {"size": 1}, {"size": 2}, {"size": 3}]
    metrics = conversion.metrics
    assert metrics.requests.labels("/convert", V2, "success")._value.get() == 1
    assert metrics.objects.labels("/convert", V2)._value.get() == 3


async def test_an_object_that_cannot_be_converted_fails_the_review(served: Any) -> None:
    server, conversion, ca = served
    objects = [_widget("a", size=1), _widget("b", broken=True)]
    code, review = await _post(server, ca, _review("u-3", V2, objects))
    assert code == 200
    response = review["response"]
    assert response["uid"] == "u-3"
    assert response["result"] == {
        "status": "Failure", "message": "object 1 (Widget default/b): converting "
        "test.example.com/v1 to test.example.com/v2: spec.broken: cannot be converted"}
    assert "convertedObjects" not in response
    other = {"apiVersion": "other.example.com/v1", "kind": "Gadget", "metadata": {"name": "g"}}
    _, review = await _post(server, ca, _review("u-4", "other.example.com/v2", [other]))
    assert review["response"]["result"]["message"] == (
        "object 0 (Gadget g): no converter for other.example.com/v1, Kind=Gadget")
    assert conversion.metrics.requests.labels("/convert", V2, "failure")._value.get() == 1
    code, body = await _post(server, ca, {"kind": "ConversionReview"})
    assert code == 400 and body == {"error": "the ConversionReview has no request uid"}


async def test_a_converter_per_kind_wins_over_the_groups() -> None:
    conversion = ConversionWebhook(ConversionMetrics(CollectorRegistry()))
    conversion.register("test.example.com", rename_size)
    conversion.register("test.example.com", lambda o, d: {**o, "apiVersion": d},
                        kind="Gadget")
    assert conversion.converter_for(V1, "Widget") is rename_size
    assert conversion.converter_for(V1, "Gadget") is not rename_size
    with pytest.raises(ValueError):
        conversion.register("test.example.com", rename_size)


def _two_versions() -> Json:
    crd = schemaless_crd("widget", "Widget")
    v1 = crd["spec"]["versions"][0]
    crd["spec"]["versions"] = [v1, {**v1, "name": "v2", "storage": False}]
    return crd


async def test_the_keeper_writes_spec_conversion_once_and_certificates_keep_its_ca(
        client: KubeClient) -> None:
    await client.create(CRDS, _two_versions())
    name = "widgets.test.example.com"
    tls = TLSConfig()
    certs = ManagedCertificates(client, tls, "default", "conv-cert", ["localhost"],
                                ["127.0.0.1"], conversion_crds=[name])
    keeper = ConversionKeeper(client, [name], url_client_config("https://127.0.0.1:1/convert"),
                              lambda: certs.ca_pem or None, keeps_ca_bundle=False)
    assert not await keeper.ensure()  # no CA yet
    await certs.sync()  # no Webhook stanza yet: nothing to inject into
    assert (await client.get(CRDS, None, name))["spec"]["conversion"] == {"strategy": "None"}
    assert await keeper.ensure()
    crd = await client.get(CRDS, None, name)
    assert crd["spec"]["conversion"] == desired_conversion(
        url_client_config("https://127.0.0.1:1/convert"), certs.ca_pem)
    secret = await client.get(SECRETS, "default", "conv-cert")
    assert crd["spec"]["conversion"]["webhook"]["clientConfig"]["caBundle"] == \
        secret["data"]["ca.crt"]
    rv = crd["metadata"]["resourceVersion"]
    assert await keeper.ensure()  # idle: no write
    await certs.sync()
    assert (await client.get(CRDS, None, name))["metadata"]["resourceVersion"] == rv

    # A caBundle someone changed is put back by the certificates; the rest by the keeper.
    await client.patch(CRDS, None, name, {"spec": {"conversion": {"webhook": {"clientConfig": {
        "caBundle": base64.b64encode(b"stale").decode()}}}}})
    await certs.sync()
    crd = await client.get(CRDS, None, name)
    assert crd["spec"]["conversion"]["webhook"]["clientConfig"]["caBundle"] == \
        secret["data"]["ca.crt"]
    in_cluster = service_client_config("operators", "hook")
    keeper.client_config = in_cluster
    assert await keeper.ensure()
    crd = await client.get(CRDS, None, name)
    assert crd["spec"]["conversion"]["webhook"] == {
        "clientConfig": {**in_cluster, "caBundle": secret["data"]["ca.crt"]},
        "conversionReviewVersions": ["v1"]}
    keeper.interval = 0.05
    runner = asyncio.create_task(keeper.run())
    await asyncio.sleep(0.3)
    runner.cancel()
    await asyncio.gather(runner, return_exceptions=True)
    assert (await client.get(CRDS, None, name))["metadata"]["resourceVersion"] == \
        crd["metadata"]["resourceVersion"]
    tls.close()


async def test_the_api_server_converts_through_the_kept_stanza(client: KubeClient) -> None:
    """Everything together: certificates made and kept in a Secret, the stanza written with
    their CA, and the API server converting through the webhook server."""
    crd = _two_versions()
    crd["spec"]["versions"][0]["storage"], crd["spec"]["versions"][1]["storage"] = False, True
    await client.create(CRDS, crd)
    tls = TLSConfig()
    registry = CollectorRegistry()
    server = WebhookServer(tls, WebhookMetrics(registry), host="127.0.0.1", port=0)
    conversion = ConversionWebhook(ConversionMetrics(registry))
    conversion.register("test.example.com", rename_size)
    server.route("/convert", conversion.handle)
    await server.start()
    name = "widgets.test.example.com"
    certs = ManagedCertificates(client, tls, "default", "conv-cert", ["localhost"],
                                ["127.0.0.1"], conversion_crds=[name])
    keeper = ConversionKeeper(client, [name],
                              url_client_config(f"https://127.0.0.1:{server.port}/convert"),
                              lambda: certs.ca_pem or None, keeps_ca_bundle=False)
    try:
        await certs.sync()
        assert await keeper.ensure()
        v1 = Resource("test.example.com", "v1", "widgets", "Widget")
        v2 = Resource("test.example.com", "v2", "widgets", "Widget")
        created = await client.create(v1, {**_widget("a", size=2), "metadata": {
            "name": "a", "namespace": "default"}})
        assert created["spec"] == {"size": 2}
        assert (await client.get(v2, "default", "a"))["spec"] == {"dimension": 2}
        assert (await client.get(v1, "default", "a"))["spec"] == {"size": 2}
        assert conversion.metrics.requests.labels("/convert", V2, "success")._value.get() == 1
    finally:
        await server.stop()
        tls.close()
