"""The plain HTTP client: answers of any status come back, no answer is an HttpError, and
the one session is made on first use and closed by its owner."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator

import pytest
from aiohttp import web

from controller.http import MAX_BODY, HttpClient, HttpError


@pytest.fixture
async def server() -> AsyncIterator[str]:
    async def echo(request: web.Request) -> web.Response:
        body = await request.json()
        return web.json_response({"got": body, "agent": request.headers["User-Agent"]},
                                 status=int(request.query.get("status", "200")))

    async def big(_: web.Request) -> web.Response:
        return web.Response(text="x" * (MAX_BODY * 2))

    async def hang(_: web.Request) -> web.Response:
        await asyncio.Event().wait()
        raise AssertionError

    app = web.Application()
    app.router.add_post("/echo", echo)
    app.router.add_post("/big", big)
    app.router.add_post("/hang", hang)
    runner = web.AppRunner(app, shutdown_timeout=0.1)
    await runner.setup()
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    await web.SockSite(runner, sock).start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


async def test_answers_of_any_status_are_returned(server: str) -> None:
    http = HttpClient(user_agent="test-agent")
    try:
        ok = await http.post_json(server + "/echo", {"a": 1}, seconds=2)
        assert ok.ok and ok.status == 200
        assert '"got": {"a": 1}' in ok.body and "test-agent" in ok.body
        refused = await http.post_json(server + "/echo?status=503", {}, seconds=2)
        assert (refused.ok, refused.status) == (False, 503)
        assert len((await http.post_json(server + "/big", {}, seconds=2)).body) == MAX_BODY
    finally:
        await http.close()


async def test_no_answer_is_an_error(server: str) -> None:
    http = HttpClient()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed_port = s.getsockname()[1]
    try:
        with pytest.raises(HttpError, match=r"no answer within 0\.2s"):
            await http.post_json(server + "/hang", {}, seconds=0.2)
        with pytest.raises(HttpError, match=r"POST http://127\.0\.0\.1"):
            await http.post_json(f"http://127.0.0.1:{closed_port}/x", {}, seconds=1)
    finally:
        await http.close()
    await http.close()  # closing twice is fine
