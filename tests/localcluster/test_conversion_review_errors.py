"""The conversion webhook caller's errors, worded as kube-apiserver's, against raw servers: a
webhook that is down, one that answers something that is not HTTP, not JSON, or a review of
another uid; and a kept-alive connection reused for the reviews of one object after another."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from hack.localcluster.admission.webhook_client import WebhookClient
from hack.localcluster.conversion.webhook_converter import ConversionWebhooks
from hack.localcluster.errors import ApiError
from hack.processes import free_port

Json = dict[str, Any]
OBJ = {"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment",
       "metadata": {"name": "g", "namespace": "default", "uid": "u-1"}, "spec": {}}
WHAT = "nvidia.com/v1beta1, Kind=DynamoGraphDeployment"


class RawWebhook:
    """An HTTP/1.1 server on 127.0.0.1 whose answer to each request's body a test decides;
    counts connections and requests."""

    def __init__(self, answer: Callable[[bytes], bytes]) -> None:
        self.answer = answer
        self.connections = 0
        self.requests = 0
        self.server: asyncio.Server | None = None
        self.url = ""

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                              if line.lower().startswith(b"content-length:"))
                body = await reader.readexactly(length)
                self.requests += 1
                writer.write(self.answer(body))
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def __aenter__(self) -> RawWebhook:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}/convert"
        return self

    async def __aexit__(self, *_: object) -> None:
        assert self.server is not None
        self.server.close()


def http(body: bytes, status: str = "200 OK") -> bytes:
    return (b"HTTP/1.1 %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
            % (status.encode(), len(body), body))


def converting(body: bytes) -> bytes:
    request = json.loads(body)["request"]
    objects = [{**o, "apiVersion": request["desiredAPIVersion"]} for o in request["objects"]]
    return http(json.dumps({"apiVersion": "apiextensions.k8s.io/v1",
                            "kind": "ConversionReview",
                            "response": {"uid": request["uid"], "convertedObjects": objects,
                                         "result": {"status": "Success"}}}).encode())


@pytest.fixture
async def converter() -> AsyncIterator[ConversionWebhooks]:
    client = WebhookClient(None)  # type: ignore[arg-type]  # URLs only: no storage needed
    try:
        yield ConversionWebhooks(None, client)  # type: ignore[arg-type]
    finally:
        await client.close()


def webhook(url: str) -> Json:
    return {"clientConfig": {"url": url}, "conversionReviewVersions": ["v1"]}


async def test_reviews_one_after_another_share_one_connection(
        converter: ConversionWebhooks) -> None:
    async with RawWebhook(converting) as server:
        for i in range(20):
            obj = {**OBJ, "metadata": {**OBJ["metadata"], "name": f"g-{i}"}}  # type: ignore[dict-item]
            out = await converter.convert(webhook(server.url), obj, "nvidia.com/v1alpha1")
            assert (out["apiVersion"], out["metadata"]["name"]) == ("nvidia.com/v1alpha1",
                                                                     f"g-{i}")
        assert (server.requests, server.connections) == (20, 1)


async def test_a_webhook_that_is_down(converter: ConversionWebhooks) -> None:
    port = free_port()
    with pytest.raises(ApiError) as raised:
        await converter.convert(webhook(f"https://127.0.0.1:{port}/convert"), OBJ,
                                "nvidia.com/v1alpha1")
    assert raised.value.code == 500
    assert raised.value.message == (
        f'conversion webhook for {WHAT} failed: Post "https://127.0.0.1:{port}/convert?'
        f'timeout=30s": dial tcp 127.0.0.1:{port}: connect: connection refused')


@pytest.mark.parametrize(("answer", "why"), [
    (lambda _: b"garbage\r\n\r\n", "Post \"{url}?timeout=30s\": malformed HTTP response "
     "'garbage'"),
    (lambda _: http(b"<html>oops</html>"), "the server returned a body that is not JSON"),
    (lambda _: http(b"oops", "503 Service Unavailable"),
     'an error on the server ("oops") has prevented the request from succeeding'),
    (lambda _: http(json.dumps({"apiVersion": "apiextensions.k8s.io/v1",
                                "kind": "ConversionReview",
                                "response": {"uid": "other",
                                             "result": {"status": "Success"}}}).encode()),
     'expected response.uid="{uid}", got "other"'),
])
async def test_answers_kube_apiserver_refuses(converter: ConversionWebhooks,
                                              answer: Callable[[bytes], bytes],
                                              why: str) -> None:
    uids: list[str] = []

    def recorded(body: bytes) -> bytes:
        uids.append(json.loads(body)["request"]["uid"])
        return answer(body)

    async with RawWebhook(recorded) as server:
        with pytest.raises(ApiError) as raised:
            await converter.convert(webhook(server.url), OBJ, "nvidia.com/v1alpha1")
    assert raised.value.code == 500
    assert raised.value.message == (f"conversion webhook for {WHAT} failed: "
                                    + why.format(url=server.url, uid=uids[0]))


def test_answers_are_found_by_identity_then_by_content(monkeypatch: pytest.MonkeyPatch) -> None:
    from hack.localcluster.conversion import answers

    keys: list[str] = []
    real_key = answers.answer_key

    def counted(obj: dict[str, object], desired: str) -> str:
        keys.append(desired)
        return real_key(obj, desired)

    monkeypatch.setattr(answers, "answer_key", counted)
    requests = answers.RequestConversions()
    assert requests.lookup(OBJ, "nvidia.com/v1alpha1") is None
    converted = {**OBJ, "apiVersion": "nvidia.com/v1alpha1",
                 "metadata": {**OBJ["metadata"], "labels": {"a": "b"}}}  # type: ignore[dict-item]
    requests.record(OBJ, "nvidia.com/v1alpha1", converted)
    # The same stored object (a read's replay): no key made.
    assert requests.lookup(OBJ, "nvidia.com/v1alpha1") == converted
    assert keys == []
    # The same content with a new uid (a create's replay): found by its key.
    again = {**OBJ, "metadata": {**OBJ["metadata"], "uid": "u-2"}}  # type: ignore[dict-item]
    found = requests.lookup(again, "nvidia.com/v1alpha1")
    assert found is not None
    assert found["metadata"] == {**again["metadata"], "labels": {"a": "b"}}  # type: ignore[dict-item]
    # Other content, or another version: none.
    assert requests.lookup({**OBJ, "spec": {"x": 1}}, "nvidia.com/v1alpha1") is None
    assert requests.lookup(OBJ, "nvidia.com/v1beta2") is None
