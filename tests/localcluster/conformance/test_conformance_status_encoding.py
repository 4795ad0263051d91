"""Status bodies byte for byte as kube-apiserver's JSON encoder writes them.

A Go struct is written compact, its fields in declaration order (metav1.Status: kind,
apiVersion, metadata, status, message, reason, details, code; StatusDetails: name, group,
kind, uid, causes), with `<`, `>` and `&` escaped and a final newline.
"""

from __future__ import annotations

import json

from conformance_support import Raw


async def test_not_found_status_is_written_in_struct_order(raw: Raw) -> None:
    resp = await raw.get("/apis/apps/v1/namespaces/default/deployments/missing")
    assert resp.status == 404
    assert resp.text == (
        '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",'
        '"message":"deployments.apps \\"missing\\" not found","reason":"NotFound",'
        '"details":{"name":"missing","group":"apps","kind":"deployments"},"code":404}\n')


async def test_invalid_status_escapes_html_and_orders_causes(raw: Raw) -> None:
    resp = await raw.request("POST", "/api/v1/namespaces/default/configmaps",
                             body={"metadata": {"name": "a<b>&c"}})
    assert resp.status == 422
    assert resp.text.endswith("}\n") and "\n" not in resp.text[:-1]
    assert "\\u003c" in resp.text and "\\u0026" in resp.text and "<" not in resp.text
    status = json.loads(resp.text)
    assert list(status) == ["kind", "apiVersion", "metadata", "status", "message", "reason",
                            "details", "code"]
    assert list(status["details"]) == ["name", "kind", "causes"]
    assert list(status["details"]["causes"][0]) == ["reason", "message", "field"]


async def test_unauthorized_and_success_statuses_end_with_a_newline(raw: Raw) -> None:
    unauthorized = await raw.get("/api/v1/namespaces", token="nobody")
    assert unauthorized.text == (
        '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",'
        '"message":"Unauthorized","reason":"Unauthorized","code":401}\n')
    created = await raw.request("POST", "/api/v1/namespaces/default/configmaps",
                                body={"metadata": {"name": "gone"}})
    uid = created.json["metadata"]["uid"]
    deleted = await raw.request("DELETE", "/api/v1/namespaces/default/configmaps/gone")
    assert deleted.text == (
        '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success",'
        f'"details":{{"name":"gone","kind":"configmaps","uid":"{uid}"}}}}\n')
