"""CustomResourceDefinitions: establishment, serving, deletion, versions, and the schema."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from conformance_support import (
    CRD_NAME,
    GROUP,
    KIND,
    MERGE,
    PLURAL,
    Raw,
    assert_status,
    causes_by_field,
    eventually,
    expect_error,
    gone,
    install_crd,
    widget,
    widget_crd,
)
from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException

from hack.localcluster.server import LocalCluster

Json = dict[str, Any]
NS = "default"


async def create(custom: client.CustomObjectsApi, body: Json, version: str = "v1",
                 **kw: Any) -> Json:
    obj: Json = await custom.create_namespaced_custom_object(GROUP, version, NS, PLURAL, body,
                                                             **kw)
    return obj


# --- lifecycle --------------------------------------------------------------------------------


async def test_crd_becomes_established(api: client.ApiClient, widgets: Json) -> None:
    ext = client.ApiextensionsV1Api(api)

    async def established() -> bool:
        crd = await ext.read_custom_resource_definition(CRD_NAME)
        conditions = {c.type: c for c in (crd.status.conditions or [])}
        return "Established" in conditions and conditions["Established"].status == "True"

    await eventually(established, what="Established")
    crd = await ext.read_custom_resource_definition(CRD_NAME)
    conditions = {c.type: c for c in crd.status.conditions}
    assert conditions["NamesAccepted"].status == "True"
    assert crd.status.accepted_names.kind == KIND
    assert crd.status.accepted_names.short_names == ["wd"]
    assert crd.status.accepted_names.list_kind == "WidgetList"
    assert crd.status.stored_versions == ["v1"]
    # Defaults of the CRD API itself.
    assert crd.spec.names.list_kind == "WidgetList"
    assert crd.spec.conversion.strategy == "None"


async def test_objects_served_at_every_served_version(
        custom: client.CustomObjectsApi, widgets: Json) -> None:
    made = await create(custom, widget("w1", version="v1beta1"), version="v1beta1")
    assert made["apiVersion"] == f"{GROUP}/v1beta1"
    at_v1 = await custom.get_namespaced_custom_object(GROUP, "v1", NS, PLURAL, "w1")
    assert at_v1["apiVersion"] == f"{GROUP}/v1"
    assert at_v1["metadata"]["uid"] == made["metadata"]["uid"]
    listed = await custom.list_namespaced_custom_object(GROUP, "v1beta1", NS, PLURAL)
    assert listed["kind"] == "WidgetList" and listed["apiVersion"] == f"{GROUP}/v1beta1"
    assert [i["apiVersion"] for i in listed["items"]] == [f"{GROUP}/v1beta1"]


async def test_unserved_version_is_not_found(api: client.ApiClient, raw: Raw,
                                             widgets: Json, cluster: LocalCluster) -> None:
    ext = client.ApiextensionsV1Api(api)
    await ext.patch_custom_resource_definition(
        CRD_NAME, [{"op": "replace", "path": "/spec/versions/1/served", "value": False}])
    await cluster.settle()

    async def unserved() -> bool:
        return (await raw.get(f"/apis/{GROUP}/v1beta1/namespaces/{NS}/{PLURAL}")).status == 404

    await eventually(unserved, what="v1beta1 to stop being served")
    assert (await raw.get(f"/apis/{GROUP}/v1/namespaces/{NS}/{PLURAL}")).status == 200


async def test_deleting_crd_deletes_objects_and_stops_serving(
        api: client.ApiClient, custom: client.CustomObjectsApi, raw: Raw, widgets: Json,
        cluster: LocalCluster) -> None:
    await create(custom, widget("a"))
    await create(custom, widget("b"))
    ext = client.ApiextensionsV1Api(api)
    deleted = await ext.delete_custom_resource_definition(CRD_NAME)
    assert deleted is not None
    await cluster.settle()
    await eventually(lambda: gone(lambda: ext.read_custom_resource_definition(CRD_NAME)),
                     what="the CRD to go away")
    resp = await raw.get(f"/apis/{GROUP}/v1/namespaces/{NS}/{PLURAL}")
    assert resp.status == 404
    assert not [k for k in cluster.storage.resources() if k == (GROUP, PLURAL)
                and cluster.storage.count(k)]
    # Recreating the CRD serves an empty collection: the old objects are gone for good.
    await install_crd(api)
    listed = await custom.list_namespaced_custom_object(GROUP, "v1", NS, PLURAL)
    assert listed["items"] == []


async def test_crd_deletion_waits_for_objects_with_finalizers(
        api: client.ApiClient, custom: client.CustomObjectsApi, widgets: Json,
        cluster: LocalCluster) -> None:
    body = widget("held")
    body["metadata"]["finalizers"] = ["example.com/hold"]
    await create(custom, body)
    ext = client.ApiextensionsV1Api(api)
    await ext.delete_custom_resource_definition(CRD_NAME)
    await cluster.settle()
    crd = await ext.read_custom_resource_definition(CRD_NAME)
    assert crd.metadata.deletion_timestamp is not None
    assert "customresourcecleanup.apiextensions.k8s.io" in crd.metadata.finalizers
    held = await custom.get_namespaced_custom_object(GROUP, "v1", NS, PLURAL, "held")
    assert held["metadata"]["deletionTimestamp"]
    # While the CRD terminates, new objects are refused; the rest still works.
    status = await expect_error(create(custom, widget("late")), 405, "MethodNotAllowed")
    assert status["message"] == ("create not allowed while custom resource definition is"
                                 " terminating")
    listed = await custom.list_namespaced_custom_object(GROUP, "v1", NS, PLURAL)
    assert [i["metadata"]["name"] for i in listed["items"]] == ["held"]
    await custom.patch_namespaced_custom_object(GROUP, "v1", NS, PLURAL, "held",
                                                {"metadata": {"finalizers": None}},
                                                _content_type=MERGE)
    await cluster.settle()
    await eventually(lambda: gone(lambda: ext.read_custom_resource_definition(CRD_NAME)),
                     what="the CRD to go away")


async def test_cluster_scoped_crd(api: client.ApiClient, custom: client.CustomObjectsApi,
                                  raw: Raw) -> None:
    await install_crd(api, widget_crd(scope="Cluster", group="cluster.example.com",
                                      plural="gadgets", kind="Gadget"))
    body = {"apiVersion": "cluster.example.com/v1", "kind": "Gadget",
            "metadata": {"name": "g1"}, "spec": {"size": "big"}}
    made = await custom.create_cluster_custom_object("cluster.example.com", "v1", "gadgets",
                                                     body)
    assert "namespace" not in made["metadata"]
    got = await custom.get_cluster_custom_object("cluster.example.com", "v1", "gadgets", "g1")
    assert got["metadata"]["uid"] == made["metadata"]["uid"]
    resp = await raw.get("/apis/cluster.example.com/v1/namespaces/default/gadgets")
    assert resp.status == 404


async def test_crd_name_must_match_names(api: client.ApiClient) -> None:
    crd = widget_crd()
    crd["metadata"]["name"] = "wrong.conformance.example.com"
    status = await expect_error(
        client.ApiextensionsV1Api(api).create_custom_resource_definition(crd), 422, "Invalid")
    assert "metadata.name" in causes_by_field(status)
    assert status["details"]["kind"] == "CustomResourceDefinition"
    assert status["details"]["group"] == "apiextensions.k8s.io"


async def test_crd_needs_exactly_one_storage_version(api: client.ApiClient) -> None:
    crd = widget_crd()
    crd["spec"]["versions"][1]["storage"] = True
    status = await expect_error(
        client.ApiextensionsV1Api(api).create_custom_resource_definition(crd), 422, "Invalid")
    assert "spec.versions" in causes_by_field(status)
    assert "exactly one version marked as storage version" in status["message"]


async def test_non_structural_crd_is_rejected(api: client.ApiClient) -> None:
    crd = widget_crd()
    for version in crd["spec"]["versions"]:
        version["schema"] = {"openAPIV3Schema": {
            "type": "object",
            "properties": {"spec": {"properties": {"size": {"type": "string"}}}}}}
    status = await expect_error(
        client.ApiextensionsV1Api(api).create_custom_resource_definition(crd), 422, "Invalid")
    fields = list(causes_by_field(status))
    assert "spec.versions[0].schema.openAPIV3Schema.properties[spec].type" in fields, fields
    cause = causes_by_field(status)[
        "spec.versions[0].schema.openAPIV3Schema.properties[spec].type"]
    assert cause["reason"] == "FieldValueRequired"
    assert "must not be empty for specified object fields" in cause["message"]


async def test_crd_group_and_scope_are_immutable(api: client.ApiClient, widgets: Json) -> None:
    ext = client.ApiextensionsV1Api(api)
    status = await expect_error(ext.patch_custom_resource_definition(
        CRD_NAME, {"spec": {"scope": "Cluster"}}), 422, "Invalid")
    assert "spec.scope" in causes_by_field(status)


# --- validation -------------------------------------------------------------------------------


INVALID = [
    ("type", {"replicas": "three"}, "spec.replicas", "FieldValueTypeInvalid",
     'spec.replicas in body must be of type integer: "string"'),
    ("enum", {"color": "pink"}, "spec.color", "FieldValueNotSupported",
     'Unsupported value: "pink": supported values: "red", "green", "blue"'),
    ("minimum", {"replicas": -1}, "spec.replicas", "FieldValueInvalid",
     "should be greater than or equal to 0"),
    ("maximum", {"replicas": 11}, "spec.replicas", "FieldValueInvalid",
     "should be less than or equal to 10"),
    ("minLength", {"size": ""}, "spec.size", "FieldValueInvalid",
     "spec.size in body should be at least 1 chars long"),
    ("maxLength", {"size": "abcdefghi"}, "spec.size", "FieldValueTooLong", "Too long"),
    ("pattern", {"size": "BIG"}, "spec.size", "FieldValueInvalid",
     "spec.size in body should match '^[a-z]+$'"),
    ("minItems", {"tags": []}, "spec.tags", "FieldValueInvalid",
     "spec.tags in body should have at least 1 items"),
    ("maxItems", {"tags": ["a", "b", "c", "d"]}, "spec.tags", "FieldValueTooMany",
     "must have at most 3 items"),
    ("maxProperties", {"limits": {"a": "1", "b": "2", "c": "3"}}, "spec.limits",
     "FieldValueTooMany", "must have at most 2 items"),
    ("format", {"owner": "not-an-email"}, "spec.owner", "FieldValueTypeInvalid",
     'spec.owner in body must be of type email: "not-an-email"'),
    ("int-or-string", {"port": True}, "spec.port", "FieldValueTypeInvalid", ""),
    ("items type", {"tags": ["a", 1]}, "spec.tags[1]", "FieldValueTypeInvalid",
     "must be of type string"),
]


@pytest.mark.parametrize(("what", "spec", "field", "reason", "message"), INVALID,
                         ids=[c[0] for c in INVALID])
async def test_schema_violation_is_422(custom: client.CustomObjectsApi, widgets: Json,
                                       what: str, spec: Json, field: str, reason: str,
                                       message: str) -> None:
    status = await expect_error(create(custom, widget("bad", **spec)), 422, "Invalid")
    assert status["details"] == {**status["details"], "name": "bad", "group": GROUP,
                                 "kind": KIND}
    assert status["message"].startswith(f'{KIND}.{GROUP} "bad" is invalid: ')
    causes = causes_by_field(status)
    assert field in causes, causes
    assert causes[field]["reason"] == reason
    assert message in causes[field]["message"]


async def test_required_field(custom: client.CustomObjectsApi, widgets: Json) -> None:
    body = widget("nosize")
    del body["spec"]["size"]
    status = await expect_error(create(custom, body), 422, "Invalid")
    assert causes_by_field(status)["spec.size"]["reason"] == "FieldValueRequired"
    body = widget("nospec")
    del body["spec"]
    status = await expect_error(create(custom, body), 422, "Invalid")
    assert causes_by_field(status)["spec"]["reason"] == "FieldValueRequired"


async def test_several_violations_in_one_status(custom: client.CustomObjectsApi,
                                                widgets: Json) -> None:
    status = await expect_error(create(custom, widget("many", replicas=20, color="pink")),
                                422, "Invalid")
    assert set(causes_by_field(status)) >= {"spec.replicas", "spec.color"}
    assert status["message"].startswith(f'{KIND}.{GROUP} "many" is invalid: [')


async def test_update_is_validated_too(custom: client.CustomObjectsApi, widgets: Json) -> None:
    await create(custom, widget("w"))
    status = await expect_error(custom.patch_namespaced_custom_object(
        GROUP, "v1", NS, PLURAL, "w", {"spec": {"replicas": 99}}, _content_type=MERGE),
        422, "Invalid")
    assert "spec.replicas" in causes_by_field(status)


async def test_valid_values_are_accepted(custom: client.CustomObjectsApi, widgets: Json) -> None:
    made = await create(custom, widget(
        "good", replicas=0, color="blue", tags=["a", "b", "c"], limits={"x": "1", "y": "2"},
        note=None, owner="ops@example.com", port="http",
        config={"anything": {"goes": [1, 2, 3]}}))
    spec = made["spec"]
    assert spec["note"] is None  # nullable keeps an explicit null
    assert spec["config"] == {"anything": {"goes": [1, 2, 3]}}
    assert spec["port"] == "http"
    made = await create(custom, widget("good2", port=8080))
    assert made["spec"]["port"] == 8080


async def test_null_of_non_nullable_field_is_dropped_or_defaulted(
        custom: client.CustomObjectsApi, widgets: Json) -> None:
    made = await create(custom, widget("nulls", owner=None, replicas=None))
    assert "owner" not in made["spec"]
    assert made["spec"]["replicas"] == 1


async def test_embedded_resource(custom: client.CustomObjectsApi, widgets: Json) -> None:
    made = await create(custom, widget("emb", template={
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "inner", "labels": {"a": "b"}, "bogus": True},
        "data": {"k": "v"}}))
    template = made["spec"]["template"]
    assert template["metadata"] == {"name": "inner", "labels": {"a": "b"}}
    assert template["data"] == {"k": "v"}
    status = await expect_error(create(custom, widget("emb2", template={"data": {}})),
                                422, "Invalid")
    causes = causes_by_field(status)
    assert causes["spec.template.apiVersion"]["reason"] == "FieldValueRequired"
    assert causes["spec.template.kind"]["reason"] == "FieldValueRequired"


# --- pruning and defaulting -------------------------------------------------------------------


async def test_unknown_fields_are_pruned_with_warning(custom: client.CustomObjectsApi,
                                                      widgets: Json) -> None:
    body = widget("pruned", bogus="x")
    body["extra"] = {"a": 1}
    made, code, headers = await custom.create_namespaced_custom_object_with_http_info(
        GROUP, "v1", NS, PLURAL, body)
    assert code == 201
    assert "bogus" not in made["spec"] and "extra" not in made
    warning = headers.get("Warning", "")
    assert 'unknown field \\"spec.bogus\\"' in warning, warning
    assert warning.startswith("299 - ")
    stored = await custom.get_namespaced_custom_object(GROUP, "v1", NS, PLURAL, "pruned")
    assert "bogus" not in stored["spec"] and "extra" not in stored


async def test_unknown_fields_strict_is_400(custom: client.CustomObjectsApi,
                                            widgets: Json) -> None:
    status = await expect_error(
        create(custom, widget("strict", bogus="x"), field_validation="Strict"),
        400, "BadRequest")
    assert 'strict decoding error: unknown field "spec.bogus"' in status["message"]
    with pytest.raises(ApiException) as err:
        await custom.get_namespaced_custom_object(GROUP, "v1", NS, PLURAL, "strict")
    assert err.value.status == 404


async def test_defaults_are_applied(custom: client.CustomObjectsApi, widgets: Json) -> None:
    made = await create(custom, widget("defaults"))
    assert made["spec"]["replicas"] == 1
    assert made["spec"]["color"] == "red"
    assert made["spec"]["nested"] == {"level": 3}
    # An explicit value wins over the default; defaults also fill in on update.
    made = await create(custom, widget("explicit", color="green", nested={"level": 5}))
    assert (made["spec"]["color"], made["spec"]["nested"]) == ("green", {"level": 5})
    body = copy.deepcopy(made)
    del body["spec"]["color"]
    updated = await custom.replace_namespaced_custom_object(GROUP, "v1", NS, PLURAL,
                                                            "explicit", body)
    assert updated["spec"]["color"] == "red"


async def test_status_on_create_is_dropped(custom: client.CustomObjectsApi,
                                           widgets: Json) -> None:
    body = widget("st")
    body["status"] = {"phase": "Done", "replicas": 3}
    made = await create(custom, body)
    assert "status" not in made


async def test_crd_with_wrong_kind_in_body(raw: Raw, widgets: Json) -> None:
    body = widget("wrongkind")
    body["kind"] = "Gizmo"
    resp = await raw.request("POST", f"/apis/{GROUP}/v1/namespaces/{NS}/{PLURAL}", body=body)
    assert_status(resp, 400, "BadRequest")
