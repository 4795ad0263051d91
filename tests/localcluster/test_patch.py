"""Unit tests for hack/localcluster/patch.py: JSON patch, merge patch, strategic merge patch."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from hack.localcluster.errors import ApiError
from hack.localcluster.patch import (
    MAX_JSON_PATCH_OPERATIONS,
    PATCH_CONTENT_TYPES,
    json_merge_patch,
    json_patch,
    strategic_merge_patch,
)

UNPROCESSABLE = "the server rejected our request due to an error in our request"


def deployment() -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "web",
            "namespace": "default",
            "labels": {"app": "web", "tier": "front"},
            "annotations": {"a/b": "slash", "c~d": "tilde"},
            "finalizers": ["example.com/a", "example.com/b"],
            "ownerReferences": [
                {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner-1", "uid": "u1"},
                {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner-2", "uid": "u2"},
            ],
        },
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}},
            "template": {
                "metadata": {"creationTimestamp": None, "labels": {"app": "web"}},
                "spec": {
                    "containers": [
                        {
                            "name": "app",
                            "image": "nginx:1",
                            "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
                            "ports": [
                                {"containerPort": 80, "protocol": "TCP"},
                                {"containerPort": 443, "protocol": "TCP"},
                            ],
                            "volumeMounts": [{"name": "data", "mountPath": "/data"}],
                        },
                        {"name": "sidecar", "image": "busybox"},
                    ],
                    "volumes": [
                        {"name": "data", "emptyDir": {}},
                        {"name": "cfg", "configMap": {"name": "cfg"}},
                    ],
                    "imagePullSecrets": [{"name": "reg-1"}],
                    "tolerations": [
                        {"key": "dedicated", "operator": "Equal", "effect": "NoSchedule"},
                        {"key": "gpu", "operator": "Exists"},
                    ],
                },
            },
        },
        "status": {
            "conditions": [
                {"type": "Available", "status": "False", "reason": "MinimumReplicasUnavailable"},
                {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable"},
            ]
        },
    }


def pod_spec(obj: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = obj["spec"]["template"]["spec"]
    return spec


def container(obj: dict[str, Any], name: str) -> dict[str, Any]:
    return next(c for c in pod_spec(obj)["containers"] if c["name"] == name)


def in_pod_spec(spec_patch: Any) -> dict[str, Any]:
    return {"spec": {"template": {"spec": spec_patch}}}


def smp(patch: Any, target: dict[str, Any] | None = None, kind: str = "Deployment") -> Any:
    return strategic_merge_patch(target if target is not None else deployment(), patch, kind)


def api_error(fn: Any, *args: Any) -> ApiError:
    with pytest.raises(ApiError) as info:
        fn(*args)
    return info.value


def assert_unprocessable(err: ApiError) -> None:
    assert (err.code, err.reason, err.message) == (422, "Invalid", UNPROCESSABLE)
    assert err.status() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": UNPROCESSABLE,
        "reason": "Invalid",
        "details": {},  # as the real 1.20 server writes it (tests/realcluster differential)
        "code": 422,
    }


def has_directive_key(value: Any) -> bool:
    if isinstance(value, dict):
        return any(k.startswith("$") or has_directive_key(v) for k, v in value.items())
    if isinstance(value, list):
        return any(has_directive_key(v) for v in value)
    return False


# --- content types ---------------------------------------------------------------------------


def test_patch_content_types() -> None:
    assert PATCH_CONTENT_TYPES == {
        "application/json-patch+json": "json",
        "application/merge-patch+json": "merge",
        "application/strategic-merge-patch+json": "strategic",
        "application/apply-patch+yaml": "apply",
    }


# --- JSON merge patch ------------------------------------------------------------------------


def test_merge_patch_merges_maps_and_null_deletes() -> None:
    target = deployment()
    before = copy.deepcopy(target)
    patch = {"metadata": {"labels": {"tier": None, "new": "x"}}, "spec": {"replicas": 5}}
    out = json_merge_patch(target, patch)
    assert out["metadata"]["labels"] == {"app": "web", "new": "x"}
    assert out["spec"]["replicas"] == 5
    assert out["spec"]["selector"] == {"matchLabels": {"app": "web"}}
    assert target == before
    assert patch == {"metadata": {"labels": {"tier": None, "new": "x"}}, "spec": {"replicas": 5}}


def test_merge_patch_replaces_lists_whole() -> None:
    out = json_merge_patch(deployment(), {"metadata": {"finalizers": ["only"]}})
    assert out["metadata"]["finalizers"] == ["only"]
    out = json_merge_patch(
        deployment(), {"spec": {"template": {"spec": {"containers": [{"name": "x"}]}}}}
    )
    assert pod_spec(out)["containers"] == [{"name": "x"}]


def test_merge_patch_non_object_value_replaces() -> None:
    out = json_merge_patch(deployment(), {"spec": {"strategy": "Recreate"}})
    assert out["spec"]["strategy"] == "Recreate"


def test_merge_patch_prunes_nulls_from_new_values() -> None:
    out = json_merge_patch(
        deployment(), {"spec": {"paused": {"a": None, "b": {"c": None, "d": 1}, "e": [1, None]}}}
    )
    assert out["spec"]["paused"] == {"b": {"d": 1}, "e": [1]}


def test_merge_patch_prunes_nulls_when_replacing_a_scalar() -> None:
    out = json_merge_patch(deployment(), {"spec": {"replicas": {"x": None, "y": 2}}})
    assert out["spec"]["replicas"] == {"y": 2}


def test_merge_patch_keeps_nulls_of_a_list_replacing_an_object() -> None:
    # evanphx/json-patch returns the patch value untouched when the target value is an object.
    out = json_merge_patch(deployment(), {"spec": {"selector": [1, None]}})
    assert out["spec"]["selector"] == [1, None]


def test_merge_patch_null_target_value_is_treated_as_absent() -> None:
    out = json_merge_patch(
        deployment(),
        {"spec": {"template": {"metadata": {"creationTimestamp": {"x": None, "y": 1}}}}},
    )
    assert out["spec"]["template"]["metadata"]["creationTimestamp"] == {"y": 1}


def test_merge_patch_deleting_missing_key_is_a_no_op() -> None:
    assert json_merge_patch({"a": 1}, {"b": None}) == {"a": 1}


def test_merge_patch_empty_patch_returns_equal_copy() -> None:
    target = deployment()
    out = json_merge_patch(target, {})
    assert out == target
    assert out is not target


def test_merge_patch_null_document_is_bad_request() -> None:
    err = api_error(json_merge_patch, deployment(), None)
    assert (err.code, err.reason, err.message) == (400, "BadRequest", "Invalid JSON Patch")


@pytest.mark.parametrize(
    ("patch", "kind"), [([1], "array"), ("x", "string"), (3, "number"), (True, "bool")]
)
def test_merge_patch_non_object_document_is_bad_request(patch: Any, kind: str) -> None:
    err = api_error(json_merge_patch, deployment(), patch)
    assert (err.code, err.reason) == (400, "BadRequest")
    assert err.message == (
        f"error decoding patch: json: cannot unmarshal {kind} into Go value of type"
        " map[string]interface {}"
    )


# --- JSON patch: operations ------------------------------------------------------------------


def test_json_patch_add_object_member() -> None:
    out = json_patch(deployment(), [{"op": "add", "path": "/metadata/labels/new", "value": "v"}])
    assert out["metadata"]["labels"]["new"] == "v"


def test_json_patch_add_replaces_existing_member() -> None:
    out = json_patch(deployment(), [{"op": "add", "path": "/spec/replicas", "value": 7}])
    assert out["spec"]["replicas"] == 7


def test_json_patch_add_without_value_sets_null() -> None:
    out = json_patch(deployment(), [{"op": "add", "path": "/spec/paused"}])
    assert out["spec"]["paused"] is None


def test_json_patch_add_array_insert_append_and_end() -> None:
    ops = [
        {"op": "add", "path": "/metadata/finalizers/0", "value": "first"},
        {"op": "add", "path": "/metadata/finalizers/-", "value": "last"},
        {"op": "add", "path": "/metadata/finalizers/4", "value": "end"},
    ]
    out = json_patch(deployment(), ops)
    assert out["metadata"]["finalizers"] == [
        "first", "example.com/a", "example.com/b", "last", "end"
    ]


def test_json_patch_negative_index_counts_from_the_end() -> None:
    out = json_patch(deployment(), [{"op": "remove", "path": "/metadata/finalizers/-1"}])
    assert out["metadata"]["finalizers"] == ["example.com/a"]


@pytest.mark.parametrize("index", ["3", "-4", "x", "1.0", " 1"])
def test_json_patch_add_index_out_of_bounds_is_unprocessable(index: str) -> None:
    op = {"op": "add", "path": f"/metadata/finalizers/{index}", "value": 1}
    assert_unprocessable(api_error(json_patch, deployment(), [op]))


def test_json_patch_remove_member_and_element() -> None:
    ops = [
        {"op": "remove", "path": "/metadata/labels/tier"},
        {"op": "remove", "path": "/metadata/finalizers/0"},
    ]
    out = json_patch(deployment(), ops)
    assert out["metadata"]["labels"] == {"app": "web"}
    assert out["metadata"]["finalizers"] == ["example.com/b"]


@pytest.mark.parametrize(
    "path",
    ["/metadata/labels/missing", "/metadata/finalizers/2", "/metadata/finalizers/-", "/nope/x"],
)
def test_json_patch_remove_missing_is_unprocessable(path: str) -> None:
    assert_unprocessable(api_error(json_patch, deployment(), [{"op": "remove", "path": path}]))


def test_json_patch_replace_member_and_element() -> None:
    ops = [
        {"op": "replace", "path": "/spec/replicas", "value": 3},
        {"op": "replace", "path": "/metadata/finalizers/1", "value": "z"},
    ]
    out = json_patch(deployment(), ops)
    assert out["spec"]["replicas"] == 3
    assert out["metadata"]["finalizers"] == ["example.com/a", "z"]


def test_json_patch_replace_missing_member_adds_it() -> None:
    # evanphx/json-patch v4 (what kube-apiserver uses) does not check the key exists.
    out = json_patch(deployment(), [{"op": "replace", "path": "/spec/paused", "value": True}])
    assert out["spec"]["paused"] is True


def test_json_patch_replace_index_out_of_range_is_unprocessable() -> None:
    err = api_error(
        json_patch, deployment(), [{"op": "replace", "path": "/metadata/finalizers/2", "value": 1}]
    )
    assert_unprocessable(err)


def test_json_patch_replace_whole_document() -> None:
    out = json_patch(deployment(), [{"op": "replace", "path": "", "value": {"kind": "X"}}])
    assert out == {"kind": "X"}


def test_json_patch_replace_whole_document_with_scalar_is_unprocessable() -> None:
    err = api_error(json_patch, deployment(), [{"op": "replace", "path": "", "value": 1}])
    assert_unprocessable(err)


def test_json_patch_result_that_is_not_an_object_is_invalid() -> None:
    err = api_error(json_patch, deployment(), [{"op": "replace", "path": "", "value": [1]}])
    assert (err.code, err.reason) == (422, "Invalid")
    assert err.message.startswith(' "" is invalid: patch: Invalid value: "[1]": ')
    assert err.details["causes"][0]["field"] == "patch"
    assert err.details["causes"][0]["reason"] == "FieldValueInvalid"


def test_json_patch_move() -> None:
    ops = [{"op": "move", "from": "/metadata/labels/tier", "path": "/metadata/annotations/tier"}]
    out = json_patch(deployment(), ops)
    assert "tier" not in out["metadata"]["labels"]
    assert out["metadata"]["annotations"]["tier"] == "front"


def test_json_patch_move_within_array() -> None:
    ops = [{"op": "move", "from": "/metadata/finalizers/0", "path": "/metadata/finalizers/-"}]
    out = json_patch(deployment(), ops)
    assert out["metadata"]["finalizers"] == ["example.com/b", "example.com/a"]


def test_json_patch_move_from_missing_is_unprocessable() -> None:
    ops = [{"op": "move", "from": "/metadata/labels/nope", "path": "/metadata/labels/x"}]
    assert_unprocessable(api_error(json_patch, deployment(), ops))


def test_json_patch_copy_is_deep() -> None:
    ops = [
        {"op": "copy", "from": "/metadata/labels", "path": "/spec/template/metadata/labels"},
        {"op": "add", "path": "/metadata/labels/extra", "value": "1"},
    ]
    out = json_patch(deployment(), ops)
    assert out["spec"]["template"]["metadata"]["labels"] == {"app": "web", "tier": "front"}
    assert out["metadata"]["labels"]["extra"] == "1"


def test_json_patch_copy_from_missing_member_copies_null() -> None:
    ops = [{"op": "copy", "from": "/metadata/labels/nope", "path": "/metadata/labels/x"}]
    out = json_patch(deployment(), ops)
    assert out["metadata"]["labels"]["x"] is None


def test_json_patch_test_passes_and_fails() -> None:
    ok = [
        {"op": "test", "path": "/spec/replicas", "value": 2},
        {"op": "test", "path": "/spec/selector", "value": {"matchLabels": {"app": "web"}}},
        {"op": "test", "path": "/metadata/finalizers", "value": ["example.com/a", "example.com/b"]},
        {"op": "replace", "path": "/spec/replicas", "value": 3},
    ]
    assert json_patch(deployment(), ok)["spec"]["replicas"] == 3
    for op in (
        {"op": "test", "path": "/spec/replicas", "value": 3},
        {"op": "test", "path": "/spec/replicas", "value": "2"},
        {"op": "test", "path": "/spec/replicas", "value": 2.5},
        {"op": "test", "path": "/spec/replicas"},
        {"op": "test", "path": "/spec/replicas", "value": None},
        {"op": "test", "path": "/metadata/finalizers", "value": ["example.com/b", "example.com/a"]},
    ):
        assert_unprocessable(api_error(json_patch, deployment(), [op]))


def test_json_patch_test_does_not_confuse_bool_and_number() -> None:
    target = {"a": 1}
    assert_unprocessable(
        api_error(json_patch, target, [{"op": "test", "path": "/a", "value": True}])
    )


def test_json_patch_test_missing_member_matches_null() -> None:
    out = json_patch(deployment(), [{"op": "test", "path": "/spec/paused", "value": None}])
    assert out == deployment()
    assert_unprocessable(
        api_error(json_patch, deployment(), [{"op": "test", "path": "/spec/paused", "value": 1}])
    )


def test_json_patch_pointer_escapes() -> None:
    ops = [
        {"op": "test", "path": "/metadata/annotations/a~1b", "value": "slash"},
        {"op": "replace", "path": "/metadata/annotations/c~0d", "value": "t2"},
        {"op": "add", "path": "/metadata/annotations/x~01", "value": "literal"},
    ]
    out = json_patch(deployment(), ops)
    assert out["metadata"]["annotations"] == {"a/b": "slash", "c~d": "t2", "x~1": "literal"}


def test_json_patch_failure_is_atomic_and_inputs_untouched() -> None:
    target = deployment()
    before = copy.deepcopy(target)
    ops = [
        {"op": "replace", "path": "/spec/replicas", "value": 9},
        {"op": "test", "path": "/spec/replicas", "value": 1},
    ]
    assert_unprocessable(api_error(json_patch, target, ops))
    assert target == before
    value = {"nested": ["x"]}
    out = json_patch(target, [{"op": "add", "path": "/spec/extra", "value": value}])
    out["spec"]["extra"]["nested"].append("y")
    assert value == {"nested": ["x"]}
    assert target == before


def test_json_patch_path_through_scalar_is_unprocessable() -> None:
    err = api_error(
        json_patch, deployment(), [{"op": "add", "path": "/spec/replicas/x", "value": 1}]
    )
    assert_unprocessable(err)


def test_json_patch_add_at_root_path_is_unprocessable() -> None:
    assert_unprocessable(
        api_error(json_patch, deployment(), [{"op": "add", "path": "", "value": {}}])
    )


@pytest.mark.parametrize(
    "op",
    [
        {"op": "frobnicate", "path": "/a"},
        {"path": "/a", "value": 1},
        {"op": None, "path": "/a"},
        {"op": "add", "value": 1},
        {"op": "move", "path": "/metadata/labels/x"},
        None,
    ],
)
def test_json_patch_unusable_operation_is_unprocessable(op: Any) -> None:
    assert_unprocessable(api_error(json_patch, deployment(), [op]))


def test_json_patch_null_document_is_a_no_op() -> None:
    assert json_patch(deployment(), None) == deployment()


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        (
            {"op": "add"},
            "json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp",
        ),
        ("x", "json: cannot unmarshal string into Go value of type []handlers.jsonPatchOp"),
        (["x"], "json: cannot unmarshal string into Go value of type handlers.jsonPatchOp"),
        ([[1]], "json: cannot unmarshal array into Go value of type handlers.jsonPatchOp"),
        (
            [{"op": 1, "path": "/a"}],
            "json: cannot unmarshal number into Go struct field jsonPatchOp.op of type string",
        ),
        (
            [{"op": "add", "path": True}],
            "json: cannot unmarshal bool into Go struct field jsonPatchOp.path of type string",
        ),
        (
            [{"op": "move", "from": {}, "path": "/a"}],
            "json: cannot unmarshal object into Go struct field jsonPatchOp.from of type string",
        ),
    ],
)
def test_json_patch_malformed_document_is_bad_request(patch: Any, message: str) -> None:
    err = api_error(json_patch, deployment(), patch)
    assert (err.code, err.reason, err.message) == (
        400,
        "BadRequest",
        "error decoding patch: " + message,
    )


def test_json_patch_too_many_operations() -> None:
    ops = [{"op": "test", "path": "/kind", "value": "Deployment"}] * (MAX_JSON_PATCH_OPERATIONS + 1)
    err = api_error(json_patch, deployment(), ops)
    assert (err.code, err.reason) == (413, "RequestEntityTooLarge")
    assert err.message == (
        "Request entity too large: The allowed maximum operations in a JSON patch is 10000,"
        " got 10001"
    )


# --- strategic merge patch: maps -------------------------------------------------------------


def test_smp_merges_maps_and_null_deletes() -> None:
    target = deployment()
    before = copy.deepcopy(target)
    patch = {"metadata": {"labels": {"tier": None, "x": "y"}}, "spec": {"replicas": 4}}
    patch_before = copy.deepcopy(patch)
    out = smp(patch, target)
    assert out["metadata"]["labels"] == {"app": "web", "x": "y"}
    assert out["spec"]["replicas"] == 4
    assert out["spec"]["template"]["metadata"]["creationTimestamp"] is None
    assert target == before
    assert patch == patch_before


def test_smp_null_for_missing_key_is_dropped() -> None:
    out = smp({"spec": {"paused": None, "minReadySeconds": {"a": None, "b": 1}}})
    assert "paused" not in out["spec"]
    assert out["spec"]["minReadySeconds"] == {"b": 1}


def test_smp_value_of_other_type_replaces() -> None:
    out = smp({"spec": {"strategy": "Recreate"}})
    assert out["spec"]["strategy"] == "Recreate"


def test_smp_null_and_non_object_documents() -> None:
    assert smp(None) == deployment()
    err = api_error(strategic_merge_patch, deployment(), [1], "Deployment")
    assert (err.code, err.reason, err.message) == (
        400,
        "BadRequest",
        "json: cannot unmarshal array into Go value of type map[string]interface {}",
    )


# --- strategic merge patch: lists merged by key ----------------------------------------------


def test_smp_container_env_merged_by_name() -> None:
    env = [{"name": "B", "value": "3"}, {"name": "C", "value": "4"}]
    out = smp(in_pod_spec({"containers": [{"name": "app", "env": env}]}))
    app = container(out, "app")
    assert app["env"] == [
        {"name": "A", "value": "1"},
        {"name": "B", "value": "3"},
        {"name": "C", "value": "4"},
    ]
    assert app["image"] == "nginx:1"
    assert [c["name"] for c in pod_spec(out)["containers"]] == ["app", "sidecar"]


def test_smp_new_list_element_goes_first() -> None:
    # As in the "kubectl patch" task page: the added container precedes the existing one.
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "redis", "image": "redis"}]}}}}
    out = smp(patch)
    assert [c["name"] for c in pod_spec(out)["containers"]] == ["redis", "app", "sidecar"]


def test_smp_new_element_follows_patch_order_among_live_ones() -> None:
    patch = {
        "spec": {
            "template": {
                "spec": {"containers": [{"name": "app", "image": "nginx:2"}, {"name": "new"}]}
            }
        }
    }
    out = smp(patch)
    assert [c["name"] for c in pod_spec(out)["containers"]] == ["app", "new", "sidecar"]
    assert container(out, "app")["image"] == "nginx:2"


def test_smp_ports_merged_by_container_port() -> None:
    patch = {
        "spec": {
            "template": {
                "spec": {
                    "containers": [
                        {
                            "name": "app",
                            "ports": [
                                {"containerPort": 443, "name": "https"},
                                {"containerPort": 8080},
                            ],
                        }
                    ]
                }
            }
        }
    }
    ports = container(smp(patch), "app")["ports"]
    assert ports == [
        {"containerPort": 80, "protocol": "TCP"},
        {"containerPort": 443, "protocol": "TCP", "name": "https"},
        {"containerPort": 8080},
    ]


def test_smp_merge_key_compares_with_go_types() -> None:
    # 80.0 decodes as float64 and does not match the live int64 80: a second port is added.
    patch = in_pod_spec({"containers": [{"name": "app", "ports": [{"containerPort": 80.0}]}]})
    ports = container(smp(patch), "app")["ports"]
    assert len(ports) == 3


def test_smp_volumes_merged_by_name() -> None:
    volumes = [{"name": "cfg", "configMap": {"name": "cfg2"}}, {"name": "new", "emptyDir": {}}]
    out = smp(in_pod_spec({"volumes": volumes}))
    assert pod_spec(out)["volumes"] == [
        {"name": "data", "emptyDir": {}},
        {"name": "cfg", "configMap": {"name": "cfg2"}},
        {"name": "new", "emptyDir": {}},
    ]


def test_smp_image_pull_secrets_merged_by_name() -> None:
    out = smp(in_pod_spec({"imagePullSecrets": [{"name": "reg-2"}, {"name": "reg-1"}]}))
    assert pod_spec(out)["imagePullSecrets"] == [{"name": "reg-2"}, {"name": "reg-1"}]


def test_smp_owner_references_merged_by_uid() -> None:
    patch = {
        "metadata": {
            "ownerReferences": [
                {"uid": "u2", "controller": True},
                {"apiVersion": "v1", "kind": "Secret", "name": "owner-3", "uid": "u3"},
            ]
        }
    }
    refs = smp(patch)["metadata"]["ownerReferences"]
    assert [r["uid"] for r in refs] == ["u1", "u2", "u3"]
    assert refs[1] == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": "owner-2",
        "uid": "u2",
        "controller": True,
    }


def test_smp_status_conditions_merged_by_type() -> None:
    patch = {
        "status": {
            "conditions": [
                {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable"},
                {"type": "ReplicaFailure", "status": "False"},
            ]
        }
    }
    conditions = smp(patch)["status"]["conditions"]
    assert [c["type"] for c in conditions] == ["Available", "ReplicaFailure", "Progressing"]
    assert conditions[0]["status"] == "True"
    assert conditions[2]["reason"] == "NewReplicaSetAvailable"


def test_smp_pod_lists_use_pod_paths() -> None:
    pod = {
        "kind": "Pod",
        "spec": {"containers": [{"name": "a", "env": [{"name": "X", "value": "1"}]}]},
        "status": {"conditions": [{"type": "Ready", "status": "False"}]},
    }
    patch = {
        "spec": {"containers": [{"name": "a", "env": [{"name": "Y", "value": "2"}]}]},
        "status": {"conditions": [{"type": "Ready", "status": "True"}]},
    }
    out = smp(patch, pod, "Pod")
    # Y has no live neighbour to be ordered against, so it goes first.
    assert out["spec"]["containers"][0]["env"] == [
        {"name": "Y", "value": "2"},
        {"name": "X", "value": "1"},
    ]
    assert out["status"]["conditions"] == [{"type": "Ready", "status": "True"}]


def test_smp_merge_list_missing_from_target_is_taken_from_patch() -> None:
    target = deployment()
    del pod_spec(target)["imagePullSecrets"]
    patch = {
        "spec": {
            "template": {
                "spec": {
                    "imagePullSecrets": [
                        {"name": "keep", "extra": None},
                        {"name": "gone", "$patch": "delete"},
                    ]
                }
            }
        }
    }
    assert pod_spec(smp(patch, target))["imagePullSecrets"] == [{"name": "keep"}]


def test_smp_element_without_merge_key_is_an_error() -> None:
    patch = {"spec": {"template": {"spec": {"containers": [{"image": "x"}]}}}}
    err = api_error(smp, patch)
    assert (err.code, err.reason, err.message) == (
        500,
        "",
        "map: map[image:x] does not contain declared merge key: name",
    )


# --- strategic merge patch: scalar sets and atomic lists -------------------------------------


def test_smp_finalizers_merged_as_set() -> None:
    out = smp({"metadata": {"finalizers": ["example.com/b", "example.com/c"]}})
    assert out["metadata"]["finalizers"] == ["example.com/a", "example.com/b", "example.com/c"]
    out = smp({"metadata": {"finalizers": ["example.com/c"]}})
    assert out["metadata"]["finalizers"] == ["example.com/c", "example.com/a", "example.com/b"]


def test_smp_delete_from_primitive_list() -> None:
    out = smp({"metadata": {"$deleteFromPrimitiveList/finalizers": ["example.com/a", "nope"]}})
    assert out["metadata"]["finalizers"] == ["example.com/b"]
    assert not has_directive_key(out)


def test_smp_delete_from_primitive_list_on_missing_list_is_ignored() -> None:
    target = deployment()
    del target["metadata"]["finalizers"]
    out = smp({"metadata": {"$deleteFromPrimitiveList/finalizers": ["x"]}}, target)
    assert "finalizers" not in out["metadata"]


def test_smp_delete_and_add_in_one_patch() -> None:
    patch = {
        "metadata": {
            "finalizers": ["example.com/c"],
            "$deleteFromPrimitiveList/finalizers": ["example.com/a"],
        }
    }
    assert smp(patch)["metadata"]["finalizers"] == ["example.com/c", "example.com/b"]


def test_smp_bad_primitive_list_directive_is_bad_request() -> None:
    err = api_error(smp, {"metadata": {"$deleteFromPrimitiveListfinalizers": ["x"]}})
    assert (err.code, err.reason, err.message) == (
        400,
        "BadRequest",
        "invalid patch format of primitive list",
    )


def test_smp_tolerations_are_atomic() -> None:
    patch = in_pod_spec({"tolerations": [{"key": "new", "operator": "Exists"}]})
    assert pod_spec(smp(patch))["tolerations"] == [{"key": "new", "operator": "Exists"}]


def test_smp_atomic_list_drops_directive_keys_and_nulls() -> None:
    patch = {
        "spec": {
            "template": {
                "spec": {"tolerations": [{"key": "new", "value": None, "$patch": "x"}]}
            }
        }
    }
    assert pod_spec(smp(patch))["tolerations"] == [{"key": "new"}]


def test_smp_other_kinds_lists_are_atomic() -> None:
    target = {"kind": "ConfigMap", "metadata": {"name": "c"}, "items": [1, 2]}
    assert smp({"items": [3]}, target, "ConfigMap")["items"] == [3]


# --- strategic merge patch: $setElementOrder -------------------------------------------------


def test_smp_set_element_order_reorders_merge_list() -> None:
    patch = {
        "spec": {
            "template": {
                "spec": {
                    "$setElementOrder/containers": [{"name": "sidecar"}, {"name": "app"}],
                    "containers": [{"name": "app", "image": "nginx:2"}],
                }
            }
        }
    }
    out = smp(patch)
    assert [c["name"] for c in pod_spec(out)["containers"]] == ["sidecar", "app"]
    assert container(out, "app")["image"] == "nginx:2"
    assert not has_directive_key(out)


def test_smp_set_element_order_without_list_in_patch() -> None:
    patch = {"metadata": {"$setElementOrder/finalizers": ["example.com/b", "example.com/a"]}}
    assert smp(patch)["metadata"]["finalizers"] == ["example.com/b", "example.com/a"]


def test_smp_set_element_order_keeps_server_only_items() -> None:
    patch = {
        "spec": {
            "template": {
                "spec": {
                    "$setElementOrder/containers": [{"name": "new"}, {"name": "app"}],
                    "containers": [{"name": "new", "image": "n"}],
                }
            }
        }
    }
    names = [c["name"] for c in pod_spec(smp(patch))["containers"]]
    assert names == ["new", "app", "sidecar"]


def test_smp_set_element_order_mismatch_is_an_error() -> None:
    patch = {
        "metadata": {
            "$setElementOrder/finalizers": ["example.com/a"],
            "finalizers": ["example.com/z"],
        }
    }
    err = api_error(smp, patch)
    assert (err.code, err.reason) == (500, "")
    assert err.message == (
        "The order in patch list:\n[example.com/z]\n doesn't match $setElementOrder list:\n"
        "[example.com/a]\n"
    )


def test_smp_set_element_order_must_be_a_list() -> None:
    err = api_error(smp, {"metadata": {"$setElementOrder/finalizers": "x"}})
    assert (err.code, err.reason, err.message) == (
        500,
        "",
        "expected a []interface {}, but received a string",
    )


def test_smp_set_element_order_bad_key_is_bad_request() -> None:
    err = api_error(smp, {"metadata": {"$setElementOrderfinalizers": []}})
    assert (err.code, err.reason, err.message) == (
        400,
        "BadRequest",
        "invalid patch format of setElementOrder list",
    )


# --- strategic merge patch: $patch -----------------------------------------------------------


def test_smp_patch_replace_on_map() -> None:
    patch = {"spec": {"strategy": {"$patch": "replace", "type": "Recreate", "x": None}}}
    out = smp(patch)
    assert out["spec"]["strategy"] == {"type": "Recreate"}


def test_smp_patch_replace_on_document() -> None:
    out = smp({"$patch": "replace", "kind": "Deployment", "metadata": {"name": "n"}})
    assert out == {"kind": "Deployment", "metadata": {"name": "n"}}


def test_smp_patch_delete_on_map_empties_it() -> None:
    out = smp({"spec": {"strategy": {"$patch": "delete"}}})
    assert out["spec"]["strategy"] == {}


def test_smp_patch_delete_on_missing_map_adds_nothing() -> None:
    out = smp({"spec": {"template": {"spec": {"securityContext": {"$patch": "delete"}}}}})
    assert "securityContext" not in pod_spec(out)


def test_smp_patch_replace_element_replaces_list() -> None:
    patch = {
        "spec": {
            "template": {
                "spec": {"containers": [{"name": "only", "image": "x"}, {"$patch": "replace"}]}
            }
        }
    }
    out = smp(patch)
    assert pod_spec(out)["containers"] == [{"name": "only", "image": "x"}]


def test_smp_patch_delete_element_by_merge_key() -> None:
    patch = {
        "spec": {
            "template": {
                "spec": {
                    "containers": [
                        {"name": "sidecar", "$patch": "delete"},
                        {"name": "app", "env": [{"name": "A", "$patch": "delete"}]},
                    ]
                }
            }
        },
        "metadata": {"ownerReferences": [{"uid": "u1", "$patch": "delete"}]},
    }
    out = smp(patch)
    assert [c["name"] for c in pod_spec(out)["containers"]] == ["app"]
    assert container(out, "app")["env"] == [{"name": "B", "value": "2"}]
    assert [r["uid"] for r in out["metadata"]["ownerReferences"]] == ["u2"]


def test_smp_patch_delete_element_without_merge_key_is_an_error() -> None:
    patch = {"spec": {"template": {"spec": {"containers": [{"$patch": "delete"}]}}}}
    err = api_error(smp, patch)
    assert (err.code, err.reason, err.message) == (
        500,
        "",
        "map: map[$patch:delete] does not contain declared merge key: name",
    )


def test_smp_patch_merge_on_map_is_unknown() -> None:
    err = api_error(smp, {"spec": {"strategy": {"$patch": "merge", "type": "Recreate"}}})
    assert (err.code, err.reason, err.message) == (
        500,
        "",
        "unknown patch type: merge in map: map[$patch:merge type:Recreate]",
    )


def test_smp_patch_merge_in_list_is_rejected() -> None:
    patch = {"spec": {"template": {"spec": {"containers": [{"$patch": "merge"}]}}}}
    err = api_error(smp, patch)
    assert (err.code, err.reason, err.message) == (
        500,
        "",
        "merging lists cannot yet be specified in the patch",
    )


@pytest.mark.parametrize(
    ("directive", "rendered"), [("frobnicate", "frobnicate"), (1, "%!s(int64=1)")]
)
def test_smp_unknown_patch_directive(directive: Any, rendered: str) -> None:
    err = api_error(smp, {"spec": {"strategy": {"$patch": directive}}})
    assert (err.code, err.reason) == (500, "")
    assert err.message == f"unknown patch type: {rendered} in map: map[$patch:{directive}]"
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "app", "$patch": directive}]}}}}
    err = api_error(smp, patch)
    assert err.message == f"unknown patch type: {rendered} in map: map[$patch:{directive} name:app]"


# --- strategic merge patch: $retainKeys ------------------------------------------------------


def test_smp_retain_keys_clears_other_fields() -> None:
    patch = {
        "spec": {
            "strategy": {"$retainKeys": ["type"], "type": "Recreate"},
            "template": {
                "spec": {
                    "volumes": [
                        {
                            "name": "cfg",
                            "$retainKeys": ["name", "secret"],
                            "secret": {"secretName": "s"},
                        }
                    ]
                }
            },
        }
    }
    out = smp(patch)
    assert out["spec"]["strategy"] == {"type": "Recreate"}
    assert pod_spec(out)["volumes"][1] == {"name": "cfg", "secret": {"secretName": "s"}}
    assert not has_directive_key(out)


def test_smp_retain_keys_must_cover_the_patch() -> None:
    err = api_error(smp, {"spec": {"strategy": {"$retainKeys": ["type"], "rollingUpdate": {}}}})
    assert (err.code, err.reason, err.message) == (
        400,
        "BadRequest",
        "invalid patch format of retainKeys",
    )


def test_smp_retain_keys_must_be_a_list() -> None:
    err = api_error(smp, {"spec": {"strategy": {"$retainKeys": "type"}}})
    assert (err.code, err.message) == (400, "invalid patch format of retainKeys")


# --- strategic merge patch: directives never leak, malformed lists ---------------------------


def test_smp_directives_never_reach_the_result() -> None:
    patch = {
        "spec": {
            "template": {
                "spec": {
                    "containers": [
                        {
                            "name": "brand-new",
                            "$retainKeys": ["name", "image"],
                            "image": "x",
                            "$setElementOrder/env": [{"name": "E"}],
                            "env": [{"name": "E", "value": "1"}],
                            "resources": {"$patch": "delete"},
                        }
                    ],
                    "securityContext": {"runAsUser": 1, "$setElementOrder/supplementalGroups": [1]},
                }
            }
        }
    }
    out = smp(patch)
    assert not has_directive_key(out)
    assert container(out, "brand-new") == {
        "name": "brand-new",
        "image": "x",
        "env": [{"name": "E", "value": "1"}],
        "resources": {},
    }


def test_smp_list_of_lists_is_unprocessable() -> None:
    target = deployment()
    target["metadata"]["finalizers"] = []
    err = api_error(smp, {"metadata": {"finalizers": [["x"]]}}, target)
    assert_unprocessable(err)


def test_smp_mixed_element_types_is_an_error() -> None:
    err = api_error(smp, {"metadata": {"finalizers": [1]}})
    assert (err.code, err.reason) == (500, "")
    assert err.message == (
        "list element types are not identical: [[example.com/a example.com/b] [1]]"
    )


def test_smp_service_account_secrets_merged_by_name() -> None:
    target = {
        "kind": "ServiceAccount",
        "secrets": [{"name": "a"}],
        "imagePullSecrets": [{"name": "p"}],
    }
    patch = {"secrets": [{"name": "a", "namespace": "n"}], "imagePullSecrets": [{"name": "q"}]}
    out = smp(patch, target, "ServiceAccount")
    assert out["secrets"] == [{"name": "a", "namespace": "n"}]
    assert out["imagePullSecrets"] == [{"name": "q"}]
