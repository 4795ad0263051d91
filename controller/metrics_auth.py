"""/metrics for those the API server says may read it: TokenReview, then SubjectAccessReview.

The metrics of an operator tell a lot about the cluster (object names, error rates), so they
are not open to everyone on the pod network. As controller-runtime's
`WithAuthenticationAndAuthorization` filter does, each request's bearer token is checked with a
TokenReview (who is this?), then a SubjectAccessReview asks whether that user may `get` the
non-resource URL `/metrics` (the verb is the request's method in lower case). The answers are
what the filter answers: 401 `Unauthorized` without a token the API server accepts, 403
`Authorization denied for user NAME`, 500 when the API server could not be asked.

Answers are remembered as the filter's delegating authenticator and authorizer remember them
(tokens for a minute, allowed for five minutes, denied for thirty seconds), so a scrape every
few seconds costs the API server two requests a minute at most. Tokens are remembered by their
SHA-256, never as they are. The operator needs `create` on `tokenreviews` and
`subjectaccessreviews`; a scraper needs a role with `nonResourceURLs: ["/metrics"]`, `get`.

The listener is HTTPS (`metrics_tls`): with `tls.crt` and `tls.key` from a directory when given
(cert-manager's Secret mounted), else a self-signed certificate made at start, as
controller-runtime's secure metrics server does; scrapers then skip verification or trust the
mounted CA.
"""

from __future__ import annotations

import datetime
import hashlib
import socket
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

import structlog
from aiohttp import web

from controller.certificates import new_authority, serving_certificate
from controller.client import KubeClient
from controller.errors import ApiError
from controller.webhook import TLSConfig

Json = dict[str, Any]
T = TypeVar("T")
log = structlog.get_logger("controller.metrics_auth")

TOKEN_REVIEWS = "/apis/authentication.k8s.io/v1/tokenreviews"
SUBJECT_ACCESS_REVIEWS = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
#: How long answers are remembered, as controller-runtime's filter configures them.
TOKEN_TTL = 60.0
ALLOW_TTL = 300.0
DENY_TTL = 30.0
#: Per review request: the filter's TokenAccessReviewTimeout.
REVIEW_TIMEOUT = 10.0

__all__ = ["ALLOW_TTL", "DENY_TTL", "TOKEN_TTL", "DelegatedAuth", "User", "metrics_tls"]


@dataclass(frozen=True)
class User:
    """Who a token belongs to, as a TokenReview answers."""

    name: str
    uid: str
    groups: tuple[str, ...]
    extra: tuple[tuple[str, tuple[str, ...]], ...]


class _Answers(Generic[T]):
    """Answers by key until they expire; the oldest go first beyond `limit`."""

    def __init__(self, limit: int) -> None:
        self._items: OrderedDict[object, tuple[float, T]] = OrderedDict()
        self._limit = limit

    def get(self, key: object, now: float) -> T | None:
        item = self._items.get(key)
        if item is None or item[0] <= now:
            return None
        return item[1]

    def put(self, key: object, value: T, expires: float) -> None:
        self._items[key] = (expires, value)
        self._items.move_to_end(key)
        while len(self._items) > self._limit:
            self._items.popitem(last=False)


class DelegatedAuth:
    """Decides for each /metrics request, asking the API server through `client`."""

    def __init__(self, client: KubeClient, *, limit: int = 1024) -> None:
        self.client = client
        self._users: _Answers[User | None] = _Answers(limit)
        self._decisions: _Answers[bool] = _Answers(limit)

    async def refusal(self, request: web.Request) -> web.Response | None:
        """None when the request may go on; else the answer that refuses it."""
        token = _bearer(request.headers.get("Authorization", ""))
        if not token:
            return web.Response(status=401, text="Unauthorized\n")
        try:
            user = await self._authenticate(token)
        except (ApiError, OSError, TimeoutError) as err:
            log.warning("metrics authentication failed", error=str(err) or type(err).__name__)
            return web.Response(status=500, text="Authentication failed\n")
        if user is None:
            return web.Response(status=401, text="Unauthorized\n")
        verb = request.method.lower()
        try:
            allowed = await self._authorize(user, verb, request.path)
        except (ApiError, OSError, TimeoutError) as err:
            log.warning("metrics authorization failed", user=user.name,
                        error=str(err) or type(err).__name__)
            return web.Response(status=500, text=f"Authorization for user {user.name} failed\n")
        if not allowed:
            return web.Response(status=403, text=f"Authorization denied for user {user.name}\n")
        return None

    async def _authenticate(self, token: str) -> User | None:
        key = hashlib.sha256(token.encode()).digest()
        now = time.monotonic()
        cached = self._users.get(key, now)
        if cached is not None:
            return cached
        review = await self._create(TOKEN_REVIEWS, {
            "apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
            "spec": {"token": token}})
        status = review.get("status") or {}
        user = _user(status.get("user") or {}) if status.get("authenticated") else None
        if user is not None:  # a refused token is asked about again next time
            self._users.put(key, user, now + TOKEN_TTL)
        return user

    async def _authorize(self, user: User, verb: str, path: str) -> bool:
        key = (user, verb, path)
        now = time.monotonic()
        cached = self._decisions.get(key, now)
        if cached is not None:
            return cached
        spec: Json = {"user": user.name, "groups": list(user.groups),
                      "nonResourceAttributes": {"path": path, "verb": verb}}
        if user.uid:
            spec["uid"] = user.uid
        if user.extra:
            spec["extra"] = {k: list(v) for k, v in user.extra}
        review = await self._create(SUBJECT_ACCESS_REVIEWS, {
            "apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
            "spec": spec})
        allowed = bool((review.get("status") or {}).get("allowed"))
        self._decisions.put(key, allowed, now + (ALLOW_TTL if allowed else DENY_TTL))
        return allowed

    async def _create(self, path: str, body: Json) -> Json:
        return await self.client.request("POST", path, body=body,
                                         request_timeout=REVIEW_TIMEOUT)


def _bearer(header: str) -> str:
    scheme, _, token = header.strip().partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


def _user(raw: Json) -> User | None:
    name = raw.get("username")
    if not isinstance(name, str) or not name:
        return None
    extra = raw.get("extra") if isinstance(raw.get("extra"), dict) else {}
    assert isinstance(extra, dict)
    return User(name=name, uid=str(raw.get("uid") or ""),
                groups=tuple(str(g) for g in raw.get("groups") or ()),
                extra=tuple(sorted((str(k), tuple(str(x) for x in v or ()))
                                   for k, v in extra.items())))


def metrics_tls(cert_dir: Path | None) -> TLSConfig:
    """The certificate /metrics is served with: `tls.crt`/`tls.key` of `cert_dir` when both are
    there, else a self-signed one for this host, valid a year (the process restarts sooner)."""
    tls = TLSConfig()
    if cert_dir is not None and (cert_dir / "tls.crt").is_file() \
            and (cert_dir / "tls.key").is_file():
        tls.load((cert_dir / "tls.crt").read_bytes(), (cert_dir / "tls.key").read_bytes())
        return tls
    year = datetime.timedelta(days=365)
    ca = new_authority("metrics-ca", year)
    cert = serving_certificate(ca, ["localhost", socket.gethostname()], ["127.0.0.1"], year)
    tls.load(cert.cert_pem, cert.key_pem)
    return tls
