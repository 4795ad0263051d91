"""GET /openapi/v2 as kube-openapi's `OpenAPIService` handler (pkg/handler/handler.go) answers it.

* Content negotiation with goautoneg over three media types, in this order: `application/json`,
  `application/com.github.proto-openapi.spec.v2@v1.0+protobuf` (deprecated; what client-go's
  `OpenAPISchema()` asks for) and `application/com.github.proto-openapi.spec.v2.v1.0+protobuf`.
  Both protobuf types answer the gnostic `openapi.v2.Document` with `Content-Type`
  `application/com.github.proto-openapi.spec.v2.v1.0+protobuf`. No (or an empty) Accept is
  `*/*`, hence JSON; nothing acceptable is a bare 406.
* The clauses are sorted by goautoneg's `Less` (quality first, then a concrete type or subtype
  before a wildcard) with Go's `sort.Sort`, an insertion sort for the few clauses a header has;
  the first clause that matches a served type wins, whatever its quality (even q=0).
* `Vary: Accept`, `Etag` the quoted upper-case hex SHA-512 of the JSON body (the same for the
  protobuf, "because of the Vary header"), and `http.ServeContent`: `Last-Modified` (when this
  revision of the document was built), `Accept-Ranges: bytes`, 304 for a matching
  `If-None-Match` (or, without one, an `If-Modified-Since` not before the revision).
* gziphandler around it: `Vary: Accept-Encoding` on every answer, gzip when the request
  accepts it and the body has at least 1400 bytes.

The serialized bodies are built once per revision of the document (the registry's generation
changes when a CRD does): JSON at the first request, the protobuf at the first that asks for it.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import threading
import time
from dataclasses import dataclass, field
from email.utils import formatdate, parsedate_to_datetime
from typing import Any

from aiohttp import web
from multidict import CIMultiDict

from .openapi import OpenAPI
from .protobuf.openapi_v2 import encode_document

SUBTYPE_JSON = "json"
SUBTYPE_PROTOBUF_DEPRECATED = "com.github.proto-openapi.spec.v2@v1.0+protobuf"
SUBTYPE_PROTOBUF = "com.github.proto-openapi.spec.v2.v1.0+protobuf"
PROTOBUF = "application/" + SUBTYPE_PROTOBUF

#: (type, subtype, Content-Type answered, protobuf?) in kube-openapi's order.
_ACCEPTED = (
    ("application", SUBTYPE_JSON, "application/json", False),
    ("application", SUBTYPE_PROTOBUF_DEPRECATED, PROTOBUF, True),
    ("application", SUBTYPE_PROTOBUF, PROTOBUF, True),
)

_GZIP_MIN_SIZE = 1400  # gziphandler.DefaultMinSize


@dataclass
class _Revision:
    """The serialized forms of one revision of the document."""

    doc: Any
    body: bytes
    etag: str
    last_modified: float
    _proto: bytes | None = None
    _gzipped: dict[bool, bytes] = field(default_factory=dict)

    def payload(self, protobuf: bool) -> bytes:
        if not protobuf:
            return self.body
        if self._proto is None:
            self._proto = encode_document(self.doc)
        return self._proto

    def gzipped(self, protobuf: bool) -> bytes:
        cached = self._gzipped.get(protobuf)
        if cached is None:
            cached = self._gzipped[protobuf] = gzip.compress(self.payload(protobuf), 6, mtime=0)
        return cached


@dataclass(frozen=True)
class Clause:
    """One clause of an Accept header as goautoneg parses it."""

    type: str
    subtype: str
    q: float


def parse_accept(header: str) -> list[Clause]:
    """goautoneg.ParseAccept: the clauses of `header`, sorted as Go's sort.Sort leaves them."""
    clauses: list[Clause] = []
    for part in header.split(","):
        media_range, *params = part.strip(" ").split(";")
        pieces = media_range.split("/")
        kind = pieces[0].strip(" ")
        if len(pieces) == 1 and kind == "*":
            subtype = "*"
        elif len(pieces) == 2:
            subtype = pieces[1].strip(" ")
        else:
            continue
        q = 1.0
        for param in params:
            name, sep, value = param.partition("=")
            if sep and name.strip(" ") == "q":
                q = _go_parse_float(value)
        clauses.append(Clause(kind, subtype, q))
    # sort.Sort on a handful of clauses is pdqsort's insertion sort (up to 12 elements).
    for i in range(1, len(clauses)):
        j = i
        while j > 0 and _less(clauses[j], clauses[j - 1]):
            clauses[j], clauses[j - 1] = clauses[j - 1], clauses[j]
            j -= 1
    return clauses


def _go_parse_float(text: str) -> float:
    """strconv.ParseFloat(text, 32), with goautoneg's ignored error (0 on failure)."""
    try:
        return float(text)
    except ValueError:
        return 0.0


def _less(a: Clause, b: Clause) -> bool:
    """goautoneg's accept_slice.Less, as written (not a strict order)."""
    if a.q > b.q:
        return True
    if a.type != "*" and b.type == "*":
        return True
    return a.subtype != "*" and b.subtype == "*"


def negotiate(accept: str) -> tuple[str, bool] | None:
    """(Content-Type, protobuf?) kube-openapi answers an Accept header with, or None (406)."""
    for clause in parse_accept(accept or "*/*"):
        for kind, subtype, content_type, protobuf in _ACCEPTED:
            if clause.type not in (kind, "*") or clause.subtype not in (subtype, "*"):
                continue
            return content_type, protobuf
    return None


class OpenAPIv2Handler:
    """Serves one `OpenAPI`'s Swagger document, caching its bodies per revision."""

    def __init__(self, openapi: OpenAPI) -> None:
        self._openapi = openapi
        self._lock = threading.Lock()
        self._revision: _Revision | None = None

    def _current(self) -> _Revision:
        doc = self._openapi.v2()  # the same object until the registry changes
        with self._lock:
            revision = self._revision
            if revision is None or revision.doc is not doc:
                body = json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode()
                revision = self._revision = _Revision(
                    doc, body, hashlib.sha512(body).hexdigest().upper(), time.time())
            return revision

    def protobuf(self) -> bytes:
        """The protobuf body of the current revision."""
        return self._current().payload(True)

    def handle(self, request: web.Request) -> web.Response:
        # gziphandler adds its Vary before the handler adds its own: two header lines.
        headers = CIMultiDict([("Vary", "Accept-Encoding"), ("Vary", "Accept")])
        chosen = negotiate(request.headers.get("Accept", ""))
        if chosen is None:
            return web.Response(status=406, headers=headers)
        content_type, protobuf = chosen
        revision = self._current()
        etag = f'"{revision.etag}"'
        headers["Etag"] = etag
        last_modified = formatdate(int(revision.last_modified), usegmt=True)
        if _not_modified(request, revision.etag, int(revision.last_modified)):
            return web.Response(status=304, headers=headers)  # no Last-Modified beside an Etag
        headers["Last-Modified"] = last_modified
        headers["Accept-Ranges"] = "bytes"
        headers["Content-Type"] = content_type
        body = revision.payload(protobuf)
        if (_accepts_gzip(request.headers.get("Accept-Encoding", ""))
                and len(body) >= _GZIP_MIN_SIZE):
            headers["Content-Encoding"] = "gzip"
            body = revision.gzipped(protobuf)
        return web.Response(body=body, headers=headers)


def _not_modified(request: web.Request, etag: str, modified: int) -> bool:
    """http.ServeContent's If-None-Match (weak comparison, `*`), else If-Modified-Since."""
    if_none_match = request.headers.get("If-None-Match")
    if if_none_match is not None:
        if request.method not in ("GET", "HEAD"):
            return False  # Go answers 412 there; not reproduced
        for candidate in if_none_match.split(","):
            candidate = candidate.strip()
            if candidate == "*" or candidate.removeprefix("W/") == f'"{etag}"':
                return True
        return False
    since = request.headers.get("If-Modified-Since")
    if since is None or request.method not in ("GET", "HEAD"):
        return False
    try:
        when = parsedate_to_datetime(since).timestamp()
    except (TypeError, ValueError):
        return False
    return modified < when + 1


def _accepts_gzip(header: str) -> bool:
    """gziphandler's acceptsGzip: a `gzip` coding with a quality above zero."""
    for part in header.split(","):
        coding, *params = part.strip().split(";")
        if coding.strip().lower() != "gzip":
            continue
        q = 1.0
        for param in params:
            name, _, value = param.strip().partition("=")
            if name == "q":
                q = _go_parse_float(value)
        return q > 0
    return False
