"""The webhook caller's kept-alive connections against a real aiohttp server: answers of a
Content-Length, chunked or read to the end; one connection for calls one after the other; a
connection the server closed while idle replaced without an error; a refused dial named."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterator

import pytest
from aiohttp import web

from hack.localcluster.admission.webhook_connections import Dialing, WebhookConnections
from hack.processes import free_port

CONTEXT = ssl.create_default_context()


class Echo:
    """Answers a POST with its body, plainly (/plain), chunked (/chunked) or closing (/close),
    or with 204 (/empty); counts the connections it saw."""

    def __init__(self) -> None:
        self.peers: set[object] = set()

    async def plain(self, request: web.Request) -> web.StreamResponse:
        self.peers.add(request.transport.get_extra_info("peername") if request.transport
                       else None)
        return web.Response(body=await request.read(), content_type="application/json")

    async def chunked(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        response = web.StreamResponse()
        response.enable_chunked_encoding()
        await response.prepare(request)
        for i in range(0, len(body), 3):
            await response.write(body[i:i + 3])
        await response.write_eof()
        return response

    async def empty(self, request: web.Request) -> web.StreamResponse:
        await request.read()
        return web.Response(status=204)

    async def close(self, request: web.Request) -> web.StreamResponse:
        response = web.Response(body=await request.read(), headers={"Connection": "close"})
        response.force_close()
        return response


@pytest.fixture
async def echo() -> AsyncIterator[tuple[Echo, str]]:
    server = Echo()
    app = web.Application()
    app.router.add_post("/plain", server.plain)
    app.router.add_post("/chunked", server.chunked)
    app.router.add_post("/close", server.close)
    app.router.add_post("/empty", server.empty)
    runner = web.AppRunner(app, keepalive_timeout=0.2)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        yield server, f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


async def test_answers_of_each_framing(echo: tuple[Echo, str]) -> None:
    _, base = echo
    connections = WebhookConnections()
    try:
        for path in ("/plain", "/chunked", "/close", "/plain"):
            status, body = await connections.post(f"{base}{path}?timeout=30s",
                                                  b'{"a": "0123456789"}', CONTEXT, None)
            assert (path, status, body) == (path, 200, b'{"a": "0123456789"}')
    finally:
        connections.close()


async def test_an_answer_without_content(echo: tuple[Echo, str]) -> None:
    _, base = echo
    connections = WebhookConnections()
    try:
        assert (await connections.post(f"{base}/empty", b"{}", CONTEXT, None)) == (204, b"")
        assert (await connections.post(f"{base}/plain", b"1", CONTEXT, None)) == (200, b"1")
    finally:
        connections.close()


async def test_calls_one_after_the_other_share_a_connection(echo: tuple[Echo, str]) -> None:
    server, base = echo
    connections = WebhookConnections()
    try:
        for i in range(5):
            assert (await connections.post(f"{base}/plain", b"%d" % i, CONTEXT, None)) == \
                (200, b"%d" % i)
        assert len(server.peers) == 1
        await asyncio.sleep(0.6)  # the server closes the idle connection after 0.2 s
        assert (await connections.post(f"{base}/plain", b"6", CONTEXT, None)) == (200, b"6")
        assert len(server.peers) == 2
    finally:
        connections.close()


async def test_a_refused_dial_names_where() -> None:
    port = free_port()
    connections = WebhookConnections()
    with pytest.raises(Dialing) as raised:
        await connections.post(f"http://127.0.0.1:{port}/convert", b"{}", CONTEXT, None)
    assert (raised.value.host, raised.value.port) == ("127.0.0.1", port)
    assert isinstance(raised.value.error, ConnectionRefusedError)
