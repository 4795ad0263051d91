"""GET /openapi/v2 as kube-openapi serves it: JSON or gnostic's protobuf Document by Accept,
406, Etag and 304, gzip; and the protobuf itself, decoded by field numbers."""

from __future__ import annotations

import gzip
import hashlib
import json
import ssl
import struct
from typing import Any

import aiohttp
import pytest
import yaml
from multidict import CIMultiDictProxy

from hack.localcluster.openapi_crd_v2 import custom_kind_v2
from hack.localcluster.openapi_v2_handler import negotiate, parse_accept
from hack.localcluster.protobuf import wire
from hack.localcluster.protobuf.openapi_v2 import OpenAPIv2Error, encode_document, schema
from hack.localcluster.server import LocalCluster
from hack.localcluster.testing import eventually

Json = dict[str, Any]

PB_OLD = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"  # client-go asks this
PB = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"


async def get(cluster: LocalCluster, headers: dict[str, str] | None = None,
              method: str = "GET", path: str = "/openapi/v2", body: Json | None = None
              ) -> tuple[int, CIMultiDictProxy[str], bytes]:
    """A raw request as the admin (/openapi/v2 unless told); the body as sent (not
    decompressed), without aiohttp's default Accept."""
    context = ssl.create_default_context(cadata=cluster.certs.ca_pem.decode())
    sent = {"Accept-Encoding": "identity", **(headers or {}),
            "Authorization": f"Bearer {cluster.config.token}"}
    async with aiohttp.ClientSession(auto_decompress=False,
                                     skip_auto_headers=["Accept"]) as http, \
            http.request(method, cluster.url + path, headers=sent, json=body,
                         ssl=context) as response:
        return response.status, response.headers, await response.read()


def fields(data: bytes) -> dict[int, list[Any]]:
    """The records of one message by field number."""
    out: dict[int, list[Any]] = {}
    for record in wire.iter_records(data):
        out.setdefault(record.number, []).append(record.value)
    return out


def named(data: bytes, number: int) -> dict[str, bytes]:
    """A gnostic map (repeated Named<X> {1: name, 2: value}) of a message, by name."""
    out = {}
    for entry in fields(data).get(number, []):
        pair = fields(entry)
        out[pair[1][0].decode()] = pair.get(2, [b""])[0]
    return out


def extensions(schema_message: bytes, number: int = 31) -> dict[str, Any]:
    """The vendor extensions of a message, their Any.yaml read back."""
    return {name: yaml.safe_load(fields(value)[2][0].decode())
            for name, value in named(schema_message, number).items()}


async def test_json_by_default_and_for_wildcards(cluster: LocalCluster) -> None:
    for accept in (None, "", "*/*", "application/*", "application/json",
                   "application/xml, application/*;q=0.5"):
        status, headers, body = await get(cluster, {"Accept": accept} if accept is not None
                                          else {})
        assert status == 200, accept
        assert headers["Content-Type"] == "application/json", accept
        doc = json.loads(body)
        assert doc["swagger"] == "2.0"
        assert headers["Etag"] == f'"{hashlib.sha512(body).hexdigest().upper()}"'
        assert headers.getall("Vary") == ["Accept-Encoding", "Accept"]
        assert headers["Accept-Ranges"] == "bytes"
        assert "Last-Modified" in headers


async def test_protobuf_for_both_media_types(cluster: LocalCluster) -> None:
    _, json_headers, json_body = await get(cluster)
    doc = json.loads(json_body)
    for accept in (PB_OLD, PB, f"{PB_OLD}, application/json",
                   f"application/json;q=0.5, {PB}"):
        status, headers, body = await get(cluster, {"Accept": accept})
        assert status == 200, accept
        assert headers["Content-Type"] == PB, accept  # the deprecated name is never answered
        assert headers["Etag"] == json_headers["Etag"]  # one Etag: "Vary" tells them apart
        top = fields(body)
        assert top[1] == [b"2.0"]
        info = fields(top[2][0])
        assert info[1] == [doc["info"]["title"].encode()]
        assert info[2] == [doc["info"]["version"].encode()]
        paths = named(top[8][0], 2)
        definitions = named(top[9][0], 1)
        assert list(paths) == list(doc["paths"])
        assert list(definitions) == list(doc["definitions"])


async def test_the_protobuf_carries_what_kubectl_reads(cluster: LocalCluster) -> None:
    _, _, json_body = await get(cluster)
    doc = json.loads(json_body)
    _, _, body = await get(cluster, {"Accept": PB_OLD})
    definitions = named(fields(body)[9][0], 1)
    deployment = definitions["io.k8s.api.apps.v1.Deployment"]
    want = doc["definitions"]["io.k8s.api.apps.v1.Deployment"]
    assert extensions(deployment)["x-kubernetes-group-version-kind"] == \
        want["x-kubernetes-group-version-kind"]
    props = named(fields(deployment)[25][0], 1)
    assert list(props) == list(want["properties"])
    spec = fields(props["spec"])
    assert spec[1] == [want["properties"]["spec"]["$ref"].encode()]
    # A path's operations: get = 2, with the GVK and action extensions (13) and parameters.
    path = "/apis/apps/v1/namespaces/{namespace}/deployments/{name}"
    item = fields(named(fields(body)[8][0], 2)[path])
    operation = item[2][0]
    assert fields(operation)[5] == [doc["paths"][path]["get"]["operationId"].encode()]
    assert extensions(operation, 13)["x-kubernetes-action"] == "get"
    assert len(item[9]) == len(doc["paths"][path]["parameters"])


async def test_not_acceptable(cluster: LocalCluster) -> None:
    for accept in ("application/xml", "text/plain", "application/vnd.kubernetes.protobuf",
                   "application/com.github.proto-openapi.spec.v3@v1.0+protobuf"):
        status, headers, body = await get(cluster, {"Accept": accept})
        assert (status, body) == (406, b""), accept
        assert headers.getall("Vary") == ["Accept-Encoding", "Accept"]


async def test_etag_answers_304_until_a_crd_changes_the_document(
        cluster: LocalCluster) -> None:
    _, headers, _ = await get(cluster, {"Accept": PB})
    etag = headers["Etag"]
    status, headers, body = await get(cluster, {"Accept": PB, "If-None-Match": etag})
    assert (status, body) == (304, b"")
    assert headers["Etag"] == etag and "Last-Modified" not in headers
    status, _, _ = await get(cluster, {"Accept": PB, "If-None-Match": '"other"'})
    assert status == 200

    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "gizmos.example.com"},
           "spec": {"group": "example.com", "scope": "Namespaced",
                    "names": {"plural": "gizmos", "kind": "Gizmo"},
                    "versions": [{"name": "v1", "served": True, "storage": True,
                                  "schema": {"openAPIV3Schema": {"type": "object"}}}]}}
    status, _, _ = await get(cluster, method="POST", body=crd,
                             path="/apis/apiextensions.k8s.io/v1/customresourcedefinitions")
    assert status == 201

    async def changed() -> tuple[int, CIMultiDictProxy[str], bytes] | None:
        answer = await get(cluster, {"Accept": PB, "If-None-Match": etag})
        return answer if answer[0] == 200 else None

    status, headers, body = await eventually(changed, what="a new revision of the document")
    assert headers["Etag"] != etag
    gizmo = named(fields(body)[9][0], 1)["com.example.v1.Gizmo"]
    # Unknown fields preserved at the root: a bare object (with its GVK) in v2.
    assert fields(gizmo)[22] == [wire.bytes_field(1, "object")]
    assert 25 not in fields(gizmo)


async def test_gzip_when_accepted(cluster: LocalCluster) -> None:
    _, _, plain = await get(cluster, {"Accept": PB})
    status, headers, body = await get(cluster, {"Accept": PB, "Accept-Encoding": "gzip"})
    assert status == 200 and headers["Content-Encoding"] == "gzip"
    assert gzip.decompress(body) == plain


def test_accept_clauses_sort_as_goautoneg_does() -> None:
    assert [(c.type, c.subtype, c.q) for c in parse_accept("*/*;q=0.8, application/json")] \
        == [("application", "json", 1.0), ("*", "*", 0.8)]
    # goautoneg's Less prefers a concrete type before a wildcard even at a lower quality.
    assert negotiate("*/*, application/json;q=0.1") == ("application/json", False)
    assert negotiate(f"*/*;q=0.9, {PB_OLD};q=0.1") == (PB, True)
    assert negotiate(f"{PB};q=0") == (PB, True)  # q=0 is not a refusal there
    assert negotiate("application/JSON") is None  # no case folding
    assert negotiate("") == ("application/json", False)


def test_schema_encoding_details() -> None:
    # A oneof is written even when false; an empty properties is still a (empty) message.
    closed = fields(schema({"type": "object", "additionalProperties": False,
                            "properties": {}}))
    assert closed[21] == [wire.varint_field(2, 0)]
    assert closed[25] == [b""]
    enum = fields(schema({"type": "string", "enum": ["y", "1", "a b"], "maxLength": 3,
                          "minimum": 1.5}))
    assert [yaml.safe_load(fields(v)[2][0]) for v in enum[20]] == ["y", "1", "a b"]
    assert fields(enum[20][0])[2][0] == b"'y'\n"  # go-yaml v2 would read a bare y as true
    assert enum[11] == [3]
    assert enum[9] == [int.from_bytes(struct.pack("<d", 1.5), "little")]
    with pytest.raises(OpenAPIv2Error, match="has invalid property: nullable"):
        schema({"type": "string", "nullable": True})
    with pytest.raises(OpenAPIv2Error, match="missing required properties: info"):
        encode_document({"swagger": "2.0", "paths": {}})


def test_custom_kinds_in_v2_as_apiextensions_converts_them() -> None:
    v3: Json = {
        "type": "object", "x-kubernetes-group-version-kind": [{"kind": "K"}],
        "properties": {
            "metadata": {"$ref": "#/definitions/meta", "description": "Standard."},
            "spec": {"type": "object", "required": ["a", "b"], "properties": {
                "a": {"type": "string", "nullable": True, "default": "x"},
                "b": {"x-kubernetes-int-or-string": True,
                      "anyOf": [{"type": "integer"}, {"type": "string"}]},
                "c": {"type": "array", "x-kubernetes-preserve-unknown-fields": True,
                      "items": {"type": "object"}},
                "d": {"type": "object", "default": {}, "properties": {
                    "e": {"type": "integer", "default": 1}}},
            }},
        },
    }
    spec = custom_kind_v2(v3)["properties"]["spec"]
    assert spec == {"type": "object", "required": ["b"], "properties": {
        "a": {},
        "b": {"x-kubernetes-int-or-string": True},
        "c": {"x-kubernetes-preserve-unknown-fields": True},
        "d": {"type": "object", "properties": {"e": {"type": "integer"}}},
    }}
    assert custom_kind_v2(v3)["properties"]["metadata"] == v3["properties"]["metadata"]
    schema(custom_kind_v2(v3))  # gnostic takes it
