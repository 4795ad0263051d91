"""The local API server process: HTTPS, authentication, request accounting, lifecycle.

Requests authenticate as kube-apiserver's do: a client certificate of the server's CA (the
admin kubeconfig's: kubernetes-admin in system:masters, `tls`) or a bearer token. Every token
names a user (`users.UserInfo`): `ClusterConfig.token` is a static cluster admin, and
`add_user` makes more (a ServiceAccount's identity for an operator, say). A SelfSubjectReview
(POST authentication.k8s.io/v1 selfsubjectreviews, `kubectl auth whoami`) answers who the
caller is, a TokenReview (`token_reviews`) who a token is. The identity reaches admission
webhooks as `userInfo`. `rbac` adds ServiceAccount tokens (TokenRequest), impersonation,
access reviews and, with `authorization_mode="RBAC"`, the RBAC authorizer.

`LocalCluster` is the one public entry: start it in-process (tests) or through
`python -m hack.localcluster` (developers, e2e), then point any Kubernetes client at the
kubeconfig it writes.
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
import secrets
import tempfile
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import structlog
import yaml
from aiohttp import web

from . import admission, deprecation, discovery, kubernetes_service, protobuf, rbac, tls
from .errors import ApiError
from .faults import CONTROL_PATH, Faults
from .go_format import go_encode
from .http_api import USER_KEY, ResourceApi, WatchSettings
from .openapi_v2_handler import OpenAPIv2Handler
from .operations import Operations, WriteOptions
from .registry import Registry
from .request_stats import RequestKey, RequestStats, classify
from .simulation import Simulation, SimulationConfig
from .simulation.metrics import CONTROL_PATH as METRICS_PATH
from .storage import DELETED, Change, Storage
from .system_controllers import SystemControllers
from .token_reviews import TOKEN_REVIEWS, token_review
from .users import ADMIN, UserInfo, certificate_user

log = structlog.get_logger("localcluster")
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

SELF_SUBJECT_REVIEWS = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
_TOKEN_REQUEST = re.compile(r"/api/v1/namespaces/([^/]+)/serviceaccounts/([^/]+)/token")
DEFAULT_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


@dataclass
class ClusterConfig:
    """How to run a local cluster; every delay is short in tests and configurable."""

    host: str = "127.0.0.1"
    port: int = 0
    data_dir: Path | None = None
    token: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    history_limit: int = 20_000
    bookmark_interval: float = 60.0
    watch_min_timeout: float = 1800.0
    #: The simulated nodes, scheduler, kubelets and controllers; None: a bare API server.
    simulation: SimulationConfig | None = None
    #: Seed of the request faults' random choices.
    fault_seed: int | None = None
    #: kube-apiserver's --authorization-mode: "AlwaysAllow" or "RBAC" (see `rbac`).
    authorization_mode: str = "AlwaysAllow"
    #: Admission plugins off by default that are on (OwnerReferencesPermissionEnforcement).
    enable_admission_plugins: tuple[str, ...] = ()


class LocalCluster:
    """A Kubernetes API server on loopback, with storage, CRDs, GC and request counts."""

    def __init__(self, config: ClusterConfig | None = None) -> None:
        self.config = config or ClusterConfig()
        self.registry = Registry()
        self.storage = Storage(self.config.history_limit,
                               self.config.data_dir / "state" if self.config.data_dir else None)
        self.ops = Operations(self.storage, self.registry)
        self.controllers = SystemControllers(self.ops)
        self.api = ResourceApi(self.ops, WatchSettings(self.config.bookmark_interval,
                                                       self.config.watch_min_timeout))
        self.openapi_v2 = OpenAPIv2Handler(self.api.openapi)
        self.stats = RequestStats()
        self.api.stats = self.stats
        self.simulation = (Simulation(self.ops, self.config.simulation)
                           if self.config.simulation is not None else None)
        if self.simulation is not None:
            self.api.pods.kubelets = self.simulation.kubelets
        self.faults = Faults(self, seed=self.config.fault_seed)
        self.webhooks = admission.Webhooks(self.storage, self.registry)
        self.api.webhooks = self.webhooks
        self.users: dict[str, UserInfo] = {self.config.token: ADMIN}
        if self.config.authorization_mode not in rbac.AUTHORIZATION_MODES:
            raise ValueError(f"unknown authorization mode {self.config.authorization_mode!r}")
        unknown = set(self.config.enable_admission_plugins) - {rbac.OWNER_REFERENCES_PLUGIN}
        if unknown:
            raise ValueError(f"unknown admission plugins {sorted(unknown)}")
        #: The RBAC authorizer (None: every authenticated request is allowed).
        self.authorizer = (rbac.Authorizer(self.storage)
                           if self.config.authorization_mode == "RBAC" else None)
        self.tokens = rbac.ServiceAccountTokens(self.storage, self.config.token)
        if self.authorizer is not None:
            self.webhooks.guard = self._check_rbac_write
        self._runner: web.AppRunner | None = None
        self._workdir = Path(tempfile.mkdtemp(prefix="localcluster-"))
        self.certs = tls.load_or_generate(self.config.data_dir / "pki" if self.config.data_dir
                                          else None)
        self.port = 0

    # --- lifecycle -------------------------------------------------------------------------

    async def start(self) -> None:
        self._bootstrap()
        if self.authorizer is not None:
            rbac.bootstrap(self.ops)
            rbac.Aggregation(self.ops).start()
        self.controllers.restore()
        self.controllers.start()
        if self.simulation is not None:
            self.simulation.start()
        await self._listen()
        self._ensure_kubernetes_service()
        loop = asyncio.get_running_loop()

        def put_back(change: Change) -> None:  # as kube-apiserver's reconcilers do
            if change.type == DELETED and kubernetes_service.is_own(change.resource, change.obj):
                loop.call_soon(self._ensure_kubernetes_service)
        self.storage.add_listener(put_back)

    def _ensure_kubernetes_service(self) -> None:
        if self._runner is not None:
            kubernetes_service.ensure(self.ops, self.config.host, self.port)

    async def _listen(self) -> None:
        app = web.Application(middlewares=[self._middleware], client_max_size=0)
        app.router.add_route("*", "/{tail:.*}", self._route)
        app.on_response_prepare.append(deprecation.add_warning)
        # handler_cancellation: a client that goes away ends its request, as a cancelled
        # request context does in kube-apiserver (otherwise an idle watch would linger).
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False,
                                     shutdown_timeout=0.5, handler_cancellation=True)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.config.host, self.port or self.config.port,
                           ssl_context=self.certs.server_context(self._workdir),
                           backlog=1024, reuse_address=True)
        await site.start()
        self.port = _bound_port(site)

    async def restart_http(self, down_for: float = 0.0) -> None:
        """Stop serving (every connection drops), wait `down_for`, serve on the same port."""
        self.storage.close_all_watches()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        await asyncio.sleep(down_for)
        await self._listen()

    async def stop(self) -> None:
        self.storage.close_all_watches()
        await self.faults.stop()
        if self.simulation is not None:
            await self.simulation.stop()
        await self.controllers.stop()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        await self.webhooks.close()
        self.storage.close()

    async def __aenter__(self) -> LocalCluster:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    @property
    def url(self) -> str:
        return f"https://{self.config.host}:{self.port}"

    def _bootstrap(self) -> None:
        rt = self.registry.get("", "v1", "namespaces")
        assert rt is not None
        for name in DEFAULT_NAMESPACES:
            if self.storage.get(rt.stored_as, "", name) is None:
                self.ops.create(rt, "", {"metadata": {"name": name}},
                                WriteOptions(manager="kube-apiserver"))

    async def settle(self) -> None:
        """Wait until the in-server controllers have handled every change so far."""
        await self.controllers.settle()

    # --- kubeconfig ------------------------------------------------------------------------

    def add_user(self, user: UserInfo) -> str:
        """A new bearer token that authenticates as `user`."""
        token = secrets.token_urlsafe(24)
        self.users[token] = user
        return token

    def kubeconfig(self, namespace: str = "default", token: str | None = None) -> dict[str, Any]:
        """A kubeconfig for this server: the admin's client certificate (CN kubernetes-admin,
        O system:masters), or a bearer `token` (a ServiceAccount's, one of `add_user`)."""
        credentials = {"token": token} if token else {
            "client-certificate-data": base64.b64encode(self.certs.admin_cert_pem).decode(),
            "client-key-data": base64.b64encode(self.certs.admin_key_pem).decode()}
        return {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "localcluster", "cluster": {
                "server": self.url,
                "certificate-authority-data": base64.b64encode(self.certs.ca_pem).decode()}}],
            "users": [{"name": "localcluster-admin", "user": credentials}],
            "contexts": [{"name": "localcluster", "context": {
                "cluster": "localcluster", "user": "localcluster-admin",
                "namespace": namespace}}],
            "current-context": "localcluster",
            "preferences": {},
        }

    def write_kubeconfig(self, path: Path, namespace: str = "default",
                         token: str | None = None) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(self.kubeconfig(namespace, token), sort_keys=False))
        path.chmod(0o600)
        return path

    # --- HTTP ------------------------------------------------------------------------------

    @web.middleware
    async def _middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        verb, resource, namespace = classify(request.method, request.path, dict(request.query))
        code = 500
        try:
            user = self._authenticate(request)
            if request.path not in ("/healthz", "/livez", "/readyz") and user is None:
                raise ApiError(401, "Unauthorized", "Unauthorized")
            if user is not None:
                user = rbac.impersonated(self.authorizer, user, request.headers,
                                         request.headers.getall("Impersonate-Group", []))
                request[USER_KEY] = user
                if self.authorizer is not None and not request.path.startswith(
                        "/localcluster/"):  # the test bed's own controls are not the API
                    self.authorizer.check_request(user, rbac.request_attributes(
                        request.method, request.path, dict(request.query)))
            await self.faults.intercept(request, verb, resource, namespace)
            response = await handler(request)
            code = response.status
            return response
        except ApiError as err:
            code = err.code
            return web.Response(body=err.body(), status=err.code,
                                content_type="application/json", headers=err.headers)
        except web.HTTPException:
            raise
        except Exception as err:  # a server bug must answer 500, not drop the connection
            log.error("request failed", path=request.path, error=repr(err),
                      trace=traceback.format_exc())
            body = ApiError(500, "InternalError", f"Internal error occurred: {err!r}").body()
            return web.Response(body=body, status=500, content_type="application/json")
        finally:
            self.stats.record(RequestKey(verb, resource, namespace,
                                         request.headers.get("User-Agent", ""), code))

    def _authenticate(self, request: web.Request) -> UserInfo | None:
        """x509 client certificates first, then bearer tokens (kube-apiserver's order)."""
        transport = request.transport
        identity = tls.subject_identity(
            transport.get_extra_info("peercert") if transport is not None else None)
        if identity is not None:
            return certificate_user(*identity)
        header = request.headers.get("Authorization", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer":
            return None
        return self._authenticate_token(token.strip())

    def _authenticate_token(self, token: str) -> UserInfo | None:
        for known, user in self.users.items():
            if secrets.compare_digest(token, known):
                return user
        return self.tokens.authenticate(token)

    def _check_rbac_write(self, user: UserInfo, attrs: admission.Attributes,
                          obj: dict[str, Any] | None, old: dict[str, Any] | None) -> None:
        if self.authorizer is None:
            return
        if rbac.OWNER_REFERENCES_PLUGIN in self.config.enable_admission_plugins:
            rbac.check_owner_references(self.authorizer, self.registry, user, attrs.rt,
                                        attrs.operation, attrs.namespace, attrs.name,
                                        attrs.subresource, obj, old)
        if attrs.rt.group == "rbac.authorization.k8s.io":
            self.authorizer.check_write(user, attrs.rt.plural, attrs.operation, attrs.namespace,
                                        obj, old)

    async def _route(self, request: web.Request) -> web.StreamResponse:
        path = request.path.rstrip("/") or "/"
        if path in ("/healthz", "/livez", "/readyz"):
            return web.Response(text="ok")
        if path == "/version":  # written raw, indented, like kube-apiserver's version handler
            return web.json_response(discovery.SERVER_VERSION,
                                     dumps=lambda o: json.dumps(o, indent=2))
        if path == "/openapi/v2":  # JSON or gnostic protobuf, by Accept (kube-openapi's handler)
            return self.openapi_v2.handle(request)
        if path == "/openapi/v3":
            return web.json_response(self.api.openapi.v3_root())
        if path.startswith("/openapi/v3/"):
            doc = self.api.openapi.v3_group_version(path[len("/openapi/v3/"):])
            if doc is None:
                raise ApiError(404, "NotFound", "the server could not find the requested"
                               " resource")
            return web.json_response(doc)
        if path == SELF_SUBJECT_REVIEWS and request.method == "POST":
            user = request[USER_KEY]
            return _created({
                "kind": "SelfSubjectReview", "apiVersion": "authentication.k8s.io/v1",
                "metadata": {"creationTimestamp": None},
                "status": {"userInfo": user.to_json()}})
        if request.method == "POST" and path in (rbac.ACCESS_REVIEWS, rbac.RULES_REVIEWS):
            review = rbac.access_review if path == rbac.ACCESS_REVIEWS else rbac.rules_review
            return _created(review(self.authorizer, request[USER_KEY],
                                   await _json_body(request)))
        if request.method == "POST" and path == TOKEN_REVIEWS:
            return _created(token_review(
                self._authenticate_token, await _json_body(request)))
        local_review = rbac.LOCAL_SUBJECT_ACCESS_REVIEWS.fullmatch(path)
        if request.method == "POST" and (path == rbac.SUBJECT_ACCESS_REVIEWS or local_review):
            return _created(rbac.subject_access_review(
                self.authorizer, await _json_body(request),
                local_review[1] if local_review else None))
        token_request = _TOKEN_REQUEST.fullmatch(path)
        if token_request and request.method == "POST":
            return _created(self.tokens.request(
                token_request[1], token_request[2], await _json_body(request)))
        if path == "/api" or path.startswith(("/api/", "/apis")):
            return await self.api.handle(request)
        if path == CONTROL_PATH:
            return await self.faults.handle(request)
        if path == METRICS_PATH and self.simulation is not None:
            return await self.simulation.metrics.handle(request)
        if path == "/":
            return web.json_response({"paths": sorted(
                ["/api", "/api/v1", "/apis", "/healthz", "/livez", "/openapi/v2",
                 "/openapi/v3", "/readyz", "/version"])})
        raise ApiError(404, "NotFound", "the server could not find the requested resource")


def _created(obj: dict[str, Any]) -> web.Response:
    """201 with a created object (a review, a TokenRequest), written as kube-apiserver writes
    it (`go_encode`)."""
    return web.Response(body=go_encode(obj), status=201, content_type="application/json")


async def _json_body(request: web.Request) -> Any:
    raw = await request.read()
    if request.content_type == protobuf.CONTENT_TYPE:
        return protobuf.decode_body(raw)
    try:
        return json.loads(raw or b"{}")
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise ApiError(400, "BadRequest", f"couldn't get version/kind; json parse error: {err}"
                       ) from None


def _bound_port(site: web.TCPSite) -> int:
    """The port a site listens on (the one the OS chose when asked for port 0)."""
    server = site._server
    sockets = getattr(server, "sockets", None)
    if not sockets:
        raise RuntimeError("the API server did not bind a socket")
    return int(sockets[0].getsockname()[1])
