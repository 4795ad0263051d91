"""Bad requests get the Status kube-apiserver gives, and the server keeps serving."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conformance_support import Raw, assert_status

from hack.localcluster.server import LocalCluster

Json = dict[str, Any]
CM = "/api/v1/namespaces/default/configmaps"
LIMIT = 3 * 1024 * 1024


@pytest.fixture(autouse=True)
async def still_serving(raw: Raw) -> Any:
    """After every test here the server still answers."""
    yield
    resp = await raw.get("/version")
    assert resp.status == 200 and resp.json["major"] == "1"
    resp = await raw.request("POST", CM, body={"metadata": {"name": "after"}})
    assert resp.status == 201, resp.text


async def test_malformed_json_is_400(raw: Raw) -> None:
    for data in ('{"metadata": {"name": "x"}', "not json", '{"metadata": [}'):
        resp = await raw.request("POST", CM, data=data, content_type="application/json")
        status = assert_status(resp, 400, "BadRequest")
        assert "json" in status["message"].lower()


async def test_malformed_yaml_is_400(raw: Raw) -> None:
    resp = await raw.request("POST", CM, data="metadata:\n  name: [x\n",
                             content_type="application/yaml")
    status = assert_status(resp, 400, "BadRequest")
    assert "yaml" in status["message"].lower()


async def test_yaml_body_is_accepted(raw: Raw) -> None:
    resp = await raw.request("POST", CM, data="metadata:\n  name: from-yaml\ndata:\n  a: b\n",
                             content_type="application/yaml")
    assert resp.status == 201, resp.text
    assert resp.json["data"] == {"a": "b"}


async def test_body_that_is_not_an_object_is_400(raw: Raw) -> None:
    assert_status(await raw.request("POST", CM, body=["a", "b"]), 400, "BadRequest")
    assert_status(await raw.request("POST", CM, data=""), 400, "BadRequest")


async def test_unsupported_content_type_is_415(raw: Raw) -> None:
    resp = await raw.request("POST", CM, data=json.dumps({"metadata": {"name": "t"}}),
                             content_type="text/plain")
    status = assert_status(resp, 415, "UnsupportedMediaType")
    assert status["message"].startswith(
        "the body of the request was in an unknown format - accepted media types include:"
        " application/json, application/yaml")


async def test_wrong_kind_for_the_url_is_400(raw: Raw) -> None:
    resp = await raw.request("POST", CM, body={"apiVersion": "v1", "kind": "Secret",
                                               "metadata": {"name": "s"}})
    status = assert_status(resp, 400, "BadRequest")
    assert "Secret" in status["message"] and "ConfigMap" in status["message"]
    resp = await raw.request("POST", CM, body={"apiVersion": "apps/v1", "kind": "ConfigMap",
                                               "metadata": {"name": "s"}})
    assert_status(resp, 400, "BadRequest")


async def test_namespace_mismatch_is_400(raw: Raw) -> None:
    resp = await raw.request("POST", CM, body={"metadata": {"name": "n",
                                                            "namespace": "kube-system"}})
    status = assert_status(resp, 400, "BadRequest")
    assert status["message"] == ("the namespace of the provided object does not match the"
                                 " namespace sent on the request")


async def test_unknown_resource_is_404(raw: Raw) -> None:
    for path in ("/api/v1/namespaces/default/gizmos", "/apis/apps/v1/gizmos",
                 "/api/v1/nodes/x/y/z", "/api/v1/configmaps/x"):
        assert assert_status(await raw.get(path), 404, "NotFound")["details"] == {}
    # A group nobody serves: kube-apiserver's mux answers in plain text (real 1.20 does).
    unserved = await raw.get("/apis/nope.example.com/v1/things")
    assert (unserved.status, unserved.text) == (404, "404 page not found\n")
    assert_status(await raw.request("POST", "/api/v1/namespaces/default/gizmos",
                                    body={"metadata": {"name": "g"}}), 404, "NotFound")


async def test_method_not_allowed(raw: Raw) -> None:
    assert_status(await raw.request("PUT", CM, body={"metadata": {"name": "x"}}), 405,
                  "MethodNotAllowed")


async def test_invalid_name_is_422_with_dns1123_message(raw: Raw) -> None:
    resp = await raw.request("POST", CM, body={"metadata": {"name": "Not_Valid"}})
    status = assert_status(resp, 422, "Invalid")
    cause = status["details"]["causes"][0]
    assert cause == {
        "reason": "FieldValueInvalid", "field": "metadata.name",
        "message": 'Invalid value: "Not_Valid": a lowercase RFC 1123 subdomain must consist of'
                   " lower case alphanumeric characters, '-' or '.', and must start and end"
                   " with an alphanumeric character (e.g. 'example.com', regex used for"
                   " validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*"
                   "[a-z0-9])?)*')"}


async def test_oversized_body_is_413(raw: Raw) -> None:
    big = {"metadata": {"name": "big"}, "data": {"blob": "x" * (LIMIT + 10)}}
    resp = await raw.request("POST", CM, body=big)
    status = assert_status(resp, 413, "RequestEntityTooLarge")
    assert status["message"] == f"Request entity too large: limit is {LIMIT}"
    resp = await raw.request("PATCH", f"{CM}/big", data=json.dumps(big),
                             content_type="application/merge-patch+json")
    assert_status(resp, 413, "RequestEntityTooLarge")


async def test_missing_or_wrong_token_is_401(raw: Raw, cluster: LocalCluster) -> None:
    for token in (None, "wrong", ""):
        resp = await raw.get(CM, token=token)
        status = assert_status(resp, 401, "Unauthorized")
        assert status == {"kind": "Status", "apiVersion": "v1", "metadata": {},
                          "status": "Failure", "message": "Unauthorized",
                          "reason": "Unauthorized", "code": 401}
    resp = await raw.get(CM, headers={"Authorization": f"Basic {cluster.config.token}"},
                         token=None)
    assert_status(resp, 401, "Unauthorized")
    # Health endpoints answer without credentials, as kube-apiserver allows anonymous ones.
    assert (await raw.get("/readyz", token=None)).status == 200
