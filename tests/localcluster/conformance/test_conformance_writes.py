"""Writes: update, the three patch types, server-side apply, dry-run, delete options and
deletecollection."""

from __future__ import annotations

from typing import Any

import yaml
from conformance_support import (
    APPLY,
    GROUP,
    JSON_PATCH,
    MERGE,
    PLURAL,
    STRATEGIC,
    Raw,
    assert_status,
    causes_by_field,
    expect_error,
    widget,
)
from kubernetes_asyncio import client

from hack.localcluster.server import LocalCluster

Json = dict[str, Any]
NS = "default"
CM_PATH = f"/api/v1/namespaces/{NS}/configmaps"


def deployment(name: str) -> Json:
    return {"metadata": {"name": name}, "spec": {
        "selector": {"matchLabels": {"app": name}},
        "template": {"metadata": {"labels": {"app": name}}, "spec": {
            "containers": [{"name": "main", "image": "app:1",
                            "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
                            "ports": [{"containerPort": 80, "name": "http"}]}],
            "volumes": [{"name": "data", "emptyDir": {}}],
            "imagePullSecrets": [{"name": "reg-a"}]}}}}


# --- update and the patch types ---------------------------------------------------------------


async def test_update_replaces_the_object(core: client.CoreV1Api) -> None:
    await core.create_namespaced_config_map(NS, {"metadata": {"name": "u", "labels": {"a": "1"}},
                                                 "data": {"x": "1", "y": "2"}})
    updated = await core.replace_namespaced_config_map("u", NS, {"metadata": {"name": "u"},
                                                                 "data": {"z": "3"}})
    assert updated.data == {"z": "3"} and updated.metadata.labels is None


async def test_json_merge_patch(core: client.CoreV1Api, raw: Raw) -> None:
    await core.create_namespaced_config_map(NS, {"metadata": {"name": "m"},
                                                 "data": {"x": "1", "y": "2"}})
    resp = await raw.request("PATCH", f"{CM_PATH}/m", content_type=MERGE,
                             body={"data": {"x": None, "z": "3"},
                                   "metadata": {"labels": {"l": "v"}}})
    assert resp.status == 200, resp.text
    assert resp.json["data"] == {"y": "2", "z": "3"}
    assert resp.json["metadata"]["labels"] == {"l": "v"}


async def test_json_patch_with_test_op(core: client.CoreV1Api, raw: Raw) -> None:
    await core.create_namespaced_config_map(NS, {"metadata": {"name": "j"}, "data": {"x": "1"}})
    ok = await core.patch_namespaced_config_map("j", NS, [
        {"op": "test", "path": "/data/x", "value": "1"},
        {"op": "replace", "path": "/data/x", "value": "2"},
        {"op": "add", "path": "/data/y", "value": "3"},
        {"op": "remove", "path": "/data/x"},
    ])
    assert ok.data == {"y": "3"}
    before = (await core.read_namespaced_config_map("j", NS)).metadata.resource_version
    resp = await raw.request("PATCH", f"{CM_PATH}/j", content_type=JSON_PATCH, body=[
        {"op": "test", "path": "/data/y", "value": "wrong"},
        {"op": "replace", "path": "/data/y", "value": "4"}])
    assert_status(resp, 422, "Invalid")
    after = await core.read_namespaced_config_map("j", NS)
    assert after.data == {"y": "3"} and after.metadata.resource_version == before
    # Removing a key that does not exist, and a body that is not a patch.
    resp = await raw.request("PATCH", f"{CM_PATH}/j", content_type=JSON_PATCH,
                             body=[{"op": "remove", "path": "/data/missing"}])
    assert_status(resp, 422, "Invalid")
    resp = await raw.request("PATCH", f"{CM_PATH}/j", content_type=JSON_PATCH,
                             body={"op": "add"})
    assert_status(resp, 400, "BadRequest")


async def test_strategic_merge_patch_merges_lists_by_key(apps: client.AppsV1Api,
                                                         raw: Raw) -> None:
    await apps.create_namespaced_deployment(NS, deployment("smp"))
    patch = {"spec": {"template": {"spec": {
        "containers": [
            {"name": "main", "env": [{"name": "B", "value": "20"}, {"name": "C", "value": "3"}],
             "ports": [{"containerPort": 9090, "name": "metrics"}]},
            {"name": "side", "image": "sidecar:1"}],
        "volumes": [{"name": "cache", "emptyDir": {}}],
        "imagePullSecrets": [{"name": "reg-b"}]}}}}
    resp = await raw.request("PATCH", f"/apis/apps/v1/namespaces/{NS}/deployments/smp",
                             content_type=STRATEGIC, body=patch)
    assert resp.status == 200, resp.text
    pod = resp.json["spec"]["template"]["spec"]
    assert [c["name"] for c in pod["containers"]] == ["main", "side"]
    main = pod["containers"][0]
    assert main["image"] == "app:1"
    assert main["env"] == [{"name": "A", "value": "1"}, {"name": "B", "value": "20"},
                           {"name": "C", "value": "3"}]
    # Items only the server has are merged into the patch's order after those they
    # followed on the server, so a new item lands before the old ones (normalizeElementOrder).
    assert [p["containerPort"] for p in main["ports"]] == [9090, 80]
    assert [v["name"] for v in pod["volumes"]] == ["cache", "data"]
    assert pod["imagePullSecrets"] == [{"name": "reg-b"}, {"name": "reg-a"}]


async def test_strategic_merge_patch_directives(apps: client.AppsV1Api, raw: Raw) -> None:
    await apps.create_namespaced_deployment(NS, deployment("dir"))
    path = f"/apis/apps/v1/namespaces/{NS}/deployments/dir"
    resp = await raw.request("PATCH", path, content_type=STRATEGIC, body={"spec": {"template": {
        "spec": {"containers": [{"name": "main", "env": [{"name": "A", "$patch": "delete"}]}],
                 "volumes": [{"$patch": "replace"}, {"name": "only", "emptyDir": {}}]}}}})
    assert resp.status == 200, resp.text
    pod = resp.json["spec"]["template"]["spec"]
    assert pod["containers"][0]["env"] == [{"name": "B", "value": "2"}]
    assert pod["volumes"] == [{"name": "only", "emptyDir": {}}]
    resp = await raw.request("PATCH", path, content_type=STRATEGIC, body={"spec": {"template": {
        "metadata": {"$patch": "replace", "labels": {"app": "dir", "new": "x"}}}}})
    assert resp.status == 200, resp.text
    assert resp.json["spec"]["template"]["metadata"] == {"labels": {"app": "dir", "new": "x"}}


async def test_strategic_merge_patch_on_custom_resource_is_415(
        custom: client.CustomObjectsApi, raw: Raw, widgets: Json) -> None:
    await custom.create_namespaced_custom_object(GROUP, "v1", NS, PLURAL, widget("w"))
    resp = await raw.request("PATCH", f"/apis/{GROUP}/v1/namespaces/{NS}/{PLURAL}/w",
                             content_type=STRATEGIC, body={"spec": {"color": "blue"}})
    status = assert_status(resp, 415, "UnsupportedMediaType")
    assert status["message"] == (
        "the body of the request was in an unknown format - accepted media types include:"
        " application/json-patch+json, application/merge-patch+json,"
        " application/apply-patch+yaml")


async def test_unknown_patch_type_is_415(core: client.CoreV1Api, raw: Raw) -> None:
    await core.create_namespaced_config_map(NS, {"metadata": {"name": "p"}})
    resp = await raw.request("PATCH", f"{CM_PATH}/p", content_type="text/plain", data="{}")
    assert_status(resp, 415, "UnsupportedMediaType")


# --- server-side apply ------------------------------------------------------------------------


async def apply(raw: Raw, name: str, data: Json, manager: str, force: bool = False,
                **params: str) -> Any:
    doc = yaml.safe_dump({"apiVersion": "v1", "kind": "ConfigMap",
                          "metadata": {"name": name}, "data": data})
    query = {"fieldManager": manager, **params}
    if force:
        query["force"] = "true"
    return await raw.request("PATCH", f"{CM_PATH}/{name}", data=doc, content_type=APPLY,
                             params=query)


async def test_apply_creates_and_tracks_managed_fields(raw: Raw) -> None:
    resp = await apply(raw, "ssa", {"a": "1"}, "alice")
    assert resp.status == 201, resp.text
    managed = resp.json["metadata"]["managedFields"]
    assert len(managed) == 1
    entry = managed[0]
    assert (entry["manager"], entry["operation"], entry["apiVersion"], entry["fieldsType"]) == (
        "alice", "Apply", "v1", "FieldsV1")
    assert entry["fieldsV1"] == {"f:data": {"f:a": {}}}
    resp = await apply(raw, "ssa", {"a": "1", "b": "2"}, "alice")
    assert resp.status == 200
    assert resp.json["data"] == {"a": "1", "b": "2"}


async def test_apply_conflict_and_force(raw: Raw) -> None:
    await apply(raw, "c", {"a": "1"}, "alice")
    resp = await apply(raw, "c", {"a": "2"}, "bob")
    status = assert_status(resp, 409, "Conflict")
    assert status["message"] == 'Apply failed with 1 conflict: conflict with "alice": .data.a'
    assert status["details"]["causes"] == [{"reason": "FieldManagerConflict",
                                            "message": 'conflict with "alice"',
                                            "field": ".data.a"}]
    resp = await apply(raw, "c", {"a": "2"}, "bob", force=True)
    assert resp.status == 200
    assert resp.json["data"] == {"a": "2"}
    managers = {m["manager"]: m for m in resp.json["metadata"]["managedFields"]}
    assert managers["bob"]["fieldsV1"] == {"f:data": {"f:a": {}}}
    assert "alice" not in managers  # alice owned nothing else


async def test_apply_removes_fields_the_manager_stops_applying(raw: Raw) -> None:
    await apply(raw, "rm", {"a": "1", "b": "2"}, "alice")
    resp = await apply(raw, "rm", {"a": "1"}, "alice")
    assert resp.json["data"] == {"a": "1"}


async def test_update_records_an_update_manager(core: client.CoreV1Api, raw: Raw) -> None:
    await apply(raw, "mix", {"a": "1"}, "alice")
    await core.patch_namespaced_config_map("mix", NS, {"data": {"b": "2"}},
                                           field_manager="editor")
    cm = await core.read_namespaced_config_map("mix", NS)
    ops = {(m.manager, m.operation) for m in cm.metadata.managed_fields}
    assert ops == {("alice", "Apply"), ("editor", "Update")}
    # An update to a field another manager applied is not a conflict, but takes it over.
    await core.patch_namespaced_config_map("mix", NS, {"data": {"a": "9"}},
                                           field_manager="editor")
    resp = await apply(raw, "mix", {"a": "1"}, "alice")
    status = assert_status(resp, 409, "Conflict")
    # A conflict with an Update manager names its version (manager identifiers carry no
    # time, so printManager never prints one).
    assert status["message"] == (
        'Apply failed with 1 conflict: conflict with "editor" using v1: .data.a')


async def test_apply_needs_a_field_manager(raw: Raw) -> None:
    doc = yaml.safe_dump({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}})
    resp = await raw.request("PATCH", f"{CM_PATH}/x", data=doc, content_type=APPLY)
    status = assert_status(resp, 422, "Invalid")
    assert "fieldManager" in causes_by_field(status)


async def test_apply_custom_resource(custom: client.CustomObjectsApi, widgets: Json) -> None:
    body = widget("applied", color="green")
    # The typed client maps only 200 to a body; an apply that creates answers 201.
    _, code, _ = await custom.patch_namespaced_custom_object_with_http_info(
        GROUP, "v1", NS, PLURAL, "applied", body, field_manager="ctl", _content_type=APPLY)
    assert code == 201
    made = await custom.get_namespaced_custom_object(GROUP, "v1", NS, PLURAL, "applied")
    assert made["spec"]["color"] == "green"
    assert made["spec"]["replicas"] == 1  # defaulted
    assert made["metadata"]["managedFields"][0]["manager"] == "ctl"
    await expect_error(custom.patch_namespaced_custom_object(
        GROUP, "v1", NS, PLURAL, "applied", widget("applied", color="red"),
        field_manager="other", _content_type=APPLY), 409, "Conflict")


# --- dry run ----------------------------------------------------------------------------------


async def test_dry_run_writes_nothing(core: client.CoreV1Api, cluster: LocalCluster) -> None:
    await core.create_namespaced_config_map(NS, {"metadata": {"name": "real"},
                                                 "data": {"a": "1"}})
    rv = cluster.storage.rv
    made = await core.create_namespaced_config_map(
        NS, {"metadata": {"name": "dry"}, "data": {"a": "1"}}, dry_run="All")
    assert made.metadata.name == "dry" and made.metadata.uid
    assert not made.metadata.resource_version
    await expect_error(core.read_namespaced_config_map("dry", NS), 404, "NotFound")
    patched = await core.patch_namespaced_config_map("real", NS, {"data": {"a": "2"}},
                                                     dry_run="All")
    assert patched.data == {"a": "2"}
    replaced = await core.replace_namespaced_config_map(
        "real", NS, {"metadata": {"name": "real"}, "data": {"b": "1"}}, dry_run="All")
    assert replaced.data == {"b": "1"}
    await core.delete_namespaced_config_map("real", NS, dry_run="All")
    assert (await core.read_namespaced_config_map("real", NS)).data == {"a": "1"}
    await core.delete_collection_namespaced_config_map(NS, dry_run="All")
    assert (await core.read_namespaced_config_map("real", NS)).data == {"a": "1"}
    assert cluster.storage.rv == rv
    # A dry run still validates.
    await expect_error(core.create_namespaced_config_map(
        NS, {"metadata": {"name": "Bad"}}, dry_run="All"), 422, "Invalid")
    await expect_error(core.create_namespaced_config_map(
        NS, {"metadata": {"name": "real"}}, dry_run="All"), 409, "AlreadyExists")


async def test_unknown_dry_run_value_is_422(raw: Raw) -> None:
    resp = await raw.request("POST", CM_PATH, body={"metadata": {"name": "x"}},
                             params={"dryRun": "Yes"})
    status = assert_status(resp, 422, "Invalid")  # ValidateDryRun, as real 1.20 answers
    assert status["message"] == ('CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported'
                                 ' value: []string{"Yes"}: supported values: "All"')


# --- delete -----------------------------------------------------------------------------------


async def test_delete_preconditions(core: client.CoreV1Api) -> None:
    cm = await core.create_namespaced_config_map(NS, {"metadata": {"name": "pre"}})
    status = await expect_error(core.delete_namespaced_config_map(
        "pre", NS, body={"preconditions": {"uid": "0000"}}), 409, "Conflict")
    assert status["message"] == (  # rest.BeforeDelete's words, as real 1.20 answers
        'Operation cannot be fulfilled on ConfigMap "pre": the UID in the precondition (0000)'
        f" does not match the UID in record ({cm.metadata.uid}). The object might have been"
        " deleted and then recreated")
    status = await expect_error(core.delete_namespaced_config_map(
        "pre", NS, body={"preconditions": {"resourceVersion": "1"}}), 409, "Conflict")
    assert "the ResourceVersion in the precondition (1) does not match" in status["message"]
    done = await core.delete_namespaced_config_map("pre", NS, body={"preconditions": {
        "uid": cm.metadata.uid, "resourceVersion": cm.metadata.resource_version}})
    assert done.status == "Success"
    assert done.details.name == "pre" and done.details.uid == cm.metadata.uid


async def test_delete_response_shapes(core: client.CoreV1Api, raw: Raw) -> None:
    await core.create_namespaced_config_map(NS, {"metadata": {"name": "gone"}})
    resp = await raw.request("DELETE", f"{CM_PATH}/gone")
    assert resp.status == 200
    assert resp.json["kind"] == "Status" and resp.json["status"] == "Success"
    assert resp.json["details"]["kind"] == "configmaps"
    # Held by a finalizer: the object itself comes back, with a deletionTimestamp.
    await core.create_namespaced_config_map(NS, {"metadata": {
        "name": "held", "finalizers": ["example.com/hold"]}})
    resp = await raw.request("DELETE", f"{CM_PATH}/held")
    assert resp.status == 200, resp.text
    assert resp.json["kind"] == "ConfigMap" and resp.json["metadata"]["deletionTimestamp"]
    # 202 only when the client asked for cascading deletion the old way.
    await core.create_namespaced_config_map(NS, {"metadata": {
        "name": "held2", "finalizers": ["example.com/hold"]}})
    resp = await raw.request("DELETE", f"{CM_PATH}/held2",
                             body={"orphanDependents": False})
    assert resp.status == 202, resp.text


async def test_invalid_propagation_policy(core: client.CoreV1Api) -> None:
    await core.create_namespaced_config_map(NS, {"metadata": {"name": "pp"}})
    status = await expect_error(core.delete_namespaced_config_map(
        "pp", NS, propagation_policy="Sometimes"), 422, "Invalid")
    assert status["message"].startswith('DeleteOptions.meta.k8s.io "" is invalid: ')
    assert "propagationPolicy" in causes_by_field(status)


async def test_delete_collection_with_selectors(core: client.CoreV1Api, raw: Raw) -> None:
    for name, labels in [("a", {"tier": "web"}), ("b", {"tier": "web"}),
                         ("c", {"tier": "db"}), ("d", {})]:
        await core.create_namespaced_config_map(NS, {"metadata": {"name": name,
                                                                  "labels": labels}})
    resp = await raw.request("DELETE", CM_PATH, params={"labelSelector": "tier=web"})
    assert resp.status == 200, resp.text
    assert resp.json["kind"] == "ConfigMapList"
    assert sorted(i["metadata"]["name"] for i in resp.json["items"]) == ["a", "b"]
    names = [c.metadata.name for c in (await core.list_namespaced_config_map(NS)).items]
    assert sorted(n for n in names if len(n) == 1) == ["c", "d"]
    await core.delete_collection_namespaced_config_map(NS, field_selector="metadata.name=c")
    names = [c.metadata.name for c in (await core.list_namespaced_config_map(NS)).items]
    assert sorted(n for n in names if len(n) == 1) == ["d"]
    await core.delete_collection_namespaced_config_map(NS, label_selector="tier notin (web)")
    names = [c.metadata.name for c in (await core.list_namespaced_config_map(NS)).items]
    assert [n for n in names if len(n) == 1] == []


async def test_delete_collection_of_custom_resources(custom: client.CustomObjectsApi,
                                                     widgets: Json) -> None:
    for name, color in [("r", "red"), ("g", "green")]:
        body = widget(name, color=color)
        body["metadata"]["labels"] = {"color": color}
        await custom.create_namespaced_custom_object(GROUP, "v1", NS, PLURAL, body)
    await custom.delete_collection_namespaced_custom_object(GROUP, "v1", NS, PLURAL,
                                                            label_selector="color=red")
    left = await custom.list_namespaced_custom_object(GROUP, "v1", NS, PLURAL)
    assert [i["metadata"]["name"] for i in left["items"]] == ["g"]
