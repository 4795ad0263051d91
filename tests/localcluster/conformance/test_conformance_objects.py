"""Object metadata and the per-object rules: identity, versions, generation, names,
namespaces, conflicts, immutable fields, and the status and scale subresources."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest
from conformance_support import (
    GROUP,
    KIND,
    MERGE,
    PLURAL,
    causes_by_field,
    eventually,
    expect_error,
    gone,
    widget,
)
from kubernetes_asyncio import client

from hack.localcluster.server import LocalCluster

Json = dict[str, Any]
NS = "default"


def deployment(name: str, replicas: int = 1, app: str = "web") -> Json:
    return {"metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": app}},
                     "template": {"metadata": {"labels": {"app": app}},
                                  "spec": {"containers": [{"name": "c", "image": "nginx:1"}]}}}}


# --- identity and versions ------------------------------------------------------------------


async def test_server_sets_uid_timestamp_and_one_global_resource_version(
        core: client.CoreV1Api, custom: client.CustomObjectsApi, widgets: Json) -> None:
    cm = await core.create_namespaced_config_map(NS, {"metadata": {"name": "a", "uid": "mine",
                                                                   "resourceVersion": "7"}})
    secret = await core.create_namespaced_secret(NS, {"metadata": {"name": "b"}})
    w = await custom.create_namespaced_custom_object(GROUP, "v1", NS, PLURAL, widget("c"))
    cm2 = await core.patch_namespaced_config_map("a", NS, {"data": {"k": "v"}})
    rvs = [int(cm.metadata.resource_version), int(secret.metadata.resource_version),
           int(w["metadata"]["resourceVersion"]), int(cm2.metadata.resource_version)]
    assert rvs == sorted(rvs) and len(set(rvs)) == 4, rvs
    assert cm.metadata.uid != "mine"
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
                        cm.metadata.uid)
    assert cm.metadata.uid != secret.metadata.uid
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", w["metadata"]["creationTimestamp"])
    assert cm2.metadata.uid == cm.metadata.uid
    assert cm2.metadata.creation_timestamp == cm.metadata.creation_timestamp


async def test_no_op_update_keeps_resource_version(core: client.CoreV1Api) -> None:
    cm = await core.create_namespaced_config_map(NS, {"metadata": {"name": "same"},
                                                      "data": {"k": "v"}})
    again = await core.patch_namespaced_config_map("same", NS, {"data": {"k": "v"}})
    assert again.metadata.resource_version == cm.metadata.resource_version


async def test_generation_counts_spec_changes_only(apps: client.AppsV1Api) -> None:
    d = await apps.create_namespaced_deployment(NS, deployment("gen"))
    assert d.metadata.generation == 1
    d = await apps.patch_namespaced_deployment("gen", NS, {"metadata": {"labels": {"a": "b"}}})
    assert d.metadata.generation == 1
    d = await apps.patch_namespaced_deployment_status("gen", NS,
                                                      {"status": {"replicas": 1}})
    assert d.metadata.generation == 1 and d.status.replicas == 1
    d = await apps.patch_namespaced_deployment("gen", NS, {"spec": {"replicas": 3}})
    assert d.metadata.generation == 2
    d = await apps.patch_namespaced_deployment("gen", NS, {"spec": {"replicas": 3}})
    assert d.metadata.generation == 2


async def test_custom_resource_generation(custom: client.CustomObjectsApi,
                                          widgets: Json) -> None:
    async def patch(body: Json, sub: str = "") -> Json:
        fn = (custom.patch_namespaced_custom_object_status if sub
              else custom.patch_namespaced_custom_object)
        out: Json = await fn(GROUP, "v1", NS, PLURAL, "g", body, _content_type=MERGE)
        return out

    made = await custom.create_namespaced_custom_object(GROUP, "v1", NS, PLURAL, widget("g"))
    assert made["metadata"]["generation"] == 1
    assert (await patch({"metadata": {"annotations": {"x": "y"}}}))["metadata"][
        "generation"] == 1
    assert (await patch({"status": {"phase": "Ready"}}, "status"))["metadata"][
        "generation"] == 1
    assert (await patch({"spec": {"color": "blue"}}))["metadata"]["generation"] == 2


async def test_generate_name(core: client.CoreV1Api) -> None:
    made = await core.create_namespaced_config_map(NS, {"metadata": {"generateName": "pre-"}})
    assert re.fullmatch(r"pre-[a-z0-9]{5}", made.metadata.name), made.metadata.name
    assert made.metadata.generate_name == "pre-"
    other = await core.create_namespaced_config_map(NS, {"metadata": {"generateName": "pre-"}})
    assert other.metadata.name != made.metadata.name


async def test_name_is_required(core: client.CoreV1Api) -> None:
    status = await expect_error(core.create_namespaced_config_map(NS, {"metadata": {}}),
                                422, "Invalid")
    cause = causes_by_field(status)["metadata.name"]
    assert cause["reason"] == "FieldValueRequired"
    assert cause["message"] == "Required value: name or generateName is required"


SUBDOMAIN = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters,"
             " '-' or '.', and must start and end with an alphanumeric character")
LABEL = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or"
         " '-', and must start and end with an alphanumeric character")
DNS1035 = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start"
           " with an alphabetic character, and end with an alphanumeric character")


async def test_invalid_names(core: client.CoreV1Api) -> None:
    status = await expect_error(
        core.create_namespaced_config_map(NS, {"metadata": {"name": "Bad_Name"}}), 422,
        "Invalid")
    assert status["message"].startswith(
        'ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": '
        + SUBDOMAIN)
    assert status["details"] == {"name": "Bad_Name", "kind": "ConfigMap",
                                 "causes": status["details"]["causes"]}
    status = await expect_error(core.create_namespace({"metadata": {"name": "a.b"}}), 422,
                                "Invalid")
    assert LABEL in causes_by_field(status)["metadata.name"]["message"]
    status = await expect_error(core.create_namespaced_service(NS, {
        "metadata": {"name": "1svc"}, "spec": {"ports": [{"port": 80}]}}), 422, "Invalid")
    assert DNS1035 in causes_by_field(status)["metadata.name"]["message"]
    status = await expect_error(
        core.create_namespaced_config_map(NS, {"metadata": {"name": "x" * 254}}), 422,
        "Invalid")
    assert "must be no more than 253 characters" in status["message"]


async def test_namespace_must_exist(core: client.CoreV1Api) -> None:
    status = await expect_error(
        core.create_namespaced_config_map("nope", {"metadata": {"name": "x"}}), 404,
        "NotFound")
    assert status["message"] == 'namespaces "nope" not found'
    assert status["details"] == {"name": "nope", "kind": "namespaces"}


async def test_deleting_namespace_deletes_contents(
        core: client.CoreV1Api, custom: client.CustomObjectsApi, widgets: Json,
        cluster: LocalCluster) -> None:
    await core.create_namespace({"metadata": {"name": "doomed"}})
    await core.create_namespaced_config_map("doomed", {"metadata": {"name": "c"}})
    await core.create_namespaced_config_map("doomed", {"metadata": {
        "name": "held", "finalizers": ["example.com/hold"]}})
    await custom.create_namespaced_custom_object(GROUP, "v1", "doomed", PLURAL,
                                                 widget("w", namespace="doomed"))
    await core.delete_namespace("doomed")
    ns = await core.read_namespace("doomed")
    assert ns.status.phase == "Terminating" and ns.metadata.deletion_timestamp
    await cluster.settle()
    # The held object keeps the namespace terminating; creating in it is forbidden.
    status = await expect_error(core.create_namespaced_config_map(
        "doomed", {"metadata": {"name": "late"}}), 403, "Forbidden")
    assert status["message"] == ('configmaps "late" is forbidden: unable to create new content'
                                 " in namespace doomed because it is being terminated")
    assert causes_by_field(status)["metadata.namespace"]["reason"] == "NamespaceTerminating"
    names = [c.metadata.name for c in (await core.list_namespaced_config_map("doomed")).items]
    assert names == ["held"]
    assert (await custom.list_namespaced_custom_object(GROUP, "v1", "doomed", PLURAL))[
        "items"] == []
    await core.patch_namespaced_config_map("held", "doomed", {"metadata": {"finalizers": None}})
    await cluster.settle()
    await eventually(lambda: gone(lambda: core.read_namespace("doomed")),
                     what="the namespace to go away")


async def test_default_namespaces_exist_and_cannot_be_deleted(core: client.CoreV1Api) -> None:
    names = {n.metadata.name for n in (await core.list_namespace()).items}
    assert {"default", "kube-system", "kube-public", "kube-node-lease"} <= names
    await expect_error(core.delete_namespace("default"), 403, "Forbidden")


# --- conflicts and not found ----------------------------------------------------------------


async def test_already_exists(core: client.CoreV1Api, apps: client.AppsV1Api) -> None:
    await core.create_namespaced_config_map(NS, {"metadata": {"name": "dup"}})
    status = await expect_error(
        core.create_namespaced_config_map(NS, {"metadata": {"name": "dup"}}), 409,
        "AlreadyExists")
    assert status["message"] == 'configmaps "dup" already exists'
    assert status["details"] == {"name": "dup", "kind": "configmaps"}
    await apps.create_namespaced_deployment(NS, deployment("dup"))
    status = await expect_error(apps.create_namespaced_deployment(NS, deployment("dup")), 409,
                                "AlreadyExists")
    assert status["message"] == 'deployments.apps "dup" already exists'
    assert status["details"] == {"name": "dup", "group": "apps", "kind": "deployments"}


async def test_not_found(core: client.CoreV1Api, custom: client.CustomObjectsApi,
                         widgets: Json) -> None:
    status = await expect_error(core.read_namespaced_config_map("nope", NS), 404, "NotFound")
    assert status["message"] == 'configmaps "nope" not found'
    assert status["details"] == {"name": "nope", "kind": "configmaps"}
    status = await expect_error(
        custom.get_namespaced_custom_object(GROUP, "v1", NS, PLURAL, "nope"), 404, "NotFound")
    assert status["message"] == f'{PLURAL}.{GROUP} "nope" not found'
    await expect_error(core.delete_namespaced_config_map("nope", NS), 404, "NotFound")
    await expect_error(core.replace_namespaced_config_map(
        "nope", NS, {"metadata": {"name": "nope"}}), 404, "NotFound")
    await expect_error(core.patch_namespaced_config_map("nope", NS, {"data": {}}), 404,
                       "NotFound")


async def test_stale_resource_version_conflicts(core: client.CoreV1Api) -> None:
    cm = await core.create_namespaced_config_map(NS, {"metadata": {"name": "c"}})
    body = cm.to_dict()
    await core.patch_namespaced_config_map("c", NS, {"data": {"a": "1"}})
    stale = {"metadata": {"name": "c", "resourceVersion": cm.metadata.resource_version},
             "data": {"b": "2"}}
    status = await expect_error(core.replace_namespaced_config_map("c", NS, stale), 409,
                                "Conflict")
    assert status["message"] == (
        'Operation cannot be fulfilled on configmaps "c": the object has been modified;'
        " please apply your changes to the latest version and try again")
    assert status["details"] == {"name": "c", "kind": "configmaps"}
    # A merge patch carrying a stale resourceVersion conflicts too.
    await expect_error(core.patch_namespaced_config_map("c", NS, {"metadata": {
        "resourceVersion": cm.metadata.resource_version}, "data": {"c": "3"}}), 409,
        "Conflict")
    # Without a resourceVersion an update is unconditional.
    del body["metadata"]
    updated = await core.replace_namespaced_config_map(
        "c", NS, {"metadata": {"name": "c"}, "data": {"d": "4"}})
    assert updated.data == {"d": "4"}


async def test_name_in_body_must_match_url(core: client.CoreV1Api) -> None:
    await core.create_namespaced_config_map(NS, {"metadata": {"name": "c"}})
    await expect_error(core.replace_namespaced_config_map(
        "c", NS, {"metadata": {"name": "other"}}), 400, "BadRequest")


# --- immutable fields -----------------------------------------------------------------------


async def test_deployment_selector_is_immutable(apps: client.AppsV1Api) -> None:
    d = await apps.create_namespaced_deployment(NS, deployment("imm"))
    body = d.to_dict()
    changed = deployment("imm", app="other")
    changed["metadata"]["resourceVersion"] = body["metadata"]["resource_version"]
    status = await expect_error(apps.replace_namespaced_deployment("imm", NS, changed), 422,
                                "Invalid")
    cause = causes_by_field(status)["spec.selector"]
    assert cause["reason"] == "FieldValueInvalid"
    assert cause["message"].endswith("field is immutable")


async def test_service_cluster_ip_is_immutable_but_may_be_omitted(
        core: client.CoreV1Api) -> None:
    svc = await core.create_namespaced_service(NS, {
        "metadata": {"name": "s"}, "spec": {"selector": {"app": "x"},
                                            "ports": [{"port": 80}]}})
    ip = svc.spec.cluster_ip
    assert ip and svc.spec.cluster_ips == [ip]
    status = await expect_error(core.patch_namespaced_service(
        "s", NS, {"spec": {"clusterIP": "10.96.200.200"}}), 422, "Invalid")
    cause = causes_by_field(status)["spec.clusterIPs[0]"]
    assert cause["message"].endswith("may not change once set")
    # A client that does not send the allocated IP (e.g. a replace from a manifest) keeps it.
    replaced = await core.replace_namespaced_service("s", NS, {
        "metadata": {"name": "s"}, "spec": {"selector": {"app": "y"},
                                            "ports": [{"port": 80}]}})
    assert replaced.spec.cluster_ip == ip and replaced.spec.cluster_ips == [ip]
    assert replaced.spec.selector == {"app": "y"}


async def test_job_template_is_immutable(api: client.ApiClient) -> None:
    batch = client.BatchV1Api(api)
    await batch.create_namespaced_job(NS, {"metadata": {"name": "j"}, "spec": {"template": {
        "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}}})
    status = await expect_error(batch.patch_namespaced_job("j", NS, {"spec": {"template": {
        "spec": {"containers": [{"name": "c", "image": "alpine"}]}}}}), 422, "Invalid")
    cause = causes_by_field(status)["spec.template"]
    assert cause["message"].endswith("field is immutable")


async def test_pvc_spec_is_immutable_except_bound_storage_requests(
        core: client.CoreV1Api) -> None:
    await core.create_namespaced_persistent_volume_claim(NS, {
        "metadata": {"name": "p"},
        "spec": {"accessModes": ["ReadWriteOnce"],
                 "resources": {"requests": {"storage": "1Gi"}}}})
    status = await expect_error(core.patch_namespaced_persistent_volume_claim(
        "p", NS, {"spec": {"accessModes": ["ReadWriteMany"]}}), 422, "Invalid")
    cause = causes_by_field(status)["spec"]
    assert cause["reason"] == "FieldValueForbidden"
    assert "spec is immutable after creation except resources.requests" in cause["message"]
    # An unbound claim cannot be resized either.
    await expect_error(core.patch_namespaced_persistent_volume_claim(
        "p", NS, {"spec": {"resources": {"requests": {"storage": "2Gi"}}}}), 422, "Invalid")
    # The volume binder sets volumeName once; a bound claim may grow.
    await core.patch_namespaced_persistent_volume_claim("p", NS,
                                                        {"spec": {"volumeName": "pv-1"}})
    await core.patch_namespaced_persistent_volume_claim_status(
        "p", NS, {"status": {"phase": "Bound", "capacity": {"storage": "1Gi"}}})
    grown = await core.patch_namespaced_persistent_volume_claim(
        "p", NS, {"spec": {"resources": {"requests": {"storage": "2Gi"}}}})
    assert grown.spec.resources.requests == {"storage": "2Gi"}
    await expect_error(core.patch_namespaced_persistent_volume_claim(
        "p", NS, {"spec": {"volumeName": "pv-2"}}), 422, "Invalid")


# --- status subresource ---------------------------------------------------------------------


async def test_status_subresource_builtin(apps: client.AppsV1Api) -> None:
    await apps.create_namespaced_deployment(NS, deployment("st"))
    d = await apps.patch_namespaced_deployment("st", NS, {"status": {"replicas": 7},
                                                          "spec": {"replicas": 2}})
    assert d.spec.replicas == 2 and d.status.replicas is None
    d = await apps.patch_namespaced_deployment_status("st", NS, {"status": {"replicas": 7},
                                                                 "spec": {"replicas": 5}})
    assert d.spec.replicas == 2 and d.status.replicas == 7
    body = (await apps.read_namespaced_deployment("st", NS)).to_dict()
    body["status"]["replicas"] = 9
    d = await apps.replace_namespaced_deployment("st", NS, _camel(body))
    assert d.status.replicas == 7


async def test_status_subresource_custom(custom: client.CustomObjectsApi, widgets: Json) -> None:
    await custom.create_namespaced_custom_object(GROUP, "v1", NS, PLURAL, widget("s"))
    w = await custom.patch_namespaced_custom_object(
        GROUP, "v1", NS, PLURAL, "s", {"status": {"phase": "Main"}, "spec": {"replicas": 2}},
        _content_type=MERGE)
    assert "status" not in w and w["spec"]["replicas"] == 2
    w = await custom.patch_namespaced_custom_object_status(
        GROUP, "v1", NS, PLURAL, "s", {"status": {"phase": "Sub"}, "spec": {"replicas": 4}},
        _content_type=MERGE)
    assert w["status"] == {"phase": "Sub"} and w["spec"]["replicas"] == 2
    full = copy.deepcopy(w)
    full["status"] = {"phase": "Replaced"}
    full["spec"]["replicas"] = 3
    w = await custom.replace_namespaced_custom_object_status(GROUP, "v1", NS, PLURAL, "s", full)
    assert w["status"] == {"phase": "Replaced"} and w["spec"]["replicas"] == 2
    # The status is validated against the schema too.
    status = await expect_error(custom.patch_namespaced_custom_object_status(
        GROUP, "v1", NS, PLURAL, "s", {"status": {"replicas": "many"}}, _content_type=MERGE),
        422, "Invalid")
    assert "status.replicas" in causes_by_field(status)


def _camel(obj: Any) -> Any:
    """A typed model's to_dict() back into API field names (snake_case -> camelCase)."""
    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            if v is None:
                continue
            head, *rest = k.split("_")
            out[head + "".join(p.capitalize() for p in rest)] = _camel(v)
        return out
    if isinstance(obj, list):
        return [_camel(v) for v in obj]
    return obj


# --- scale subresource ----------------------------------------------------------------------


async def test_deployment_scale(apps: client.AppsV1Api) -> None:
    d = await apps.create_namespaced_deployment(NS, deployment("sc", replicas=2))
    scale = await apps.read_namespaced_deployment_scale("sc", NS)
    assert (scale.kind, scale.api_version) == ("Scale", "autoscaling/v1")
    assert scale.spec.replicas == 2 and scale.status.replicas == 0
    assert scale.status.selector == "app=web"
    assert scale.metadata.uid == d.metadata.uid
    scale = await apps.replace_namespaced_deployment_scale("sc", NS, {
        "metadata": {"name": "sc", "namespace": NS}, "spec": {"replicas": 4}})
    assert scale.spec.replicas == 4
    d2 = await apps.read_namespaced_deployment("sc", NS)
    assert d2.spec.replicas == 4 and d2.metadata.generation == 2
    scale = await apps.patch_namespaced_deployment_scale("sc", NS, {"spec": {"replicas": 1}})
    assert scale.spec.replicas == 1
    status = await expect_error(apps.replace_namespaced_deployment_scale("sc", NS, {
        "metadata": {"name": "sc", "resourceVersion": d.metadata.resource_version},
        "spec": {"replicas": 6}}), 409, "Conflict")
    assert 'deployments.apps "sc"' in status["message"]
    assert (await apps.read_namespaced_deployment("sc", NS)).spec.replicas == 1


async def test_custom_resource_scale(custom: client.CustomObjectsApi, widgets: Json) -> None:
    made = await custom.create_namespaced_custom_object(GROUP, "v1", NS, PLURAL,
                                                        widget("sc", replicas=2))
    await custom.patch_namespaced_custom_object_status(
        GROUP, "v1", NS, PLURAL, "sc", {"status": {"replicas": 2, "selector": "app=w"}},
        _content_type=MERGE)
    scale = await custom.get_namespaced_custom_object_scale(GROUP, "v1", NS, PLURAL, "sc")
    assert (scale["kind"], scale["apiVersion"]) == ("Scale", "autoscaling/v1")
    assert scale["spec"] == {"replicas": 2}
    assert scale["status"] == {"replicas": 2, "selector": "app=w"}
    assert scale["metadata"]["uid"] == made["metadata"]["uid"]
    scale = await custom.replace_namespaced_custom_object_scale(
        GROUP, "v1", NS, PLURAL, "sc", {"apiVersion": "autoscaling/v1", "kind": "Scale",
                                        "metadata": {"name": "sc"}, "spec": {"replicas": 5}})
    assert scale["spec"]["replicas"] == 5
    w = await custom.get_namespaced_custom_object(GROUP, "v1", NS, PLURAL, "sc")
    assert w["spec"]["replicas"] == 5 and w["metadata"]["generation"] == 2
    scale = await custom.patch_namespaced_custom_object_scale(
        GROUP, "v1", NS, PLURAL, "sc", {"spec": {"replicas": 3}}, _content_type=MERGE)
    assert scale["spec"]["replicas"] == 3
    await expect_error(custom.replace_namespaced_custom_object_scale(
        GROUP, "v1", NS, PLURAL, "sc", {"metadata": {
            "name": "sc", "resourceVersion": made["metadata"]["resourceVersion"]},
            "spec": {"replicas": 1}}), 409, "Conflict")
    # The schema still applies through the scale subresource (maximum: 10).
    status = await expect_error(custom.patch_namespaced_custom_object_scale(
        GROUP, "v1", NS, PLURAL, "sc", {"spec": {"replicas": 11}}, _content_type=MERGE),
        422, "Invalid")
    assert status["details"]["kind"] == KIND or "replicas" in status["message"]


@pytest.mark.parametrize("replicas", [-1])
async def test_negative_scale_is_invalid(apps: client.AppsV1Api, replicas: int) -> None:
    await apps.create_namespaced_deployment(NS, deployment("neg"))
    status = await expect_error(apps.patch_namespaced_deployment_scale(
        "neg", NS, {"spec": {"replicas": replicas}}), 422, "Invalid")
    assert "spec.replicas" in causes_by_field(status)
