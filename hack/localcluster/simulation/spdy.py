"""SPDY/3.1 framing, the part port-forwarding needs (the server end of a session).

kubectl forwards ports over SPDY (`portforward.k8s.io`), either after an HTTP upgrade or, as
kubectl 1.31 and later do first, tunneled in the binary messages of a websocket. A session
here reads frames from any byte stream (`FrameReader.feed`) and builds the frames a server
sends: SYN_REPLY, DATA (with FIN), RST_STREAM, PING echoes and GOAWAY. Header blocks are
zlib streams with the SPDY/3 dictionary, one stream per direction for the whole session.
Flow control (WINDOW_UPDATE) is read and ignored, as spdystream, kubectl's SPDY library,
does not enforce windows either.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field

VERSION = 3
SYN_STREAM, SYN_REPLY, RST_STREAM, SETTINGS = 1, 2, 3, 4
PING, GOAWAY, HEADERS, WINDOW_UPDATE = 6, 7, 8, 9
FLAG_FIN = 0x01
#: RST_STREAM status codes.
PROTOCOL_ERROR, CANCEL = 1, 5

# The SPDY/3 header compression dictionary (draft-mbelshe-httpbis-spdy-00, 2.6.10.1):
# length-prefixed header names and values, then a run of common strings.
_WORDS = (
    "options", "head", "post", "put", "delete", "trace", "accept", "accept-charset",
    "accept-encoding", "accept-language", "accept-ranges", "age", "allow", "authorization",
    "cache-control", "connection", "content-base", "content-encoding", "content-language",
    "content-length", "content-location", "content-md5", "content-range", "content-type",
    "date", "etag", "expect", "expires", "from", "host", "if-match", "if-modified-since",
    "if-none-match", "if-range", "if-unmodified-since", "last-modified", "location",
    "max-forwards", "pragma", "proxy-authenticate", "proxy-authorization", "range", "referer",
    "retry-after", "server", "te", "trailer", "transfer-encoding", "upgrade", "user-agent",
    "vary", "via", "warning", "www-authenticate", "method", "get", "status", "200 OK",
    "version", "HTTP/1.1", "url", "public", "set-cookie", "keep-alive", "origin",
)
_TAIL = (
    "100101201202205206300302303304305306307402405406407408409410411412413414415416417"
    "502504505203 Non-Authoritative Information204 No Content301 Moved Permanently"
    "400 Bad Request401 Unauthorized403 Forbidden404 Not Found500 Internal Server Error"
    "501 Not Implemented503 Service UnavailableJan Feb Mar Apr May Jun Jul Aug Sept Oct "
    "Nov Dec 00:00:00 Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMTchunked,text/html,image/png,"
    "image/jpg,image/gif,application/xml,application/xhtml+xml,text/plain,text/javascript,"
    "publicprivatemax-age=gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0."
)
DICTIONARY = b"".join(struct.pack(">I", len(w)) + w.encode() for w in _WORDS) + \
    _TAIL.encode()
assert len(DICTIONARY) == 1423


class ProtocolError(Exception):
    """The peer sent something that is not SPDY/3."""


@dataclass(frozen=True)
class Frame:
    """One frame read: a control frame (`kind` > 0) or a DATA frame (`kind` 0)."""

    kind: int
    flags: int
    stream_id: int = 0
    data: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    #: PING id, RST_STREAM / GOAWAY status.
    value: int = 0

    @property
    def fin(self) -> bool:
        return bool(self.flags & FLAG_FIN)


class FrameReader:
    """Frames out of a byte stream that arrives in arbitrary pieces."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._inflate = zlib.decompressobj(zdict=DICTIONARY)

    def feed(self, chunk: bytes) -> list[Frame]:
        self._buffer += chunk
        frames: list[Frame] = []
        while len(self._buffer) >= 8:
            length = int.from_bytes(self._buffer[5:8], "big")
            if len(self._buffer) < 8 + length:
                break
            head, body = bytes(self._buffer[:8]), bytes(self._buffer[8:8 + length])
            del self._buffer[:8 + length]
            frames.append(self._frame(head, body))
        return frames

    def _frame(self, head: bytes, body: bytes) -> Frame:
        flags = head[4]
        if not head[0] & 0x80:
            return Frame(0, flags, int.from_bytes(head[:4], "big") & 0x7FFFFFFF, body)
        version = int.from_bytes(head[:2], "big") & 0x7FFF
        kind = int.from_bytes(head[2:4], "big")
        if version != VERSION:
            raise ProtocolError(f"SPDY version {version}, not {VERSION}")
        if kind == SYN_STREAM:
            return Frame(kind, flags, _stream_id(body), headers=self._headers(body[10:]))
        if kind in (SYN_REPLY, HEADERS):
            return Frame(kind, flags, _stream_id(body), headers=self._headers(body[4:]))
        if kind in (RST_STREAM, WINDOW_UPDATE):
            return Frame(kind, flags, _stream_id(body), value=int.from_bytes(body[4:8], "big"))
        if kind == PING:
            return Frame(kind, flags, value=int.from_bytes(body[:4], "big"))
        if kind == GOAWAY:
            return Frame(kind, flags, _stream_id(body), value=int.from_bytes(body[4:8], "big"))
        return Frame(kind, flags, data=body)  # SETTINGS and anything newer: ignored

    def _headers(self, block: bytes) -> dict[str, str]:
        try:
            raw = self._inflate.decompress(block)
        except zlib.error as err:
            raise ProtocolError(f"header block: {err}") from None
        count, pos = struct.unpack_from(">I", raw, 0)[0], 4
        out: dict[str, str] = {}
        for _ in range(count):
            (n,) = struct.unpack_from(">I", raw, pos)
            name = raw[pos + 4:pos + 4 + n].decode()
            pos += 4 + n
            (n,) = struct.unpack_from(">I", raw, pos)
            out[name.lower()] = raw[pos + 4:pos + 4 + n].split(b"\0")[0].decode()
            pos += 4 + n
        return out


class FrameWriter:
    """The frames a SPDY server sends, with the session's header compression."""

    def __init__(self) -> None:
        self._deflate = zlib.compressobj(zdict=DICTIONARY)

    def syn_reply(self, stream_id: int, headers: dict[str, str] | None = None,
                  fin: bool = False) -> bytes:
        body = struct.pack(">I", stream_id) + self._block(headers or {})
        return _control(SYN_REPLY, FLAG_FIN if fin else 0, body)

    def data(self, stream_id: int, payload: bytes, fin: bool = False) -> bytes:
        return struct.pack(">IB", stream_id & 0x7FFFFFFF, FLAG_FIN if fin else 0) + \
            len(payload).to_bytes(3, "big") + payload

    def rst_stream(self, stream_id: int, status: int) -> bytes:
        return _control(RST_STREAM, 0, struct.pack(">II", stream_id, status))

    def ping(self, ping_id: int) -> bytes:
        return _control(PING, 0, struct.pack(">I", ping_id))

    def goaway(self, last_stream_id: int, status: int = 0) -> bytes:
        return _control(GOAWAY, 0, struct.pack(">II", last_stream_id, status))

    def _block(self, headers: dict[str, str]) -> bytes:
        raw = struct.pack(">I", len(headers))
        for name, value in headers.items():
            raw += struct.pack(">I", len(name)) + name.lower().encode()
            raw += struct.pack(">I", len(value.encode())) + value.encode()
        return self._deflate.compress(raw) + self._deflate.flush(zlib.Z_SYNC_FLUSH)


def _control(kind: int, flags: int, body: bytes) -> bytes:
    return struct.pack(">HHB", 0x8000 | VERSION, kind, flags) + len(body).to_bytes(3, "big") \
        + body


def _stream_id(body: bytes) -> int:
    return int.from_bytes(body[:4], "big") & 0x7FFFFFFF
