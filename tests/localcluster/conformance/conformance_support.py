"""Shared pieces of the conformance suite: a raw HTTP client, the sample CRD, small waits.

The typed kubernetes_asyncio APIs cover most requests; `Raw` is for what they cannot express
(malformed bodies, Accept headers for Tables, watch ERROR events, missing tokens).
"""

from __future__ import annotations

import asyncio
import json
import ssl
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import aiohttp
from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException

from hack.localcluster.server import LocalCluster
from hack.localcluster.testing import eventually as shared_eventually

Json = dict[str, Any]

GROUP = "conformance.example.com"
PLURAL = "widgets"
KIND = "Widget"
CRD_NAME = f"{PLURAL}.{GROUP}"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
MERGE = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
APPLY = "application/apply-patch+yaml"
_DEFAULT = object()


@dataclass
class Response:
    """One raw response: status, headers and the body (parsed when it is JSON)."""

    status: int
    headers: dict[str, str]
    text: str

    @property
    def json(self) -> Any:
        return json.loads(self.text)


class Raw:
    """HTTP requests to a LocalCluster with its CA and bearer token (or another token)."""

    def __init__(self, cluster: LocalCluster) -> None:
        self.cluster = cluster
        ctx = ssl.create_default_context(cadata=cluster.certs.ca_pem.decode())
        self.session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=ctx))

    async def close(self) -> None:
        await self.session.close()

    def _headers(self, token: Any, content_type: str | None, accept: str | None,
                 extra: dict[str, str] | None) -> dict[str, str]:
        headers = {"User-Agent": "conformance-raw/1.0"}
        token = self.cluster.config.token if token is _DEFAULT else token
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        if content_type:
            headers["Content-Type"] = content_type
        if accept:
            headers["Accept"] = accept
        headers.update(extra or {})
        return headers

    async def request(self, method: str, path: str, *, body: Any = None,
                      data: bytes | str | None = None, content_type: str | None = None,
                      accept: str | None = None, params: dict[str, str] | None = None,
                      token: Any = _DEFAULT, headers: dict[str, str] | None = None) -> Response:
        if body is not None:
            data = json.dumps(body)
            content_type = content_type or "application/json"
        async with self.session.request(
                method, self.cluster.url + path, data=data, params=params,
                headers=self._headers(token, content_type, accept, headers)) as resp:
            return Response(resp.status, dict(resp.headers), await resp.text())

    async def get(self, path: str, **kw: Any) -> Response:
        return await self.request("GET", path, **kw)

    async def watch(self, path: str, params: dict[str, str], *, until: Callable[
            [list[Json]], bool] | None = None, within: float = 5.0,
            started: asyncio.Event | None = None, accept: str | None = None) -> list[Json]:
        """Events of a watch, until `until(events)` holds, the stream ends, or `within`
        seconds pass."""
        events: list[Json] = []
        async with self.session.get(
                self.cluster.url + path, params={"watch": "true", **params},
                headers=self._headers(_DEFAULT, None, accept, None)) as resp:
            assert resp.status == 200, await resp.text()
            if started is not None:
                started.set()
            try:
                async with asyncio.timeout(within):
                    async for line in resp.content:
                        if not line.strip():
                            continue
                        events.append(json.loads(line))
                        if until is not None and until(events):
                            break
            except TimeoutError:
                pass
        return events


def status_of(err: ApiException) -> Json:
    """The Status object of a failed typed call."""
    body = err.body
    if isinstance(body, bytes):
        body = body.decode()
    parsed = json.loads(body)
    assert isinstance(parsed, dict)
    assert parsed["kind"] == "Status" and parsed["apiVersion"] == "v1", parsed
    assert parsed["status"] == "Failure", parsed
    assert parsed["code"] == err.status, parsed
    return parsed


async def expect_error(call: Awaitable[Any], code: int, reason: str) -> Json:
    """Await a typed call that must fail with `code`/`reason`; return its Status."""
    try:
        await call
    except ApiException as err:
        status = status_of(err)
        assert (err.status, status.get("reason")) == (code, reason), status
        return status
    raise AssertionError(f"expected {code} {reason}, the call succeeded")


def assert_status(resp: Response, code: int, reason: str) -> Json:
    """A raw response must be a Failure Status with `code` and `reason`."""
    assert resp.status == code, resp.text
    assert resp.headers.get("Content-Type", "").startswith("application/json"), resp.headers
    status = resp.json
    assert status["kind"] == "Status" and status["status"] == "Failure", status
    assert (status["code"], status.get("reason")) == (code, reason), status
    assert isinstance(status, dict)
    return status


def cause_fields(status: Json) -> list[str]:
    return [c.get("field", "") for c in status.get("details", {}).get("causes", [])]


def causes_by_field(status: Json) -> dict[str, Json]:
    return {c.get("field", ""): c for c in status.get("details", {}).get("causes", [])}


eventually = partial(shared_eventually, interval=0.01)

async def gone(call: Callable[[], Awaitable[Any]]) -> bool:
    """Whether a typed GET answers 404."""
    try:
        await call()
    except ApiException as err:
        if err.status == 404:
            return True
        raise
    return False


# --- the sample CRD --------------------------------------------------------------------------

WIDGET_SCHEMA: Json = {
    "type": "object",
    "required": ["spec"],
    "properties": {
        "spec": {
            "type": "object",
            "required": ["size"],
            "properties": {
                "replicas": {"type": "integer", "minimum": 0, "maximum": 10, "default": 1},
                "color": {"type": "string", "enum": ["red", "green", "blue"],
                          "default": "red"},
                "size": {"type": "string", "minLength": 1, "maxLength": 8,
                         "pattern": "^[a-z]+$"},
                "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1,
                         "maxItems": 3},
                "limits": {"type": "object", "additionalProperties": {"type": "string"},
                           "maxProperties": 2},
                "note": {"type": "string", "nullable": True},
                "owner": {"type": "string", "format": "email"},
                "port": {"x-kubernetes-int-or-string": True},
                "config": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "template": {"type": "object", "x-kubernetes-embedded-resource": True,
                             "x-kubernetes-preserve-unknown-fields": True},
                "nested": {"type": "object", "default": {},
                           "properties": {"level": {"type": "integer", "default": 3}}},
            },
        },
        "status": {
            "type": "object",
            "properties": {
                "replicas": {"type": "integer"},
                "selector": {"type": "string"},
                "phase": {"type": "string"},
            },
        },
    },
}


def widget_crd(*, scope: str = "Namespaced", group: str = GROUP, plural: str = PLURAL,
               kind: str = KIND) -> Json:
    """The sample CRD: two versions, status and scale subresources, printer columns."""
    columns = [
        {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
        {"name": "Color", "type": "string", "jsonPath": ".spec.color",
         "description": "the colour"},
        {"name": "Size", "type": "string", "jsonPath": ".spec.size", "priority": 1},
        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
    ]
    subresources = {"status": {}, "scale": {"specReplicasPath": ".spec.replicas",
                                            "statusReplicasPath": ".status.replicas",
                                            "labelSelectorPath": ".status.selector"}}

    def version(name: str, storage: bool) -> Json:
        return {"name": name, "served": True, "storage": storage,
                "schema": {"openAPIV3Schema": WIDGET_SCHEMA},
                "subresources": subresources, "additionalPrinterColumns": columns}

    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "scope": scope,
            "names": {"plural": plural, "singular": kind.lower(), "kind": kind,
                      "shortNames": ["wd"], "categories": ["all", "conformance"]},
            "versions": [version("v1", True), version("v1beta1", False)],
        },
    }


def widget(name: str, namespace: str = "default", version: str = "v1", **spec: Any) -> Json:
    return {"apiVersion": f"{GROUP}/{version}", "kind": KIND,
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"size": "small", **spec}}


async def install_crd(api: client.ApiClient, crd: Json | None = None) -> Json:
    """Create a CRD and wait until its resources are served."""
    body = crd or widget_crd()
    ext = client.ApiextensionsV1Api(api)
    await ext.create_custom_resource_definition(body)
    group = body["spec"]["group"]
    version = next(v["name"] for v in body["spec"]["versions"] if v["storage"])
    plural = body["spec"]["names"]["plural"]

    async def served() -> bool:
        try:
            resources = await client.CustomObjectsApi(api).get_api_resources(group, version)
        except ApiException as err:
            if err.status == 404:
                return False
            raise
        return any(r.name == plural for r in resources.resources)

    await eventually(served, what=f"{plural}.{group} to be served")
    crd_obj: Json = await api_get(api, f"/apis/apiextensions.k8s.io/v1/"
                                       f"customresourcedefinitions/{plural}.{group}")
    return crd_obj


async def api_get(api: client.ApiClient, path: str) -> Json:
    """GET a path through the kubernetes_asyncio client, returning the decoded JSON."""
    resp = await api.call_api(path, "GET", auth_settings=["BearerToken"],
                              response_types_map={200: "object"},
                              _return_http_data_only=True)
    assert isinstance(resp, dict)
    return resp
