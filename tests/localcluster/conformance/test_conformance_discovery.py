"""Discovery and OpenAPI documents, for built-in kinds and an installed CRD."""

from __future__ import annotations

from typing import Any

from conformance_support import (
    GROUP,
    PLURAL,
    Raw,
    api_get,
    assert_status,
    install_crd,
    widget_crd,
)
from kubernetes_asyncio import client

from hack.localcluster.server import LocalCluster

Json = dict[str, Any]
ALL_VERBS = {"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}


def by_name(resource_list: Json) -> dict[str, Json]:
    return {r["name"]: r for r in resource_list["resources"]}


async def test_version(api: client.ApiClient) -> None:
    info = await client.VersionApi(api).get_code()
    assert info.major == "1" and info.minor.isdigit()
    assert info.git_version.startswith(f"v1.{info.minor}.")
    assert info.platform and info.go_version


async def test_core_api_versions(api: client.ApiClient) -> None:
    versions = await client.CoreApi(api).get_api_versions()
    assert versions.versions == ["v1"]
    assert versions.server_address_by_client_cidrs


async def test_core_v1_resources(api: client.ApiClient) -> None:
    doc = await api_get(api, "/api/v1")
    assert (doc["kind"], doc["groupVersion"]) == ("APIResourceList", "v1")
    res = by_name(doc)
    pods = res["pods"]
    assert (pods["kind"], pods["namespaced"], pods["singularName"]) == ("Pod", True, "pod")
    assert set(pods["verbs"]) == ALL_VERBS
    assert pods["shortNames"] == ["po"] and pods["categories"] == ["all"]
    assert set(res["pods/status"]["verbs"]) == {"get", "patch", "update"}
    assert res["pods/status"]["kind"] == "Pod"
    ns = res["namespaces"]
    assert (ns["kind"], ns["namespaced"], ns["shortNames"]) == ("Namespace", False, ["ns"])
    assert "deletecollection" not in ns["verbs"]
    assert res["namespaces/finalize"]["verbs"] == ["update"]
    assert res["nodes"]["namespaced"] is False
    for name in ("services", "endpoints", "configmaps", "secrets", "serviceaccounts",
                 "persistentvolumeclaims", "events"):
        assert res[name]["namespaced"] is True, name


async def test_api_groups(api: client.ApiClient) -> None:
    groups = {g.name: g for g in (await client.ApisApi(api).get_api_versions()).groups}
    for name in ("apps", "batch", "coordination.k8s.io", "networking.k8s.io",
                 "rbac.authorization.k8s.io", "autoscaling", "policy", "discovery.k8s.io",
                 "events.k8s.io", "admissionregistration.k8s.io", "apiextensions.k8s.io"):
        assert name in groups, name
    assert groups["apps"].preferred_version.group_version == "apps/v1"
    autoscaling = [v.version for v in groups["autoscaling"].versions]
    assert autoscaling[0] == "v2" and "v1" in autoscaling
    assert groups["autoscaling"].preferred_version.version == "v2"
    assert "" not in groups  # the core group is only under /api


async def test_apps_v1_subresources(api: client.ApiClient) -> None:
    res = by_name(await api_get(api, "/apis/apps/v1"))
    deploy = res["deployments"]
    assert (deploy["kind"], deploy["shortNames"], deploy["categories"]) == (
        "Deployment", ["deploy"], ["all"])
    scale = res["deployments/scale"]
    assert (scale["group"], scale["version"], scale["kind"]) == ("autoscaling", "v1", "Scale")
    assert set(scale["verbs"]) == {"get", "patch", "update"}
    assert res["deployments/status"]["kind"] == "Deployment"


async def test_single_group(api: client.ApiClient) -> None:
    group = await api_get(api, "/apis/apps")
    assert group["kind"] == "APIGroup" and group["name"] == "apps"
    assert group["preferredVersion"] == {"groupVersion": "apps/v1", "version": "v1"}


async def test_crd_discovery(api: client.ApiClient, widgets: Json) -> None:
    groups = {g.name: g for g in (await client.ApisApi(api).get_api_versions()).groups}
    assert [v.version for v in groups[GROUP].versions] == ["v1", "v1beta1"]
    assert groups[GROUP].preferred_version.version == "v1"
    for version in ("v1", "v1beta1"):
        res = by_name(await api_get(api, f"/apis/{GROUP}/{version}"))
        entry = res[PLURAL]
        assert entry["kind"] == "Widget" and entry["namespaced"] is True
        assert entry["singularName"] == "widget"
        assert entry["shortNames"] == ["wd"]
        assert entry["categories"] == ["all", "conformance"]
        assert set(entry["verbs"]) == ALL_VERBS
        assert set(res[f"{PLURAL}/status"]["verbs"]) == {"get", "patch", "update"}
        scale = res[f"{PLURAL}/scale"]
        assert (scale["group"], scale["version"], scale["kind"]) == (
            "autoscaling", "v1", "Scale")


async def test_cluster_scoped_crd_discovery(api: client.ApiClient) -> None:
    crd = widget_crd(scope="Cluster", group="cluster.example.com", plural="gadgets",
                     kind="Gadget")
    await install_crd(api, crd)
    res = by_name(await api_get(api, "/apis/cluster.example.com/v1"))
    assert res["gadgets"]["namespaced"] is False


async def test_unknown_group_version_is_404(raw: Raw) -> None:
    assert_status(await raw.get("/apis/nope.example.com/v1"), 404, "NotFound")
    assert_status(await raw.get("/apis/apps/v9"), 404, "NotFound")
    assert_status(await raw.get("/apis/nope.example.com"), 404, "NotFound")


async def test_openapi_v2_has_builtin_and_crd(raw: Raw, widgets: Json) -> None:
    resp = await raw.get("/openapi/v2")
    assert resp.status == 200
    doc = resp.json
    assert doc["swagger"] == "2.0"
    assert "io.k8s.api.core.v1.Pod" in doc["definitions"]
    widget = doc["definitions"]["com.example.conformance.v1.Widget"]
    assert widget["x-kubernetes-group-version-kind"] == [
        {"group": GROUP, "kind": "Widget", "version": "v1"}]
    spec = widget["properties"]["spec"]
    assert spec["properties"]["color"]["enum"] == ["red", "green", "blue"]
    assert "required" in spec and spec["required"] == ["size"]
    assert f"/apis/{GROUP}/v1/namespaces/{{namespace}}/{PLURAL}" in doc["paths"]
    assert f"/apis/{GROUP}/v1/namespaces/{{namespace}}/{PLURAL}/{{name}}/scale" in doc["paths"]


async def test_openapi_v3_has_crd_group_version(raw: Raw, widgets: Json) -> None:
    root = (await raw.get("/openapi/v3")).json
    assert "api/v1" in root["paths"] and "apis/apps/v1" in root["paths"]
    url = root["paths"][f"apis/{GROUP}/v1"]["serverRelativeURL"]
    assert url.startswith(f"/openapi/v3/apis/{GROUP}/v1?hash=")
    doc = (await raw.get(url)).json
    assert doc["openapi"].startswith("3.")
    schemas = doc["components"]["schemas"]
    widget = schemas["com.example.conformance.v1.Widget"]
    assert widget["properties"]["spec"]["properties"]["replicas"]["maximum"] == 10
    assert f"/apis/{GROUP}/v1/namespaces/{{namespace}}/{PLURAL}/{{name}}/status" in doc["paths"]
    pods = (await raw.get("/openapi/v3/api/v1")).json
    assert "io.k8s.api.core.v1.Pod" in pods["components"]["schemas"]
    assert_status(await raw.get("/openapi/v3/apis/nope.example.com/v1"), 404, "NotFound")


async def test_crd_removed_from_discovery_and_openapi(api: client.ApiClient, raw: Raw,
                                                      widgets: Json,
                                                      cluster: LocalCluster) -> None:
    ext = client.ApiextensionsV1Api(api)
    await ext.delete_custom_resource_definition(widgets["metadata"]["name"])
    await cluster.settle()
    assert_status(await raw.get(f"/apis/{GROUP}/v1"), 404, "NotFound")
    groups = (await raw.get("/apis")).json["groups"]
    assert GROUP not in [g["name"] for g in groups]
    assert f"apis/{GROUP}/v1" not in (await raw.get("/openapi/v3")).json["paths"]
    assert "com.example.conformance.v1.Widget" not in (
        await raw.get("/openapi/v2")).json["definitions"]
