"""Server-side printing: Accept application/json;as=Table;v=v1;g=meta.k8s.io."""

from __future__ import annotations

from typing import Any

from conformance_support import GROUP, PLURAL, TABLE, Raw, widget
from kubernetes_asyncio import client

Json = dict[str, Any]
NS = "default"


def columns(table: Json) -> list[tuple[str, str, int]]:
    return [(c["name"], c["type"], c["priority"]) for c in table["columnDefinitions"]]


async def test_custom_resource_printer_columns(custom: client.CustomObjectsApi, raw: Raw,
                                               widgets: Json) -> None:
    await custom.create_namespaced_custom_object(GROUP, "v1", NS, PLURAL,
                                                 widget("w1", replicas=3, color="blue"))
    await custom.create_namespaced_custom_object(GROUP, "v1", NS, PLURAL, widget("w2"))
    resp = await raw.get(f"/apis/{GROUP}/v1/namespaces/{NS}/{PLURAL}", accept=TABLE)
    assert resp.status == 200, resp.text
    table = resp.json
    assert (table["kind"], table["apiVersion"]) == ("Table", "meta.k8s.io/v1")
    assert table["metadata"]["resourceVersion"]
    assert columns(table) == [("Name", "string", 0), ("Replicas", "integer", 0),
                              ("Color", "string", 0), ("Size", "string", 1),
                              ("Age", "date", 0)]
    name_col = table["columnDefinitions"][0]
    assert name_col["format"] == "name"
    assert table["columnDefinitions"][2]["description"] == "the colour"
    rows = table["rows"]
    assert [r["cells"][:4] for r in rows] == [["w1", 3, "blue", "small"],
                                             ["w2", 1, "red", "small"]]
    assert isinstance(rows[0]["cells"][4], str) and rows[0]["cells"][4].endswith("s")
    obj = rows[0]["object"]
    assert (obj["kind"], obj["apiVersion"]) == ("PartialObjectMetadata", "meta.k8s.io/v1")
    assert obj["metadata"]["name"] == "w1"


async def test_include_object(custom: client.CustomObjectsApi, raw: Raw,
                              widgets: Json) -> None:
    await custom.create_namespaced_custom_object(GROUP, "v1", NS, PLURAL, widget("w"))
    path = f"/apis/{GROUP}/v1/namespaces/{NS}/{PLURAL}"
    full = (await raw.get(path, accept=TABLE, params={"includeObject": "Object"})).json
    assert full["rows"][0]["object"]["spec"]["size"] == "small"
    none = (await raw.get(path, accept=TABLE, params={"includeObject": "None"})).json
    assert "object" not in none["rows"][0] or none["rows"][0]["object"] is None


async def test_single_object_table(custom: client.CustomObjectsApi, raw: Raw,
                                   widgets: Json) -> None:
    await custom.create_namespaced_custom_object(GROUP, "v1", NS, PLURAL, widget("one"))
    table = (await raw.get(f"/apis/{GROUP}/v1/namespaces/{NS}/{PLURAL}/one",
                           accept=TABLE)).json
    assert table["kind"] == "Table" and [r["cells"][0] for r in table["rows"]] == ["one"]


async def test_pod_deployment_service_columns(api: client.ApiClient, raw: Raw) -> None:
    core, apps = client.CoreV1Api(api), client.AppsV1Api(api)
    await core.create_namespaced_pod(NS, {"metadata": {"name": "p"}, "spec": {
        "containers": [{"name": "c", "image": "busybox"}]}})
    await apps.create_namespaced_deployment(NS, {"metadata": {"name": "d"}, "spec": {
        "replicas": 2, "selector": {"matchLabels": {"app": "d"}},
        "template": {"metadata": {"labels": {"app": "d"}},
                     "spec": {"containers": [{"name": "c", "image": "nginx:1"}]}}}})
    await core.create_namespaced_service(NS, {"metadata": {"name": "s"}, "spec": {
        "selector": {"app": "d"}, "ports": [{"port": 80}]}})

    pods = (await raw.get(f"/api/v1/namespaces/{NS}/pods", accept=TABLE)).json
    assert [c[0] for c in columns(pods)][:5] == ["Name", "Ready", "Status", "Restarts", "Age"]
    assert {c[0]: c[2] for c in columns(pods)}["Node"] == 1
    assert pods["rows"][0]["cells"][:4] == ["p", "0/1", "Pending", "0"]

    deploys = (await raw.get(f"/apis/apps/v1/namespaces/{NS}/deployments", accept=TABLE)).json
    assert [c[0] for c in columns(deploys)] == ["Name", "Ready", "Up-to-date", "Available",
                                                "Age", "Containers", "Images", "Selector"]
    assert [c[2] for c in columns(deploys)] == [0, 0, 0, 0, 0, 1, 1, 1]
    assert deploys["rows"][0]["cells"][:4] == ["d", "0/2", 0, 0]
    assert deploys["rows"][0]["cells"][5:] == ["c", "nginx:1", "app=d"]

    services = (await raw.get(f"/api/v1/namespaces/{NS}/services", accept=TABLE)).json
    assert [c[0] for c in columns(services)] == ["Name", "Type", "Cluster-IP", "External-IP",
                                                 "Port(s)", "Age", "Selector"]
    svc = next(r for r in services["rows"] if r["cells"][0] == "s")
    assert svc["cells"][1] == "ClusterIP" and svc["cells"][3] == "<none>"
    assert svc["cells"][4] == "80/TCP" and svc["cells"][6] == "app=d"


async def test_table_watch(custom: client.CustomObjectsApi, raw: Raw, widgets: Json) -> None:
    await custom.create_namespaced_custom_object(GROUP, "v1", NS, PLURAL, widget("a"))
    await custom.create_namespaced_custom_object(GROUP, "v1", NS, PLURAL, widget("b"))
    path = f"/apis/{GROUP}/v1/namespaces/{NS}/{PLURAL}"
    events = await raw.watch(path, {}, accept=TABLE, until=lambda evs: len(evs) >= 2)
    assert [e["type"] for e in events] == ["ADDED", "ADDED"]
    first, second = events[0]["object"], events[1]["object"]
    assert first["kind"] == "Table" and first["columnDefinitions"]
    assert second["columnDefinitions"] == []
    assert second["rows"][0]["cells"][0] == "b"
