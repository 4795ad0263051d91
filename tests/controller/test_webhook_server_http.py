"""The webhook server as an HTTP server, spoken to over HTTPS: paths and methods answered as a
router would, bodies up to `MAX_BODY`, kept-alive connections, JSON answers, a handler's
timeout, and the request count of each endpoint on one port."""

from __future__ import annotations

import asyncio
import datetime
import json
import ssl
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from prometheus_client import CollectorRegistry

from controller.certificates import CertificateAuthority, new_authority, serving_certificate
from controller.conversion_webhook import ConversionMetrics, ConversionWebhook
from controller.webhook import (
    MAX_BODY,
    AdmissionRequest,
    AdmissionResponse,
    TLSConfig,
    WebhookMetrics,
    WebhookServer,
)

Json = dict[str, Any]
V1, V2 = "test.example.com/v1", "test.example.com/v2"


async def _allow(request: AdmissionRequest) -> AdmissionResponse:
    return AdmissionResponse.allow(warnings=(f"saw {request.name}",))


async def _slow(request: AdmissionRequest) -> AdmissionResponse:
    await asyncio.sleep(30)
    return AdmissionResponse.allow()


def _renamed(obj: Json, desired: str) -> Json:
    return {**obj, "apiVersion": desired}


@pytest.fixture
async def served() -> AsyncIterator[tuple[WebhookServer, CertificateAuthority]]:
    ca = new_authority("t", datetime.timedelta(days=1))
    cert = serving_certificate(ca, ["localhost"], ["127.0.0.1"])
    tls = TLSConfig()
    tls.load(cert.cert_pem, cert.key_pem)
    registry = CollectorRegistry()
    server = WebhookServer(tls, WebhookMetrics(registry), host="127.0.0.1", port=0,
                           handler_timeout=0.2)
    server.register("/allow", _allow)
    server.register("/slow", _slow)
    conversion = ConversionWebhook(ConversionMetrics(registry))
    conversion.register("test.example.com", _renamed)
    server.route("/convert", conversion.handle)
    await server.start()
    try:
        yield server, ca
    finally:
        await server.stop()
        tls.close()


def _review(uid: str, objects: list[Json]) -> Json:
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
            "request": {"uid": uid, "desiredAPIVersion": V2, "objects": objects}}


def _admission(uid: str, name: str) -> Json:
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
        "uid": uid, "operation": "CREATE", "name": name, "namespace": "default",
        "resource": {"group": "", "version": "v1", "resource": "configmaps"},
        "userInfo": {"username": "alice"}, "object": {"metadata": {"name": name}}}}


async def _call(server: WebhookServer, ca: CertificateAuthority, method: str, path: str,
                body: bytes = b"") -> tuple[int, dict[str, str], bytes]:
    context = ssl.create_default_context(cadata=ca.cert_pem.decode())
    async with aiohttp.ClientSession() as session, session.request(
            method, f"https://127.0.0.1:{server.port}{path}", data=body, ssl=context,
            headers={"Content-Type": "application/json"},
            timeout=aiohttp.ClientTimeout(total=20)) as answer:
        return answer.status, dict(answer.headers), await answer.read()


async def test_paths_and_methods_are_answered_as_a_router_would(served: Any) -> None:
    server, ca = served
    assert sorted(server.paths) == ["/allow", "/convert", "/slow"]
    status, _, _ = await _call(server, ca, "POST", "/nowhere", b"{}")
    assert status == 404
    status, headers, _ = await _call(server, ca, "GET", "/convert")
    assert status == 405 and headers["Allow"] == "POST"
    status, headers, _ = await _call(server, ca, "PUT", "/allow", b"{}")
    assert status == 405 and headers["Allow"] == "POST"
    status, headers, body = await _call(server, ca, "POST", "/convert?timeout=30s",
                                        json.dumps(_review("u", [])).encode())
    assert status == 200 and headers["Content-Type"] == "application/json; charset=utf-8"
    assert json.loads(body)["response"] == {"uid": "u", "convertedObjects": [],
                                            "result": {"status": "Success"}}
    with pytest.raises(ValueError):
        server.register("/convert", _allow)


async def test_bodies_up_to_the_limit_are_read_and_larger_ones_refused(served: Any) -> None:
    server, ca = served
    # Larger than aiohttp's default limit of 1 MiB, within the server's.
    big = {"apiVersion": V1, "kind": "Widget", "metadata": {"name": "big"},
           "data": "x" * (3 * 1024 * 1024)}
    status, _, body = await _call(server, ca, "POST", "/convert",
                                  json.dumps(_review("u-big", [big])).encode())
    assert status == 200
    [converted] = json.loads(body)["response"]["convertedObjects"]
    assert converted == {**big, "apiVersion": V2}
    status, _, _ = await _call(server, ca, "POST", "/convert", b" " * (MAX_BODY + 1))
    assert status == 413
    status, _, body = await _call(server, ca, "POST", "/allow", b"not json")
    assert status == 400 and "error" in json.loads(body)


async def test_a_slow_admission_handler_is_refused_after_its_timeout(served: Any) -> None:
    server, ca = served
    status, _, body = await _call(server, ca, "POST", "/slow",
                                  json.dumps(_admission("u-slow", "a")).encode())
    assert status == 200
    response = json.loads(body)["response"]
    assert response["uid"] == "u-slow" and response["allowed"] is False
    assert response["status"]["code"] == 500
    assert server.metrics.denials.labels("/slow", "configmaps", "CREATE")._value.get() == 1


async def _exchange(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, path: str,
                    body: bytes) -> tuple[int, Json]:
    writer.write(f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json"
                 f"\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body)
    head = (await reader.readuntil(b"\r\n\r\n")).decode().split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in head[1:])}
    assert headers.get("connection", "").lower() != "close"
    answer = json.loads(await reader.readexactly(int(headers["content-length"])))
    return int(head[0].split()[1]), answer


async def test_one_kept_alive_connection_serves_every_endpoint_in_turn(served: Any) -> None:
    """As the API server calls a webhook: request after request on the same connection."""
    server, ca = served
    context = ssl.create_default_context(cadata=ca.cert_pem.decode())
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port, ssl=context)
    try:
        for i in range(3):
            status, answer = await _exchange(reader, writer, "/convert", json.dumps(_review(
                f"c-{i}", [{"apiVersion": V1, "kind": "Widget", "metadata": {
                    "name": f"w{i}"}}])).encode())
            assert status == 200
            assert answer["response"]["uid"] == f"c-{i}"
            assert answer["response"]["convertedObjects"][0]["apiVersion"] == V2
            status, answer = await _exchange(reader, writer, "/allow",
                                             json.dumps(_admission(f"a-{i}", f"n{i}")).encode())
            assert status == 200
            assert answer == {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                              "response": {"uid": f"a-{i}", "allowed": True,
                                           "warnings": [f"saw n{i}"]}}
    finally:
        writer.close()
    assert server.metrics.requests.labels("/allow", "configmaps", "CREATE",
                                          "allowed")._value.get() == 3
