"""HTTP/1.1 POSTs to webhooks over connections kept alive, as kube-apiserver's transport keeps
them: one pool of idle connections per (scheme, host, port, TLS server name, CA bundle).

The API server calls a webhook once per object for conversions (a LIST of N objects stored in
another version makes N calls, one after the other) and per write for admission; a general
HTTP client's per-request machinery would cost more than the call itself. This one writes the
request in one piece and reads a status line, headers and a body of `Content-Length`, chunked
or (with `Connection: close`) up to the end of the stream.

A connection is a non-blocking socket (an `ssl.SSLSocket` for https) driven by the event
loop's readiness callbacks (`add_reader`/`add_writer`), not an asyncio transport and stream:
the ssl module encrypts and sends a request, and receives and decrypts an answer, in one call
each, where asyncio's TLS layer (`sslproto`, pure Python) and a `StreamReader` would cost a
call about as much CPU as the review's JSON. The TLS handshake, the certificate's
verification against the context's roots and the server name are the ssl module's, as before.

A request on a connection taken from the pool that the server had closed meanwhile (its
keep-alive timeout, or a restart) is sent once more on a new connection when nothing of an
answer came back, as Go's transport retries a request on a reused connection the server closed
before answering; an idle connection that became readable (the server's close, or bytes it
should not have sent) is not reused. Errors are raised for the caller to word: `Dialing` (the
connection could not be made), `ssl.SSLCertVerificationError`, `ServerDisconnected`, other
`OSError`s, and `ValueError` for an answer that is not HTTP.
"""

from __future__ import annotations

import asyncio
import select
import socket
import ssl
from dataclasses import dataclass, field
from urllib.parse import urlsplit

__all__ = ["Dialing", "ServerDisconnected", "WebhookConnections"]

#: Idle connections kept per destination.
MAX_IDLE = 16
_HEADER_LIMIT = 64 * 1024
_RECEIVE = 256 * 1024


class Dialing(Exception):
    """Connecting to `host`:`port` failed with `error` (refused, unreachable, a TLS failure
    other than the certificate's verification)."""

    def __init__(self, host: str, port: int, error: OSError) -> None:
        super().__init__(f"dial tcp {host}:{port}: {error}")
        self.host = host
        self.port = port
        self.error = error


class ServerDisconnected(ConnectionError):
    """The server closed the connection before its answer was complete."""

    def __init__(self) -> None:
        super().__init__("Server disconnected")


class _ClosedBeforeAnswer(ServerDisconnected):
    """The connection closed before any byte of an answer (retried when it was reused)."""


class _Connection:
    """One non-blocking socket (TLS or plain) and the bytes received but not yet read."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buffer = bytearray()
        self.eof = False
        self._loop = asyncio.get_running_loop()
        self._poll = select.poll()
        self._poll.register(sock.fileno(), select.POLLIN)

    @classmethod
    async def dial(cls, host: str, port: int, context: ssl.SSLContext | None,
                   server_name: str | None) -> _Connection:
        """Connect (and shake hands, for TLS); Dialing or SSLCertVerificationError."""
        loop = asyncio.get_running_loop()
        try:
            sock = await _connected(loop, host, port)
        except OSError as err:
            raise Dialing(host, port, err) from None
        if context is None:
            return cls(sock)
        try:
            wrapped = context.wrap_socket(sock, server_hostname=server_name or host,
                                          do_handshake_on_connect=False)
        except BaseException:
            sock.close()
            raise
        connection = cls(wrapped)
        try:
            await connection._handshake()
        except ssl.SSLCertVerificationError:
            connection.close()
            raise
        except OSError as err:
            connection.close()
            raise Dialing(host, port, err) from None
        except BaseException:
            connection.close()
            raise
        return connection

    @property
    def usable(self) -> bool:
        """Still open, and nothing arrived while idle (the server's close, most likely)."""
        return self.sock.fileno() >= 0 and not self.eof and not self.buffer and \
            not self._poll.poll(0)

    def close(self) -> None:
        self.sock.close()

    async def _handshake(self) -> None:
        assert isinstance(self.sock, ssl.SSLSocket)
        while True:
            try:
                self.sock.do_handshake()
                return
            except ssl.SSLWantReadError:
                await self._ready(writing=False)
            except ssl.SSLWantWriteError:
                await self._ready(writing=True)

    async def send(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            try:
                sent = self.sock.send(view)
            except (BlockingIOError, ssl.SSLWantWriteError):
                await self._ready(writing=True)
                continue
            except ssl.SSLWantReadError:
                await self._ready(writing=False)
                continue
            view = view[sent:]

    async def fill(self) -> bool:
        """Receive what has come (waiting for some); False at the end of the stream."""
        while True:
            try:
                data = self.sock.recv(_RECEIVE)
            except (BlockingIOError, ssl.SSLWantReadError):
                await self._ready(writing=False)
                continue
            except ssl.SSLWantWriteError:
                await self._ready(writing=True)
                continue
            except (ssl.SSLZeroReturnError, ssl.SSLEOFError):
                data = b""
            if not data:
                self.eof = True
                return False
            self.buffer += data
            return True

    async def _ready(self, *, writing: bool) -> None:
        fd = self.sock.fileno()
        waiter = self._loop.create_future()
        if writing:
            self._loop.add_writer(fd, _wake, waiter)
        else:
            self._loop.add_reader(fd, _wake, waiter)
        try:
            await waiter
        finally:
            if writing:
                self._loop.remove_writer(fd)
            else:
                self._loop.remove_reader(fd)

    async def readuntil(self, separator: bytes, limit: int) -> bytes:
        """Up to and with `separator`; IncompleteReadError at the end, ValueError past
        `limit` bytes."""
        start = 0
        while True:
            at = self.buffer.find(separator, start)
            if at >= 0:
                end = at + len(separator)
                out = bytes(self.buffer[:end])
                del self.buffer[:end]
                return out
            if len(self.buffer) > limit:
                raise ValueError("the webhook's answer has headers too large")
            start = max(0, len(self.buffer) - len(separator) + 1)
            if not await self.fill():
                partial = bytes(self.buffer)
                self.buffer.clear()
                raise asyncio.IncompleteReadError(partial, None)

    async def readexactly(self, size: int) -> bytes:
        while len(self.buffer) < size:
            if not await self.fill():
                partial = bytes(self.buffer)
                self.buffer.clear()
                raise asyncio.IncompleteReadError(partial, size)
        out = bytes(self.buffer[:size])
        del self.buffer[:size]
        return out

    async def read_to_end(self) -> bytes:
        while await self.fill():
            pass
        out = bytes(self.buffer)
        self.buffer.clear()
        return out


def _wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


async def _connected(loop: asyncio.AbstractEventLoop, host: str, port: int) -> socket.socket:
    """A non-blocking TCP socket connected to one of `host`'s addresses (the last error when
    none answers)."""
    infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    error: OSError = OSError(f"no address for {host}")
    for family, kind, proto, _, address in infos:
        sock = socket.socket(family, kind, proto)
        try:
            sock.setblocking(False)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            await loop.sock_connect(sock, address)
            return sock
        except OSError as err:
            sock.close()
            error = err
        except BaseException:
            sock.close()
            raise
    raise error


Destination = tuple[str, str, int, str | None, int]


@dataclass(frozen=True)
class _Target:
    """A URL as the connections use it, parsed once."""

    secure: bool
    host: str
    port: int
    head: bytes  # the request line and the headers up to Content-Length's value

    @classmethod
    def of(cls, url: str) -> _Target:
        parts = urlsplit(url)
        secure = parts.scheme == "https"
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        authority = parts.netloc.rpartition("@")[2]
        head = (f"POST {target} HTTP/1.1\r\nHost: {authority}\r\n"
                "Content-Type: application/json\r\nAccept: application/json\r\n"
                "Content-Length: ").encode("latin-1")
        return cls(secure, parts.hostname or "", parts.port or (443 if secure else 80), head)


@dataclass
class WebhookConnections:
    """Kept-alive connections to webhook servers, and POST over them."""

    _idle: dict[Destination, list[_Connection]] = field(default_factory=dict)
    _targets: dict[str, _Target] = field(default_factory=dict)

    def close(self) -> None:
        for connections in self._idle.values():
            for connection in connections:
                connection.close()
        self._idle.clear()

    async def post(self, url: str, body: bytes, context: ssl.SSLContext,
                   server_name: str | None) -> tuple[int, bytes]:
        """POST `body` (JSON) to `url`; the answer's status and body."""
        target = self._targets.get(url)
        if target is None:
            target = self._targets[url] = _Target.of(url)
        request = b"%s%d\r\n\r\n%s" % (target.head, len(body), body)
        where: Destination = (str(target.secure), target.host, target.port, server_name,
                              id(context))
        while True:
            connection, reused = self._take(where)
            if connection is None:
                connection = await _Connection.dial(
                    target.host, target.port, context if target.secure else None, server_name)
            try:
                status, answer, keep = await _exchange(connection, request)
            except _ClosedBeforeAnswer:
                connection.close()
                if reused:
                    continue  # the server had closed the idle connection: a new one
                raise ServerDisconnected() from None
            except BaseException:
                connection.close()
                raise
            if keep:
                self._give_back(where, connection)
            else:
                connection.close()
            return status, answer

    def _take(self, where: Destination) -> tuple[_Connection | None, bool]:
        idle = self._idle.get(where)
        while idle:
            connection = idle.pop()
            if connection.usable:
                return connection, True
            connection.close()
        return None, False

    def _give_back(self, where: Destination, connection: _Connection) -> None:
        idle = self._idle.setdefault(where, [])
        if len(idle) < MAX_IDLE:
            idle.append(connection)
        else:
            connection.close()


async def _exchange(connection: _Connection, request: bytes) -> tuple[int, bytes, bool]:
    """(status, body, whether the connection may be used again)."""
    try:
        await connection.send(request)
    except (BrokenPipeError, ConnectionResetError):
        raise _ClosedBeforeAnswer() from None
    try:
        head = await connection.readuntil(b"\r\n\r\n", _HEADER_LIMIT)
    except asyncio.IncompleteReadError as err:
        if err.partial:
            raise ServerDisconnected() from None
        raise _ClosedBeforeAnswer() from None
    except ConnectionResetError:
        raise _ClosedBeforeAnswer() from None
    lines = head.decode("latin-1").split("\r\n")
    try:
        version, code = lines[0].split(" ", 2)[:2]
        status = int(code)
    except ValueError:
        raise ValueError(f"malformed HTTP response {lines[0]!r}") from None
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if sep:
            headers[name.strip().lower()] = value.strip()
    keep = headers.get("connection", "").lower() != "close" and version == "HTTP/1.1"
    try:
        if status in (204, 304) or 100 <= status < 200:
            body = b""  # no body, whatever the headers say
        elif "chunked" in headers.get("transfer-encoding", "").lower():
            body = await _chunked(connection)
        elif "content-length" in headers:
            body = await connection.readexactly(int(headers["content-length"]))
        else:
            body, keep = await connection.read_to_end(), False
    except asyncio.IncompleteReadError:
        raise ServerDisconnected() from None
    return status, body, keep


async def _chunked(connection: _Connection) -> bytes:
    chunks: list[bytes] = []
    while True:
        size_line = await connection.readuntil(b"\r\n", _HEADER_LIMIT)
        size = int(size_line.split(b";", 1)[0].strip() or b"0", 16)
        if size == 0:
            while (await connection.readuntil(b"\r\n", _HEADER_LIMIT)) != b"\r\n":
                pass  # trailers
            return b"".join(chunks)
        chunks.append(await connection.readexactly(size))
        await connection.readexactly(2)
