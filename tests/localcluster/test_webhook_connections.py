"""The webhook caller's kept-alive connections against a real aiohttp server: answers of a
Content-Length, chunked or read to the end; one connection for calls one after the other; a
connection the server closed while idle replaced without an error; a refused dial named; over
TLS, the same, and the certificate verified against the roots and the server name; answers that
are not HTTP or end early, and a caller's timeout, raised for the caller to word."""

from __future__ import annotations

import asyncio
import datetime
import ssl
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web

from controller.certificates import new_authority, serving_certificate
from hack.localcluster.admission.webhook_connections import (
    Dialing,
    ServerDisconnected,
    WebhookConnections,
)
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


# --- over TLS, as the API server calls webhooks -------------------------------------------


@pytest.fixture
async def tls_echo(tmp_path: Path) -> AsyncIterator[tuple[Echo, str, ssl.SSLContext]]:
    server = Echo()
    ca = new_authority("connections-test-ca", datetime.timedelta(days=1))
    cert = serving_certificate(ca, ["localhost"], ["127.0.0.1"])
    (tmp_path / "tls.crt").write_bytes(cert.cert_pem)
    (tmp_path / "tls.key").write_bytes(cert.key_pem)
    serving = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    serving.load_cert_chain(tmp_path / "tls.crt", tmp_path / "tls.key")
    app = web.Application()
    app.router.add_post("/plain", server.plain)
    app.router.add_post("/chunked", server.chunked)
    app.router.add_post("/close", server.close)
    runner = web.AppRunner(app, keepalive_timeout=0.2)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port, ssl_context=serving).start()
    try:
        yield server, f"https://127.0.0.1:{port}", ssl.create_default_context(
            cadata=ca.cert_pem.decode())
    finally:
        await runner.cleanup()


async def test_tls_calls_share_a_connection_and_survive_its_idle_close(
        tls_echo: tuple[Echo, str, ssl.SSLContext]) -> None:
    server, base, context = tls_echo
    connections = WebhookConnections()
    try:
        for i in range(5):
            body = b'{"i": %d, "pad": "%s"}' % (i, b"x" * 100_000)  # several TLS records
            assert (await connections.post(f"{base}/plain", body, context, None)) == \
                (200, body)
        assert len(server.peers) == 1
        for path in ("/chunked", "/close", "/plain"):
            assert (await connections.post(f"{base}{path}", b"[1]", context, None)) == \
                (200, b"[1]")
        assert len(server.peers) == 2  # /close ended the first connection
        await asyncio.sleep(0.6)  # the server closes the idle connection after 0.2 s
        assert (await connections.post(f"{base}/plain", b"6", context, None)) == (200, b"6")
        assert len(server.peers) == 3
    finally:
        connections.close()


async def test_tls_verification_against_the_roots_and_the_name(
        tls_echo: tuple[Echo, str, ssl.SSLContext]) -> None:
    _, base, context = tls_echo
    connections = WebhookConnections()
    try:
        with pytest.raises(ssl.SSLCertVerificationError, match=r"self.signed|local issuer"):
            await connections.post(f"{base}/plain", b"{}", ssl.create_default_context(), None)
        with pytest.raises(ssl.SSLCertVerificationError, match="Hostname mismatch"):
            await connections.post(f"{base}/plain", b"{}", context, "webhook.default.svc")
        assert (await connections.post(f"{base}/plain", b"{}", context, "localhost")) == \
            (200, b"{}")
    finally:
        connections.close()


async def _raw_server(answer: bytes) -> tuple[asyncio.Server, int]:
    """Reads a request's head and writes `answer`, then closes."""
    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(answer)
        await writer.drain()
        writer.close()
    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]


@pytest.mark.parametrize(("answer", "error", "match"), [
    (b"garbage\r\n\r\n", ValueError, "malformed HTTP response 'garbage'"),
    (b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{}", ServerDisconnected, "disconnected"),
    (b"HTTP/1.1 200 OK\r\nContent-", ServerDisconnected, "disconnected"),
    (b"", ServerDisconnected, "disconnected"),
])
async def test_answers_that_are_not_http_or_end_early(answer: bytes, error: type[Exception],
                                                      match: str) -> None:
    server, port = await _raw_server(answer)
    connections = WebhookConnections()
    try:
        with pytest.raises(error, match=match):
            await connections.post(f"http://127.0.0.1:{port}/convert", b"{}", CONTEXT, None)
    finally:
        connections.close()
        server.close()
        await server.wait_closed()


async def test_a_slow_answer_is_cancelled_by_the_callers_timeout(tmp_path: Path) -> None:
    async def never(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read()
    server = await asyncio.start_server(never, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    connections = WebhookConnections()
    try:
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.2):
                await connections.post(f"http://127.0.0.1:{port}/", b"{}", CONTEXT, None)
        assert not connections._idle.get(("False", "127.0.0.1", port, None, id(CONTEXT)))
    finally:
        connections.close()
        server.close()
        await server.wait_closed()
