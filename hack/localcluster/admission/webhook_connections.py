"""HTTP/1.1 POSTs to webhooks over connections kept alive, as kube-apiserver's transport keeps
them: one pool of idle connections per (scheme, host, port, TLS server name, CA bundle).

The API server calls a webhook once per object for conversions (a LIST of N objects stored in
another version makes N calls, one after the other) and per write for admission; a general
HTTP client's per-request machinery would cost more than the call itself. This one writes the
request in one piece and reads a status line, headers and a body of `Content-Length`, chunked
or (with `Connection: close`) up to the end of the stream.

A request on a connection taken from the pool that the server had closed meanwhile (its
keep-alive timeout, or a restart) is sent once more on a new connection when nothing of an
answer came back, as Go's transport retries a request on a reused connection the server closed
before answering. Errors are raised for the caller to word: `Dialing` (the connection could
not be made), `ssl.SSLCertVerificationError`, `ServerDisconnected`, other `OSError`s, and
`ValueError` for an answer that is not HTTP.
"""

from __future__ import annotations

import asyncio
import ssl
from dataclasses import dataclass, field
from urllib.parse import urlsplit

__all__ = ["Dialing", "ServerDisconnected", "WebhookConnections"]

#: Idle connections kept per destination.
MAX_IDLE = 16
_HEADER_LIMIT = 64 * 1024


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


@dataclass
class _Connection:
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter

    @property
    def usable(self) -> bool:
        return not self.writer.is_closing() and not self.reader.at_eof()

    def close(self) -> None:
        self.writer.close()


Destination = tuple[str, str, int, str | None, int]


@dataclass
class WebhookConnections:
    """Kept-alive connections to webhook servers, and POST over them."""

    _idle: dict[Destination, list[_Connection]] = field(default_factory=dict)

    def close(self) -> None:
        for connections in self._idle.values():
            for connection in connections:
                connection.close()
        self._idle.clear()

    async def post(self, url: str, body: bytes, context: ssl.SSLContext,
                   server_name: str | None) -> tuple[int, bytes]:
        """POST `body` (JSON) to `url`; the answer's status and body."""
        parts = urlsplit(url)
        secure = parts.scheme == "https"
        host = parts.hostname or ""
        port = parts.port or (443 if secure else 80)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        authority = parts.netloc.rpartition("@")[2]
        request = (f"POST {target} HTTP/1.1\r\nHost: {authority}\r\n"
                   "Content-Type: application/json\r\nAccept: application/json\r\n"
                   f"Content-Length: {len(body)}\r\n\r\n").encode("latin-1") + body
        where: Destination = (parts.scheme, host, port, server_name, id(context))
        while True:
            connection, reused = self._take(where)
            if connection is None:
                try:
                    reader, writer = await asyncio.open_connection(
                        host, port, ssl=context if secure else None,
                        server_hostname=(server_name or host) if secure else None,
                        limit=_HEADER_LIMIT)
                except ssl.SSLCertVerificationError:
                    raise
                except OSError as err:
                    raise Dialing(host, port, err) from None
                connection = _Connection(reader, writer)
            try:
                status, answer, keep = await self._exchange(connection, request)
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

    async def _exchange(self, connection: _Connection, request: bytes
                        ) -> tuple[int, bytes, bool]:
        """(status, body, whether the connection may be used again)."""
        reader = connection.reader
        connection.writer.write(request)
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError as err:
            if err.partial:
                raise ServerDisconnected() from None
            raise _ClosedBeforeAnswer() from None
        except ConnectionResetError:
            raise _ClosedBeforeAnswer() from None
        except asyncio.LimitOverrunError:
            raise ValueError("the webhook's answer has headers too large") from None
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
                body = await _chunked(reader)
            elif "content-length" in headers:
                body = await reader.readexactly(int(headers["content-length"]))
            else:
                body, keep = await reader.read(), False
        except asyncio.IncompleteReadError:
            raise ServerDisconnected() from None
        return status, body, keep


class _ClosedBeforeAnswer(ServerDisconnected):
    """The connection closed before any byte of an answer (retried when it was reused)."""


async def _chunked(reader: asyncio.StreamReader) -> bytes:
    chunks: list[bytes] = []
    while True:
        size_line = await reader.readuntil(b"\r\n")
        size = int(size_line.split(b";", 1)[0].strip() or b"0", 16)
        if size == 0:
            while (await reader.readuntil(b"\r\n")) != b"\r\n":
                pass  # trailers
            return b"".join(chunks)
        chunks.append(await reader.readexactly(size))
        await reader.readexactly(2)
