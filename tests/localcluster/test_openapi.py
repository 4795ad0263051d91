"""OpenAPI documents: structure the way kubectl reads it, and the real kubectl against them."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import yaml

from hack.localcluster import openapi_builtin
from hack.localcluster.openapi import OpenAPI
from hack.localcluster.openapi_builtin import builtin_catalog
from hack.localcluster.registry import BUILTIN_TYPES, CREATE_ONLY, Registry, ResourceType
from hack.localcluster.typed_decoding import foreign_body_error

if TYPE_CHECKING:
    from hack.localcluster.testing import Kubectl

Json = dict[str, Any]

WIDGET_SCHEMA: Json = {
    "description": "A Widget is a thing for tests.",
    "type": "object",
    "properties": {
        "spec": {
            "description": "What the widget should be.",
            "type": "object",
            "properties": {
                "size": {"description": "How big the widget is.", "type": "integer"},
                "tags": {"type": "array", "x-kubernetes-list-type": "set",
                         "items": {"type": "string"}},
            },
        },
        "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
    },
}


def widget_types(schema: Json | None = WIDGET_SCHEMA) -> list[ResourceType]:
    return [ResourceType(group="example.com", version="v1", kind="Widget", plural="widgets",
                         namespaced=True, schema=schema, custom=True, has_status=True,
                         storage_version="v1")]


def refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):  # JSONSchemaProps has a "$ref" field
                yield value
            else:
                yield from refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from refs(value)


def doc(api: OpenAPI, path: str) -> Json:
    found = api.v3_group_version(path)
    assert found is not None
    return found


def schemas(api: OpenAPI, path: str) -> Json:
    return doc(api, path)["components"]["schemas"]  # type: ignore[no-any-return]


def patch_op(d: Json, path: str) -> Json:
    return d["paths"][path]["patch"]  # type: ignore[no-any-return]


def param_names(op: Json) -> set[str]:
    return {p["name"] for p in op.get("parameters", []) if p["in"] == "query"}


# --- the v3 discovery document ------------------------------------------------------------


def test_root_lists_every_group_version_with_a_content_hash() -> None:
    api = OpenAPI(Registry())
    paths = api.v3_root()["paths"]
    expected = {f"apis/{rt.group}/{rt.version}" if rt.group else f"api/{rt.version}"
                for rt in BUILTIN_TYPES}
    assert set(paths) == expected
    for path, entry in paths.items():
        url = entry["serverRelativeURL"]
        m = re.fullmatch(rf"/openapi/v3/{re.escape(path)}\?hash=([0-9A-F]{{128}})", url)
        assert m, url
        found = api.v3_group_version_json(path)
        assert found is not None
        assert found[1] == m[1]


def test_hashes_are_stable_for_identical_content() -> None:
    first = OpenAPI(Registry()).v3_root()
    second = OpenAPI(Registry()).v3_root()
    assert first == second


def test_group_version_lookup_accepts_served_paths_only() -> None:
    api = OpenAPI(Registry())
    apps = doc(api, "apis/apps/v1")
    assert api.v3_group_version("/openapi/v3/apis/apps/v1?hash=ABC") is apps
    assert api.v3_group_version("api/v1") is not None
    assert api.v3_group_version("apis/apps/v2") is None
    assert api.v3_group_version("apis/apps") is None
    assert api.v3_group_version("version") is None


# --- components ---------------------------------------------------------------------------


def test_every_reference_resolves_inside_its_document() -> None:
    api = OpenAPI(Registry())
    for path in api.v3_root()["paths"]:
        d = doc(api, path)
        names = set(d["components"]["schemas"])
        for target in refs(d):
            assert target.startswith("#/components/schemas/"), target
            assert target.removeprefix("#/components/schemas/") in names, (path, target)


def test_every_builtin_kind_has_a_schema_with_its_group_version_kind() -> None:
    api = OpenAPI(Registry())
    for rt in BUILTIN_TYPES:
        gv = f"apis/{rt.group}/{rt.version}" if rt.group else f"api/{rt.version}"
        found = [s for s in schemas(api, gv).values()
                 if {"group": rt.group, "version": rt.version, "kind": rt.kind}
                 in s.get("x-kubernetes-group-version-kind", [])]
        assert len(found) == 1, rt
        assert {"apiVersion", "kind", "metadata"} <= set(found[0]["properties"])
        if rt.verbs == CREATE_ONLY:  # reviews: never listed, no List type
            continue
        lists = [s for s in schemas(api, gv).values()
                 if {"group": rt.group, "version": rt.version, "kind": rt.kind + "List"}
                 in s.get("x-kubernetes-group-version-kind", [])]
        assert len(lists) == 1, rt


def test_a_body_of_a_kind_another_group_lacks_leaves_the_kinds_schema_alone() -> None:
    """A ConfigMap sent as apps/v1 is refused by name, and the ConfigMap's schema still says
    core v1 (the catalog once stamped it apps/v1 and lost it for every later reader)."""
    config_maps = next(rt for rt in BUILTIN_TYPES if rt.kind == "ConfigMap")
    error = foreign_body_error(config_maps, "ConfigMap", "apps/v1",
                               {"apiVersion": "apps/v1", "kind": "ConfigMap"})
    assert error is not None and 'no kind "ConfigMap" is registered for version "apps/v1"' \
        in error
    found = [s for s in schemas(OpenAPI(Registry()), "api/v1").values()
             if {"group": "", "version": "v1", "kind": "ConfigMap"}
             in s.get("x-kubernetes-group-version-kind", [])]
    assert len(found) == 1


def test_definition_names_follow_the_go_packages() -> None:
    apps = schemas(OpenAPI(Registry()), "apis/apps/v1")
    for name in (
        "io.k8s.api.apps.v1.Deployment",
        "io.k8s.api.apps.v1.DeploymentSpec",
        "io.k8s.api.apps.v1.RollingUpdateDeployment",
        "io.k8s.api.core.v1.PodTemplateSpec",
        "io.k8s.api.core.v1.Container",
        "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
        "io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector",
        "io.k8s.apimachinery.pkg.apis.meta.v1.Status",
        "io.k8s.apimachinery.pkg.util.intstr.IntOrString",
        "io.k8s.apimachinery.pkg.api.resource.Quantity",
        "io.k8s.api.autoscaling.v1.Scale",
    ):
        assert name in apps, name
    core_event = schemas(OpenAPI(Registry()), "api/v1")["io.k8s.api.core.v1.Event"]
    assert core_event["x-kubernetes-group-version-kind"][0]["group"] == ""
    events = schemas(OpenAPI(Registry()), "apis/events.k8s.io/v1")
    assert "io.k8s.api.events.v1.Event" in events
    crd = schemas(OpenAPI(Registry()), "apis/apiextensions.k8s.io/v1")
    assert ("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition"
            in crd)


def test_fields_keep_types_descriptions_and_required() -> None:
    core = schemas(OpenAPI(Registry()), "api/v1")
    container = core["io.k8s.api.core.v1.Container"]
    assert "name" in container["required"]
    assert container["properties"]["name"]["type"] == "string"
    assert "DNS_LABEL" in container["properties"]["name"]["description"]
    assert container["properties"]["args"] == {
        **container["properties"]["args"], "type": "array", "items": {"type": "string"}}
    limits = core["io.k8s.api.core.v1.ResourceRequirements"]["properties"]["limits"]
    assert limits["additionalProperties"] == {
        "$ref": "#/components/schemas/io.k8s.apimachinery.pkg.api.resource.Quantity"}
    port = core["io.k8s.api.core.v1.ServicePort"]["properties"]["targetPort"]
    assert port["allOf"] == [
        {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.util.intstr.IntOrString"}]
    assert core["io.k8s.apimachinery.pkg.util.intstr.IntOrString"]["format"] == "int-or-string"
    created = core["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"]["properties"][
        "creationTimestamp"]
    assert created["allOf"] == [
        {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Time"}]
    pod = core["io.k8s.api.core.v1.Pod"]["properties"]
    assert pod["spec"]["allOf"] == [{"$ref": "#/components/schemas/io.k8s.api.core.v1.PodSpec"}]
    assert pod["spec"]["description"]


def test_type_tables_name_existing_model_fields() -> None:
    from kubernetes_asyncio.client import models

    tables = (openapi_builtin._INT_OR_STRING_FIELDS | openapi_builtin._QUANTITY_FIELDS
              | set(openapi_builtin._SPECIAL_OBJECT_FIELDS))
    for cls, attr in tables:
        assert attr in getattr(models, cls).openapi_types, (cls, attr)


# --- list extensions (strategic merge patch and server-side apply) --------------------------


def test_list_extensions_follow_list_semantics() -> None:
    core = schemas(OpenAPI(Registry()), "api/v1")

    def prop(definition: str, field: str) -> Json:
        return core[definition]["properties"][field]  # type: ignore[no-any-return]

    containers = prop("io.k8s.api.core.v1.PodSpec", "containers")
    assert containers["x-kubernetes-patch-merge-key"] == "name"
    assert containers["x-kubernetes-patch-strategy"] == "merge"
    assert containers["x-kubernetes-list-type"] == "map"
    assert containers["x-kubernetes-list-map-keys"] == ["name"]
    env = prop("io.k8s.api.core.v1.Container", "env")
    assert env["x-kubernetes-patch-merge-key"] == "name"
    ports = prop("io.k8s.api.core.v1.Container", "ports")
    assert ports["x-kubernetes-patch-merge-key"] == "containerPort"
    assert ports["x-kubernetes-list-map-keys"] == ["containerPort", "protocol"]
    mounts = prop("io.k8s.api.core.v1.Container", "volumeMounts")
    assert mounts["x-kubernetes-patch-merge-key"] == "mountPath"
    service_ports = prop("io.k8s.api.core.v1.ServiceSpec", "ports")
    assert service_ports["x-kubernetes-list-map-keys"] == ["port", "protocol"]
    meta = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    finalizers = prop(meta, "finalizers")
    assert finalizers["x-kubernetes-patch-strategy"] == "merge"
    assert finalizers["x-kubernetes-list-type"] == "set"
    assert "x-kubernetes-patch-merge-key" not in finalizers
    assert prop(meta, "ownerReferences")["x-kubernetes-patch-merge-key"] == "uid"
    assert prop("io.k8s.api.core.v1.PodStatus", "conditions")[
        "x-kubernetes-patch-merge-key"] == "type"
    assert "x-kubernetes-patch-merge-key" not in prop("io.k8s.api.core.v1.Container", "args")

    job_conditions = schemas(OpenAPI(Registry()), "apis/batch/v1")[
        "io.k8s.api.batch.v1.JobStatus"]["properties"]["conditions"]
    assert job_conditions["x-kubernetes-patch-merge-key"] == "type"
    assert job_conditions["x-kubernetes-list-type"] == "atomic"


# --- paths --------------------------------------------------------------------------------


def test_namespaced_resource_paths_and_operations() -> None:
    apps = doc(OpenAPI(Registry()), "apis/apps/v1")
    gvk = {"group": "apps", "version": "v1", "kind": "Deployment"}
    collection = "/apis/apps/v1/namespaces/{namespace}/deployments"
    item = collection + "/{name}"
    paths = apps["paths"]
    assert set(paths[collection]) == {"get", "post", "delete", "parameters"}
    assert set(paths[item]) == {"get", "put", "patch", "delete", "parameters"}
    assert set(paths["/apis/apps/v1/deployments"]) == {"get", "parameters"}
    for path in (collection, item, item + "/status"):
        for method, op in paths[path].items():
            if method != "parameters":
                assert op["x-kubernetes-group-version-kind"] == gvk, (path, method)
    assert {p["name"] for p in paths[item]["parameters"]} == {"name", "namespace", "pretty"}

    patch = patch_op(apps, item)
    assert param_names(patch) == {"dryRun", "fieldManager", "fieldValidation", "force"}
    assert "application/strategic-merge-patch+json" in patch["requestBody"]["content"]
    assert "application/apply-patch+yaml" in patch["requestBody"]["content"]
    assert param_names(paths[collection]["post"]) == {"dryRun", "fieldManager",
                                                      "fieldValidation"}
    assert param_names(paths[item]["put"]) == {"dryRun", "fieldManager", "fieldValidation"}
    assert param_names(patch_op(apps, item + "/status")) == param_names(patch)
    assert paths[collection]["get"]["x-kubernetes-action"] == "list"
    assert paths[collection]["delete"]["x-kubernetes-action"] == "deletecollection"

    scale = paths[item + "/scale"]
    assert scale["patch"]["x-kubernetes-group-version-kind"] == {
        "group": "autoscaling", "version": "v1", "kind": "Scale"}
    assert "fieldValidation" in param_names(scale["patch"])
    ok = scale["get"]["responses"]["200"]["content"]["application/json"]["schema"]
    assert ok == {"$ref": "#/components/schemas/io.k8s.api.autoscaling.v1.Scale"}


def test_cluster_scoped_resources_and_verbs() -> None:
    core = doc(OpenAPI(Registry()), "api/v1")
    paths = core["paths"]
    assert "/api/v1/nodes/{name}" in paths
    assert not any(p.startswith("/api/v1/namespaces/{namespace}/nodes") for p in paths)
    # Namespaces cannot be deleted as a collection.
    assert set(paths["/api/v1/namespaces"]) == {"get", "post", "parameters"}
    assert "/api/v1/namespaces/{name}/status" in paths
    assert "/api/v1/namespaces/{namespace}/configmaps/{name}/status" not in paths
    assert "/api/v1/configmaps" in paths


# --- custom resources ---------------------------------------------------------------------


def test_custom_resource_schema_as_the_apiserver_publishes_it() -> None:
    registry = Registry()
    api = OpenAPI(registry)
    before = api.v3_root()["paths"]
    registry.set_crd("widgets.example.com", widget_types())
    after = api.v3_root()["paths"]
    assert set(after) - set(before) == {"apis/example.com/v1"}
    # Other group-versions did not change, so neither did their hashes.
    assert all(after[p] == before[p] for p in before)

    d = doc(api, "apis/example.com/v1")
    widget = d["components"]["schemas"]["com.example.v1.Widget"]
    assert widget["description"] == "A Widget is a thing for tests."
    assert widget["x-kubernetes-group-version-kind"] == [
        {"group": "example.com", "version": "v1", "kind": "Widget"}]
    props = widget["properties"]
    assert props["metadata"]["allOf"] == [
        {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}]
    assert props["apiVersion"]["type"] == props["kind"]["type"] == "string"
    assert props["spec"]["properties"]["size"]["description"] == "How big the widget is."
    assert props["spec"]["properties"]["tags"]["x-kubernetes-list-type"] == "set"
    widget_list = d["components"]["schemas"]["com.example.v1.WidgetList"]
    assert widget_list["properties"]["items"]["items"] == {
        "$ref": "#/components/schemas/com.example.v1.Widget"}
    assert "metadata" not in WIDGET_SCHEMA["properties"]  # the CRD's schema is not mutated

    item = "/apis/example.com/v1/namespaces/{namespace}/widgets/{name}"
    for path in (item, item + "/status"):
        patch = patch_op(d, path)
        assert "fieldValidation" in param_names(patch)
        # Custom resources take no strategic merge patch: kubectl sends a merge patch.
        assert "application/strategic-merge-patch+json" not in patch["requestBody"]["content"]
        assert "application/merge-patch+json" in patch["requestBody"]["content"]
    names = set(d["components"]["schemas"])
    assert all(r.removeprefix("#/components/schemas/") in names for r in refs(d))

    registry.remove_crd("widgets.example.com")
    assert api.v3_root()["paths"] == before
    assert api.v3_group_version("apis/example.com/v1") is None


def test_custom_resource_without_schema_preserves_unknown_fields() -> None:
    registry = Registry()
    registry.set_crd("widgets.example.com", widget_types(schema=None))
    widget = schemas(OpenAPI(registry), "apis/example.com/v1")["com.example.v1.Widget"]
    assert widget["x-kubernetes-preserve-unknown-fields"] is True
    assert set(widget["properties"]) == {"apiVersion", "kind", "metadata"}


def test_changed_crd_schema_changes_the_hash() -> None:
    registry = Registry()
    api = OpenAPI(registry)
    registry.set_crd("widgets.example.com", widget_types())
    first = api.v3_root()["paths"]["apis/example.com/v1"]
    changed = json.loads(json.dumps(WIDGET_SCHEMA))
    changed["description"] = "Changed."
    registry.set_crd("widgets.example.com", widget_types(changed))
    second = api.v3_root()["paths"]["apis/example.com/v1"]
    assert first != second
    registry.set_crd("widgets.example.com", widget_types())
    assert api.v3_root()["paths"]["apis/example.com/v1"] == first


# --- Swagger 2.0 --------------------------------------------------------------------------


def test_swagger_v2_document() -> None:
    registry = Registry()
    registry.set_crd("widgets.example.com", widget_types())
    v2 = OpenAPI(registry).v2()
    assert v2["swagger"] == "2.0"
    definitions = v2["definitions"]
    for target in refs(v2):
        assert target.startswith("#/definitions/"), target
        assert target.removeprefix("#/definitions/") in definitions, target
    assert definitions["io.k8s.apimachinery.pkg.util.intstr.IntOrString"]["type"] == "string"
    assert "com.example.v1.Widget" in definitions
    patch = v2["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"]
    assert "application/strategic-merge-patch+json" in patch["consumes"]
    assert patch["x-kubernetes-group-version-kind"]["kind"] == "Deployment"
    body = [p for p in patch["parameters"] if p["in"] == "body"]
    assert body[0]["schema"] == {"$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Patch"}
    validation = [p for p in patch["parameters"] if p["name"] == "fieldValidation"]
    assert validation[0]["type"] == "string"
    assert "schema" not in validation[0]


def test_builtin_catalog_is_shared_and_unique() -> None:
    catalog = builtin_catalog()
    assert builtin_catalog() is catalog
    seen: dict[str, tuple[str, str, str]] = {}
    for rt in BUILTIN_TYPES:
        names = catalog.kind(rt.group, rt.version, rt.kind)
        assert names is not None, rt
        key = (rt.group, rt.version, rt.kind)
        assert seen.setdefault(names[0], key) == key


# --- the real kubectl ---------------------------------------------------------------------

DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: main
        image: nginx
        env:
        - {name: A, value: "1"}
        - {name: B, value: "2"}
      - name: side
        image: busybox
"""

WIDGET_CRD: Json = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {
        "group": "example.com",
        "scope": "Namespaced",
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget",
                  "listKind": "WidgetList"},
        "versions": [{"name": "v1", "served": True, "storage": True,
                      "subresources": {"status": {}},
                      "schema": {"openAPIV3Schema": WIDGET_SCHEMA}}],
    },
}


async def retry(kubectl: Kubectl, *args: str, attempts: int = 50) -> str:
    """Run kubectl until it succeeds (discovery of a new CRD takes a moment)."""
    for _ in range(attempts - 1):
        result = await kubectl.run(*args)
        if result.code == 0:
            return result.stdout
        await asyncio.sleep(0.1)
    return await kubectl(*args)


@pytest.mark.kubectl
async def test_kubectl_explain_builtin(kubectl: Kubectl) -> None:
    out = await kubectl("explain", "deployment.spec.template.spec.containers")
    assert "KIND:       Deployment" in out
    assert "FIELD: containers <[]Container>" in out
    assert re.search(r"env\t<\[\]EnvVar>", out)
    assert re.search(r"name\t<string> -required-", out)
    assert "List of environment variables to set in the container" in out

    out = await kubectl("explain", "deployment.spec.strategy.rollingUpdate.maxSurge")
    assert "FIELD: maxSurge <IntOrString>" in out


@pytest.mark.kubectl
async def test_kubectl_explain_custom_resource(kubectl: Kubectl) -> None:
    await kubectl("apply", "-f", "-", stdin=json.dumps(WIDGET_CRD))
    out = await retry(kubectl, "explain", "widgets.spec")
    assert "GROUP:      example.com" in out
    assert "KIND:       Widget" in out
    assert "What the widget should be." in out
    assert re.search(r"size\t<integer>\n\s+How big the widget is\.", out)
    out = await kubectl("explain", "widgets")
    assert "A Widget is a thing for tests." in out
    assert re.search(r"metadata\t<ObjectMeta>", out)


@pytest.mark.kubectl
async def test_kubectl_uses_server_side_field_validation(kubectl: Kubectl) -> None:
    # The OpenAPI v3 PATCH operation lists fieldValidation, so kubectl leaves the check to the
    # server (it sends fieldValidation=Strict and does not validate the fields itself).
    result = await kubectl.run("apply", "-f", "-", "-v=6", stdin=DEPLOYMENT)
    assert result.code == 0, result.stderr
    assert "fieldValidation=Strict" in result.stderr


@pytest.mark.kubectl
async def test_kubectl_apply_sends_a_strategic_merge_patch(
    kubectl: Kubectl, tmp_path: Path
) -> None:
    await kubectl("apply", "-f", "-", stdin=DEPLOYMENT)
    # Another actor adds an env entry the applied configuration does not know about.
    await kubectl("set", "env", "deployment/web", "-c", "main", "EXTRA=kept")
    changed = DEPLOYMENT.replace('{name: B, value: "2"}', '{name: B, value: "20"}')
    result = await kubectl.run("apply", "-f", "-", "-v=8", stdin=changed)
    assert result.code == 0, result.stderr
    assert "warning" not in result.stderr.lower()
    assert "Content-Type: application/strategic-merge-patch+json" in result.stderr

    got = yaml.safe_load(await kubectl("get", "deployment", "web", "-o", "yaml"))
    containers = got["spec"]["template"]["spec"]["containers"]
    assert [c["name"] for c in containers] == ["main", "side"]
    env = {e["name"]: e["value"] for e in containers[0]["env"]}
    assert env == {"A": "1", "B": "20", "EXTRA": "kept"}
