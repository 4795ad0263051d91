"""The kubelet's port-forwarding (`portforward.k8s.io`) over a SPDY session, to a pod's address.

kubectl opens, per local connection, an error stream and a data stream (SYN_STREAM headers
`streamType`, `port`, `requestID`); the server answers each with a SYN_REPLY, connects to the
port on the pod's address (simulated pods have their own loopback address; a Dynamo worker's
system port answers HTTP there, see `workers`), copies bytes both ways, and ends with FIN on
the data stream and then on the error stream. A port nothing listens on gets the runtime's
error text on the error stream, as containerd's `connection refused` reaches kubectl.

`serve_websocket` runs a session tunneled in a websocket (subprotocol
`SPDY/3.1+portforward.k8s.io`), what kubectl 1.31 and later try first; `serve_spdy` runs one
after a plain `Upgrade: SPDY/3.1` (older kubectl, or `KUBECTL_PORT_FORWARD_WEBSOCKETS=false`),
taking the connection over from aiohttp as its websocket support does.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import structlog
from aiohttp import WSMsgType, web

from . import spdy

log = structlog.get_logger("localcluster.portforward")

TUNNEL_PROTOCOL = "SPDY/3.1+portforward.k8s.io"
PROTOCOL = "portforward.k8s.io"
_CHUNK = 32 * 1024

#: (port) -> the pod's address to connect to, or an error text when the pod cannot be reached.
Resolver = Callable[[int], tuple[str, str | None]]


@dataclass
class _Pair:
    """One forwarded connection: its error and data streams."""

    error_stream: int = 0
    data_stream: int = 0
    port: int = 0
    writer: asyncio.StreamWriter | None = None
    task: asyncio.Task[None] | None = None
    pending: list[bytes] = field(default_factory=list)
    client_done: bool = False


class Session:
    """One SPDY session of port-forward streams; `send` writes frames to the peer."""

    def __init__(self, send: Callable[[bytes], Awaitable[None]], resolve: Resolver,
                 pod: str) -> None:
        self.send = send
        self.resolve = resolve
        self.pod = pod
        self.reader = spdy.FrameReader()
        self.writer = spdy.FrameWriter()
        self.pairs: dict[str, _Pair] = {}
        self.by_stream: dict[int, _Pair] = {}
        self._lock = asyncio.Lock()

    async def _send(self, frame: bytes) -> None:
        async with self._lock:  # one frame at a time, in order
            await self.send(frame)

    async def feed(self, chunk: bytes) -> None:
        for frame in self.reader.feed(chunk):
            await self._on_frame(frame)

    async def _on_frame(self, frame: spdy.Frame) -> None:
        if frame.kind == spdy.SYN_STREAM:
            await self._on_stream(frame)
        elif frame.kind == 0:
            pair = self.by_stream.get(frame.stream_id)
            if pair is not None and frame.stream_id == pair.data_stream:
                await self._to_pod(pair, frame.data, frame.fin)
        elif frame.kind == spdy.RST_STREAM:
            pair = self.by_stream.get(frame.stream_id)
            if pair is not None and frame.stream_id == pair.data_stream:
                await self._to_pod(pair, b"", True)
        elif frame.kind == spdy.PING:
            await self._send(self.writer.ping(frame.value))

    async def _on_stream(self, frame: spdy.Frame) -> None:
        headers = frame.headers
        request = headers.get("requestid", "")
        pair = self.pairs.setdefault(request, _Pair())
        try:
            pair.port = int(headers.get("port", ""))
        except ValueError:
            await self._send(self.writer.rst_stream(frame.stream_id, spdy.PROTOCOL_ERROR))
            return
        if headers.get("streamtype") == "error":
            pair.error_stream = frame.stream_id
        elif headers.get("streamtype") == "data":
            pair.data_stream = frame.stream_id
        else:
            await self._send(self.writer.rst_stream(frame.stream_id, spdy.PROTOCOL_ERROR))
            return
        self.by_stream[frame.stream_id] = pair
        await self._send(self.writer.syn_reply(frame.stream_id))
        if pair.error_stream and pair.data_stream and pair.task is None:
            pair.task = asyncio.create_task(self._forward(pair),
                                            name=f"portforward {self.pod}:{pair.port}")

    async def _to_pod(self, pair: _Pair, data: bytes, fin: bool) -> None:
        if pair.writer is None:
            pair.pending.append(data)
            pair.client_done = pair.client_done or fin
            return
        with contextlib.suppress(OSError, RuntimeError):
            if data:
                pair.writer.write(data)
                await pair.writer.drain()
            if fin and pair.writer.can_write_eof():
                pair.writer.write_eof()

    async def _forward(self, pair: _Pair) -> None:
        address, problem = self.resolve(pair.port)
        reader: asyncio.StreamReader | None = None
        if problem is None:
            try:
                reader, pair.writer = await asyncio.open_connection(address, pair.port)
            except OSError:
                problem = (f"failed to connect to localhost:{pair.port} inside namespace of "
                           f"pod {self.pod}, IPv4: dial tcp4 127.0.0.1:{pair.port}: connect: "
                           "connection refused")
        if reader is None or pair.writer is None:
            message = f"error forwarding port {pair.port} to pod {self.pod}: {problem}"
            await self._send(self.writer.data(pair.error_stream, message.encode()))
            await self._end(pair)
            return
        pending, pair.pending = pair.pending, []
        for chunk in pending:
            await self._to_pod(pair, chunk, False)
        if pair.client_done:
            await self._to_pod(pair, b"", True)
        try:
            while chunk := await reader.read(_CHUNK):
                await self._send(self.writer.data(pair.data_stream, chunk))
        except OSError:
            pass
        await self._end(pair)

    async def _end(self, pair: _Pair) -> None:
        with contextlib.suppress(Exception):
            await self._send(self.writer.data(pair.data_stream, b"", fin=True))
            await self._send(self.writer.data(pair.error_stream, b"", fin=True))
        if pair.writer is not None:
            pair.writer.close()

    async def close(self) -> None:
        tasks = [p.task for p in self.pairs.values() if p.task is not None]
        for task in tasks:
            task.cancel()
        for pair in self.pairs.values():
            if pair.writer is not None:
                pair.writer.close()
        await asyncio.gather(*tasks, return_exceptions=True)


async def serve_websocket(request: web.Request, resolve: Resolver,
                          pod: str) -> web.WebSocketResponse:
    """Port-forwarding for one kubectl, SPDY tunneled in a websocket, until it hangs up."""
    ws = web.WebSocketResponse(protocols=(TUNNEL_PROTOCOL,), max_msg_size=0)
    await ws.prepare(request)

    async def send(frame: bytes) -> None:
        await ws.send_bytes(frame)

    session = Session(send, resolve, pod)
    try:
        async for message in ws:
            if message.type == WSMsgType.BINARY:
                await session.feed(message.data)
            elif message.type == WSMsgType.ERROR:
                break
    except spdy.ProtocolError as err:
        log.warning("port-forward stream broken", pod=pod, error=str(err))
    finally:
        await session.close()
        await ws.close()
    return ws


class _Upgraded(web.StreamResponse):
    """A 101 whose body is the upgraded connection's raw bytes (no length, no chunking)."""

    _length_check = False


class _Feed:
    """Takes an upgraded connection's bytes from aiohttp's protocol (its `set_parser` hook)."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[bytes | None] = asyncio.Queue()

    def feed_data(self, data: bytes) -> tuple[bool, bytes]:
        self.queue.put_nowait(bytes(data))
        return False, b""

    def feed_eof(self) -> None:
        self.queue.put_nowait(None)


async def serve_spdy(request: web.Request, resolve: Resolver, pod: str) -> web.StreamResponse:
    """Port-forwarding for one client after an `Upgrade: SPDY/3.1`, until it hangs up."""
    response = _Upgraded(status=101, headers={
        "Connection": "Upgrade", "Upgrade": "SPDY/3.1", "X-Stream-Protocol-Version": PROTOCOL})
    writer = await response.prepare(request)
    assert writer is not None
    await writer.drain()
    feed = _Feed()
    request.protocol.set_parser(feed)  # type: ignore[arg-type]
    session = Session(writer.write, resolve, pod)
    try:
        while (chunk := await feed.queue.get()) is not None:
            await session.feed(chunk)
    except (spdy.ProtocolError, ConnectionError) as err:
        log.warning("port-forward stream broken", pod=pod, error=str(err))
    finally:
        await session.close()
        if request.transport is not None:
            request.transport.close()
    return response
