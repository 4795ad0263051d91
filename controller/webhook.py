"""A generic admission webhook server: HTTPS, AdmissionReview v1 in and out, handlers by path.

Other webhooks of the process (the CRD conversion webhook, `controller.conversion_webhook`)
are plain routes (`route`) on the same server, port and certificate.

The API server calls a conversion webhook once per object, one call after the other, so the
server's own work per request is on the path of every LIST in another version: it is aiohttp's
low-level server (`web.Server`: its HTTP parser, keep-alive and error handling) with one
handler that finds the endpoint by path, with no router, application or middlewares, and JSON
goes through `controller.json_codec`.

Like controller-runtime's webhook server, it runs on every replica (leader or not: the API
server may call any of them) and serves with whatever certificate its `TLSConfig` holds now:
`load(cert, key)` swaps it for new connections without a restart. `ready` is true once it
listens with a certificate that is valid now.

A handler gets an `AdmissionRequest` and returns an `AdmissionResponse`; the server fills in
the uid, turns a handler's exception into a refusal with code 500 (a bug must not admit), and
counts requests, denials and durations by resource and operation.
"""

from __future__ import annotations

import asyncio
import base64
import datetime
import functools
import shutil
import ssl
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import structlog
from aiohttp import web
from prometheus_client import CollectorRegistry, Counter, Histogram

from . import json_codec
from .certificates import lifetime

log = structlog.get_logger("controller.webhook")

Json = dict[str, Any]

__all__ = ["MAX_BODY", "AdmissionRequest", "AdmissionResponse", "Handler", "RouteHandler",
           "TLSConfig", "WebhookMetrics", "WebhookServer", "json_response"]

REVIEW_VERSION = "admission.k8s.io/v1"


@dataclass(frozen=True)
class AdmissionRequest:
    """The `request` of an AdmissionReview, with the fields handlers read."""

    uid: str
    operation: str
    resource: str
    subresource: str
    name: str
    namespace: str
    username: str
    groups: tuple[str, ...]
    object: Json | None
    old_object: Json | None
    dry_run: bool
    raw: Json

    @classmethod
    def from_review(cls, review: Json) -> AdmissionRequest:
        request = review.get("request")
        if not isinstance(request, dict) or not request.get("uid"):
            raise ValueError("the AdmissionReview has no request uid")
        user = request.get("userInfo") or {}
        resource = request.get("resource") or {}
        return cls(
            uid=str(request["uid"]), operation=str(request.get("operation") or ""),
            resource=str(resource.get("resource") or ""),
            subresource=str(request.get("subResource") or ""),
            name=str(request.get("name") or ""), namespace=str(request.get("namespace") or ""),
            username=str(user.get("username") or ""),
            groups=tuple(str(g) for g in user.get("groups") or ()),
            object=request.get("object"), old_object=request.get("oldObject"),
            dry_run=bool(request.get("dryRun")), raw=request)


@dataclass(frozen=True)
class AdmissionResponse:
    """What a handler decides: allowed or not (with a message and code), and warnings; a
    mutating webhook's admission may carry a JSONPatch (RFC 6902 operations) of the object.

    `reason` is the Status reason the API server passes on (`Invalid`, `Forbidden`); `cause`
    is a machine word for why a request was denied (`immutable_field_changed`), for metrics
    only: it never leaves the process."""

    allowed: bool
    message: str = ""
    code: int = 200
    reason: str = ""
    warnings: tuple[str, ...] = ()
    cause: str = ""
    patch: tuple[Json, ...] = ()

    @classmethod
    def allow(cls, warnings: tuple[str, ...] = (),
              patch: tuple[Json, ...] = ()) -> AdmissionResponse:
        return cls(True, warnings=warnings, patch=patch)

    @classmethod
    def deny(cls, message: str, code: int = 403, reason: str = "Forbidden",
             warnings: tuple[str, ...] = (), cause: str = "") -> AdmissionResponse:
        return cls(False, message, code, reason, warnings, cause)

    def to_json(self, uid: str) -> Json:
        out: Json = {"uid": uid, "allowed": self.allowed}
        if not self.allowed:
            status: Json = {"code": self.code, "message": self.message}
            if self.reason:
                status["reason"] = self.reason
            out["status"] = status
        if self.warnings:
            out["warnings"] = list(self.warnings)
        if self.allowed and self.patch:
            out["patchType"] = "JSONPatch"
            out["patch"] = base64.b64encode(json_codec.dumps(list(self.patch))).decode()
        return out


Handler = Callable[[AdmissionRequest], Awaitable[AdmissionResponse]]
RouteHandler = Callable[[web.BaseRequest], Awaitable[web.StreamResponse]]

#: The largest request body accepted (a review of the biggest object the API server stores).
MAX_BODY = 8 * 1024 * 1024
JSON_TYPE = "application/json"


class WebhookMetrics:
    """Admission requests, denials and handling time, by resource and operation."""

    def __init__(self, registry: CollectorRegistry) -> None:
        labels = ["webhook", "resource", "operation"]
        self.requests = Counter("admission_webhook_requests_total",
                                "Admission requests handled, by result (allowed, denied)",
                                [*labels, "result"], registry=registry)
        self.denials = Counter("admission_webhook_denials_total",
                               "Admission requests denied", labels, registry=registry)
        self.duration = Histogram("admission_webhook_duration_seconds",
                                  "Time to handle an admission request", labels,
                                  registry=registry)


class TLSConfig:
    """The server's certificate, swappable while serving (new connections get the new one)."""

    def __init__(self) -> None:
        self._context: ssl.SSLContext | None = None
        self._not_before: datetime.datetime | None = None
        self._not_after: datetime.datetime | None = None
        self._cert_pem = b""
        self._dir = Path(tempfile.mkdtemp(prefix="webhook-tls-"))

    def load(self, cert_pem: bytes, key_pem: bytes) -> bool:
        """Serve with this certificate from now on; False when it was already the one."""
        if cert_pem == self._cert_pem:
            return False
        cert, key = self._dir / "tls.crt", self._dir / "tls.key"
        cert.write_bytes(cert_pem)
        key.touch(mode=0o600)
        key.write_bytes(key_pem)
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(cert, key)
        self._not_before, self._not_after = lifetime(cert_pem)
        self._context, self._cert_pem = context, cert_pem
        return True

    @property
    def cert_pem(self) -> bytes:
        """The certificate being served (b"" before the first load)."""
        return self._cert_pem

    def close(self) -> None:
        """Remove the key material written for the ssl module (it only loads files)."""
        shutil.rmtree(self._dir, ignore_errors=True)

    @property
    def valid(self) -> bool:
        """A certificate is loaded and valid now."""
        if self._not_before is None or self._not_after is None:
            return False
        now = datetime.datetime.now(datetime.UTC)
        return self._not_before <= now < self._not_after

    def server_context(self) -> ssl.SSLContext:
        """The listening context: it hands each connection the current certificate."""
        listening = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)

        def pick(connection: ssl.SSLObject, _name: str | None, _ctx: ssl.SSLContext) -> None:
            if self._context is not None:
                connection.context = self._context

        listening.sni_callback = pick
        return listening


@dataclass
class WebhookServer:
    """Serves registered admission handlers over HTTPS on `host:port`."""

    tls: TLSConfig
    metrics: WebhookMetrics
    host: str = "0.0.0.0"
    port: int = 9443
    #: Longest time a handler may take; the API server's own timeout is usually 10 s.
    handler_timeout: float = 8.0
    #: Let several processes of one host share the port (the kernel spreads connections).
    reuse_port: bool = False
    _handlers: dict[str, Handler] = field(default_factory=dict)
    #: Plain aiohttp handlers by path (the conversion webhook's ConversionReviews).
    _routes: dict[str, RouteHandler] = field(default_factory=dict)
    #: What answers each path once started: the admission handlers wrapped by `_serve`.
    _endpoints: dict[str, RouteHandler] = field(default_factory=dict)
    _runner: web.ServerRunner | None = None

    def register(self, path: str, handler: Handler) -> None:
        """Serve `handler` at `path` (before `start`)."""
        if path in self._handlers or path in self._routes:
            raise ValueError(f"a webhook is already registered at {path}")
        self._handlers[path] = handler

    def route(self, path: str, handler: RouteHandler) -> None:
        """Serve POSTs to `path` with a plain aiohttp handler, on the same port and certificate
        (a `ConversionWebhook.handle`; before `start`)."""
        if path in self._handlers or path in self._routes:
            raise ValueError(f"a webhook is already registered at {path}")
        self._routes[path] = handler

    @property
    def paths(self) -> list[str]:
        return [*self._handlers, *self._routes]

    @property
    def ready(self) -> bool:
        """Listening, with a certificate valid now."""
        return self._runner is not None and self.tls.valid

    async def start(self) -> None:
        self._endpoints = {path: functools.partial(self._serve, handler)
                           for path, handler in self._handlers.items()}
        self._endpoints.update(self._routes)
        server = web.Server(self._dispatch, request_factory=self._request, access_log=None)
        self._runner = web.ServerRunner(server, handle_signals=False, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port,
                           ssl_context=self.tls.server_context(), reuse_address=True,
                           reuse_port=self.reuse_port or None)
        await site.start()
        if self.port == 0:
            self.port = self._runner.addresses[0][1]
        log.info("webhook server listening", port=self.port, paths=self.paths)

    def _request(self, message: Any, payload: Any, protocol: Any, writer: Any,
                 task: asyncio.Task[None]) -> web.BaseRequest:
        """aiohttp's request factory: a plain request that may carry a body up to MAX_BODY."""
        return web.BaseRequest(message, payload, protocol, writer, task,
                               asyncio.get_running_loop(), client_max_size=MAX_BODY)

    async def _dispatch(self, request: web.BaseRequest) -> web.StreamResponse:
        """The endpoint of the request's path; 404 and 405 as a router would answer."""
        endpoint = self._endpoints.get(request.path)
        if endpoint is None:
            raise web.HTTPNotFound()
        if request.method != "POST":
            raise web.HTTPMethodNotAllowed(request.method, ["POST"])
        return await endpoint(request)

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def run(self) -> None:
        """Serve until cancelled (a manager runnable)."""
        await self.start()
        try:
            await asyncio.Event().wait()
        finally:
            await self.stop()
            self.tls.close()

    async def _serve(self, handler: Handler, request: web.BaseRequest) -> web.Response:
        try:
            review = json_codec.loads(await request.read())
            admission = AdmissionRequest.from_review(review)
        except ValueError as err:
            return _json_response({"error": str(err)}, status=400)
        labels = (request.path, admission.resource, admission.operation)
        started = time.monotonic()
        try:
            async with asyncio.timeout(self.handler_timeout):
                response = await handler(admission)
        except Exception as err:
            log.exception("webhook handler failed", path=request.path,
                          resource=admission.resource, name=admission.name)
            response = AdmissionResponse.deny(f"internal error: {err}", 500, "InternalError")
        self.metrics.duration.labels(*labels).observe(time.monotonic() - started)
        self.metrics.requests.labels(*labels, "allowed" if response.allowed else
                                     "denied").inc()
        if not response.allowed:
            self.metrics.denials.labels(*labels).inc()
        return _json_response({"apiVersion": review.get("apiVersion") or REVIEW_VERSION,
                               "kind": "AdmissionReview",
                               "response": response.to_json(admission.uid)})


def _json_response(body: Any, status: int = 200) -> web.Response:
    return json_response(json_codec.dumps(body), status)


def json_response(body: bytes, status: int = 200) -> web.Response:
    """An answer of JSON already encoded."""
    return web.Response(body=body, status=status, content_type=JSON_TYPE, charset="utf-8")
