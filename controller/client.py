"""The API client: one aiohttp session, JSON dicts in and out, timeouts, QPS limits, metrics.

It rides on kubernetes_asyncio's ApiClient for configuration, TLS and authentication and
sends each request the way its generic path (`ApiClient.call_api` with
`_preload_content=False`) does, without that path's conversions of plain JSON (see
`KubeClient._call`); it reads the bodies itself, so every object stays a plain dict in JSON
shape whatever its kind.
"""

from __future__ import annotations

import asyncio
import json
import os
import urllib.request
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

import aiohttp
from kubernetes_asyncio import client as k8s
from kubernetes_asyncio import config as k8s_config

from .api_warnings import WARNINGS
from .errors import ApiError, parse_retry_after
from .metrics import Metrics
from .ratelimit import TokenBucket
from .resource import Resource

Json = dict[str, Any]
#: The events of one chunk of a watch stream.
Events = list[Json]
Query = list[tuple[str, str]]

PATCH_TYPES = {
    "merge": "application/merge-patch+json",
    "json": "application/json-patch+json",
    "strategic": "application/strategic-merge-patch+json",
    "apply": "application/apply-patch+yaml",
}


@dataclass
class ClientConfig:
    """Client-side limits; QPS 20 / burst 30 are controller-runtime's defaults."""

    qps: float | None = 20.0
    burst: int = 30
    #: Total time allowed for one non-watch request.
    timeout: float = 30.0
    #: Times a request is sent again when the server answers 429, or a 5xx with Retry-After,
    #: after the delay it asks for (client-go's rest client does the same, 10 times).
    max_retries: int = 10
    #: The longest delay honoured from one Retry-After.
    max_retry_after: float = 30.0
    #: Neutral defaults: an application built on the runtime names itself here.
    user_agent: str = "asyncio-controller"
    field_manager: str = "asyncio-controller"


async def load_configuration(kubeconfig: Path | None = None,
                             context: str | None = None) -> Any:
    """A kubernetes_asyncio Configuration, found the way controller-runtime finds one.

    An explicit kubeconfig first, then $KUBECONFIG, then the in-cluster service account,
    then ~/.kube/config.
    """
    configuration = k8s.Configuration()
    if kubeconfig is None and os.environ.get("KUBECONFIG"):
        kubeconfig = Path(os.environ["KUBECONFIG"].split(os.pathsep)[0])
    if kubeconfig is None and os.environ.get("KUBERNETES_SERVICE_HOST"):
        k8s_config.load_incluster_config(  # type: ignore[no-untyped-call]
            client_configuration=configuration)
        return configuration
    await k8s_config.load_kube_config(
        config_file=str(kubeconfig) if kubeconfig is not None else None, context=context,
        client_configuration=configuration)
    return configuration


class KubeClient:
    """Generic JSON verbs over one kubernetes_asyncio ApiClient (one aiohttp session)."""

    def __init__(self, api: Any, config: ClientConfig | None = None,
                 metrics: Metrics | None = None) -> None:
        self.api = api
        self.config = config or ClientConfig()
        self.api.user_agent = self.config.user_agent
        self._bucket = (TokenBucket(self.config.qps, self.config.burst)
                        if self.config.qps else None)
        self._metrics = metrics
        self._counters: dict[tuple[str, str], Any] = {}
        self.host = urlsplit(api.configuration.host).netloc
        _resolve_proxy_once(api)

    @classmethod
    async def connect(cls, kubeconfig: Path | None = None, config: ClientConfig | None = None,
                      metrics: Metrics | None = None, context: str | None = None) -> KubeClient:
        configuration = await load_configuration(kubeconfig, context)
        return cls(k8s.ApiClient(configuration=configuration), config, metrics)

    async def close(self) -> None:
        await self.api.close()

    async def bearer_token(self) -> str | None:
        """The bearer token this client sends (kubeconfig or in-cluster), if it uses one."""
        headers: dict[str, str] = {}
        await self.api.update_params_for_auth(headers, [], ["BearerToken"])
        value = next((v for k, v in headers.items() if k.lower() == "authorization"), "")
        return value[len("Bearer "):] if value.startswith("Bearer ") else None

    # --- verbs -----------------------------------------------------------------------------

    async def get(self, resource: Resource, namespace: str | None, name: str,
                  subresource: str = "") -> Json:
        return await self.request("GET", resource.path(namespace, name, subresource))

    async def list(self, resource: Resource, namespace: str | None = None, *,
                   label_selector: str = "", field_selector: str = "", limit: int = 0,
                   continue_token: str = "", resource_version: str = "") -> Json:
        query = _query(labelSelector=label_selector, fieldSelector=field_selector,
                       limit=str(limit) if limit else "", resourceVersion=resource_version)
        query += [("continue", continue_token)] if continue_token else []
        return await self.request("GET", resource.path(namespace), query=query)

    async def create(self, resource: Resource, obj: Json, *, decode: bool = True) -> Json:
        """The created object (`decode=False`: {}, for a caller that needs only success)."""
        namespace = obj.get("metadata", {}).get("namespace")
        return await self.request("POST", resource.path(namespace), body=obj,
                                  query=self._manager(), decode=decode)

    async def update(self, resource: Resource, obj: Json, subresource: str = "") -> Json:
        meta = obj["metadata"]
        return await self.request("PUT", resource.path(meta.get("namespace"), meta["name"],
                                                       subresource), body=obj,
                                  query=self._manager())

    async def patch(self, resource: Resource, namespace: str | None, name: str, patch: Any,
                    patch_type: str = "merge", subresource: str = "",
                    force: bool = False, decode: bool = True,
                    field_manager: str | None = None) -> Json:
        """`field_manager`: the writer recorded in managedFields, when not the client's own."""
        query = ([("fieldManager", field_manager)] if field_manager else self._manager())
        query += [("force", "true")] if force else []
        return await self.request("PATCH", resource.path(namespace, name, subresource),
                                  body=patch, query=query,
                                  content_type=PATCH_TYPES[patch_type], decode=decode)

    async def delete(self, resource: Resource, namespace: str | None, name: str,
                     propagation_policy: str | None = None, *,
                     grace_period_seconds: int | None = None) -> Json:
        body: Json = {"propagationPolicy": propagation_policy} if propagation_policy else {}
        if grace_period_seconds is not None:
            body["gracePeriodSeconds"] = grace_period_seconds
        return await self.request("DELETE", resource.path(namespace, name), body=body or None)

    # --- transport -------------------------------------------------------------------------

    async def request(self, method: str, path: str, *, query: Query | None = None,
                      body: Any = None, content_type: str = "application/json",
                      request_timeout: float | None = None, decode: bool = True) -> Json:
        """One request; a non-2xx answer raises the matching ApiError. With `decode=False`
        a successful answer's body is read and dropped, not parsed, and {} returned.

        When the server says it is throttling or briefly unavailable (429, or a 5xx with
        Retry-After) the request is sent again after the delay it asks for, up to
        `max_retries` times: the server did not act on it, and the caller need not know."""
        limit = aiohttp.ClientTimeout(total=request_timeout or self.config.timeout)
        retries = 0
        while True:
            try:
                return await self._request_once(method, path, query, body, content_type, limit,
                                                decode)
            except ApiError as err:
                if not _retry_later(err) or retries >= self.config.max_retries:
                    raise
                retries += 1
                if self._metrics is not None:
                    self._metrics.rest_retries.labels(code=str(err.code), method=method,
                                                      host=self.host).inc()
                await asyncio.sleep(min(err.retry_after or 0.0, self.config.max_retry_after))

    async def _request_once(self, method: str, path: str, query: Query | None, body: Any,
                            content_type: str, limit: aiohttp.ClientTimeout,
                            decode: bool) -> Json:
        response = await self._send(method, path, query, body, content_type, limit)
        try:
            data = await response.read()
            if response.status >= 300:
                raise _error(response.status, data, response.headers.get("Retry-After"))
            return json.loads(data) if data and decode else {}
        finally:
            response.release()

    @asynccontextmanager
    async def watch(self, resource: Resource, namespace: str | None, *, resource_version: str,
                    timeout_seconds: int, read_timeout: float, label_selector: str = "",
                    field_selector: str = "",
                    allow_bookmarks: bool = True) -> AsyncIterator[AsyncIterator[Json]]:
        """A watch stream as an iterator of events; the read timeout bounds silent gaps."""
        async with self.watch_batches(
                resource, namespace, resource_version=resource_version,
                timeout_seconds=timeout_seconds, read_timeout=read_timeout,
                label_selector=label_selector, field_selector=field_selector,
                allow_bookmarks=allow_bookmarks) as batches:
            yield _flattened(batches)

    @asynccontextmanager
    async def watch_batches(self, resource: Resource, namespace: str | None, *,
                            resource_version: str, timeout_seconds: int, read_timeout: float,
                            label_selector: str = "", field_selector: str = "",
                            allow_bookmarks: bool = True
                            ) -> AsyncIterator[AsyncIterator[Events]]:
        """A watch stream as an iterator of the events of each chunk received, in order (an
        informer takes a burst in one step instead of one per event); the read timeout
        bounds silent gaps."""
        query = _query(watch="true", resourceVersion=resource_version,
                       timeoutSeconds=str(timeout_seconds), labelSelector=label_selector,
                       fieldSelector=field_selector,
                       allowWatchBookmarks="true" if allow_bookmarks else "")
        timeout = aiohttp.ClientTimeout(total=None, connect=self.config.timeout,
                                        sock_connect=self.config.timeout,
                                        sock_read=read_timeout)
        response = await self._send("GET", resource.path(namespace), query, None,
                                    "application/json", timeout)
        try:
            if response.status != 200:
                data = await response.read()
                raise _error(response.status, data, response.headers.get("Retry-After"))
            yield _event_batches(response)
        finally:
            response.close()

    async def _send(self, method: str, path: str, query: Query | None,
                    body: Any, content_type: str, client_timeout: aiohttp.ClientTimeout) -> Any:
        if self._bucket is not None:
            await self._bucket.wait()
        code = "<error>"
        try:
            response = await self._call(method, path, query, body, content_type,
                                        client_timeout)
            code = str(response.status)
            if "Warning" in response.headers:
                WARNINGS.observe(response.headers.getall("Warning"))
            return response
        finally:
            if self._metrics is not None:
                self._counter(code, method).inc()

    def _counter(self, code: str, method: str) -> Any:
        """The request counter of (code, method), looked up once (a request is counted on
        the hot path: `labels()` validates and locks on every call)."""
        counter = self._counters.get((code, method))
        if counter is None and self._metrics is not None:
            counter = self._counters[(code, method)] = self._metrics.rest_requests.labels(
                code=code, method=method, host=self.host)
        return counter

    async def _call(self, method: str, path: str, query: Query | None, body: Any,
                    content_type: str, client_timeout: aiohttp.ClientTimeout) -> Any:
        """What `ApiClient.call_api(..., _preload_content=False)` does for our requests, less
        its generic conversions: the same headers (the client's default headers, its cookie,
        the bearer token read from the configuration for every request), query string,
        proxy, TLS server name and JSON body (`json.dumps`, as its REST client does, without
        the spaces).

        The body is already plain JSON, so kubernetes_asyncio's rebuilding of it
        (`sanitize_for_serialization`, a copy of every dict and list) is skipped; a body
        `json.dumps` cannot take (a datetime, an OpenAPI model) still goes through it."""
        api = self.api
        headers = {"Accept": "application/json", "Content-Type": content_type,
                   **api.default_headers}
        if api.cookie:
            headers["Cookie"] = api.cookie
        params = list(query or [])
        await api.update_params_for_auth(headers, params, ["BearerToken"])
        rest = api.rest_client
        url = api.configuration.host + path
        if params:
            url += "?" + urlencode(params)
        args: dict[str, Any] = {"method": method, "url": url, "timeout": client_timeout,
                                "headers": headers}
        if rest.proxy:
            args["proxy"] = rest.proxy
        if rest.proxy_headers:
            args["proxy_headers"] = rest.proxy_headers
        if rest.server_hostname:
            args["server_hostname"] = rest.server_hostname
        if method in _BODY_METHODS:
            args["data"] = _json_body(api, body) if body is not None else None
        return await rest.pool_manager.request(**args)

    def _manager(self) -> Query:
        return [("fieldManager", self.config.field_manager)]


def _resolve_proxy_once(api: Any) -> None:
    """Read the proxy environment (HTTPS_PROXY, NO_PROXY...) once, as client-go does.

    kubernetes_asyncio's session trusts the environment, so aiohttp looks up the proxy
    variables and ~/.netrc again for every request, each time in a worker thread: two thread
    hand-offs per request, a tenth of the operator's CPU under load. The proxy for the API
    server's URL is resolved here instead and the per-request lookups are turned off."""
    rest = getattr(api, "rest_client", None)
    session = getattr(rest, "pool_manager", None)
    if rest is None or not isinstance(session, aiohttp.ClientSession) or not session.trust_env:
        return
    host = str(api.configuration.host)
    if not rest.proxy and not urllib.request.proxy_bypass(urlsplit(host).hostname or ""):
        scheme = urlsplit(host).scheme or "https"
        rest.proxy = urllib.request.getproxies().get(scheme)
    session._trust_env = False


async def _event_batches(response: Any) -> AsyncIterator[Events]:
    """The events of a watch stream (one JSON object per line), a list per chunk read; a
    line cut by a chunk's end waits for the rest."""
    pending = b""
    async for chunk in response.content.iter_any():
        lines = (pending + chunk if pending else chunk).split(b"\n")
        pending = lines.pop()
        batch = [json.loads(line) for line in lines if line.strip()]
        if batch:
            yield batch
    if pending.strip():
        yield [json.loads(pending)]


async def _flattened(batches: AsyncIterator[Events]) -> AsyncIterator[Json]:
    async for batch in batches:
        for event in batch:
            yield event


#: Methods whose requests carry the (JSON) body, as kubernetes_asyncio's REST client sends it.
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "OPTIONS", "DELETE"})


#: No spaces after separators: a tenth fewer bytes to encode, encrypt and send.
_COMPACT = (",", ":")


def _json_body(api: Any, body: Any) -> str:
    try:
        return json.dumps(body, separators=_COMPACT)
    except (TypeError, ValueError):
        return json.dumps(api.sanitize_for_serialization(body), separators=_COMPACT)


def _query(**params: str) -> Query:
    return [(k, v) for k, v in params.items() if v]


def _retry_later(err: ApiError) -> bool:
    """client-go's rule: 429 or any 5xx, and only when the server said when to come back."""
    return err.retry_after is not None and (err.code == 429 or err.code >= 500)


def _error(code: int, data: bytes, retry_after: str | None) -> ApiError:
    try:
        status = json.loads(data) if data else None
    except ValueError:
        status = {"message": data.decode(errors="replace")[:500]}
    return ApiError.from_status(code, status if isinstance(status, dict) else None,
                                parse_retry_after(retry_after))
