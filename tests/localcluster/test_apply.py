"""Server-side apply and managedFields tracking against what kube-apiserver records.

The kubectl-create fixture is a Deployment as a v1.26 apiserver stored it, with the managedFields
entry it wrote; the other scenarios follow structured-merge-diff's documented rules.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from hack.localcluster.apply import (
    check_name,
    default_manager,
    server_side_apply,
    track_update,
    validate_field_manager,
)
from hack.localcluster.errors import ApiError
from hack.localcluster.managed_fields import fields_to_set, set_to_fields
from hack.localcluster.registry import BUILTIN_TYPES, ResourceType

Json = dict[str, Any]

T0 = "2024-09-30T20:19:33Z"
T1 = "2024-09-30T20:24:30Z"
T2 = "2024-10-01T08:00:00Z"


def _builtin(kind: str) -> ResourceType:
    return next(rt for rt in BUILTIN_TYPES if rt.kind == kind)


DEPLOYMENT = _builtin("Deployment")
SERVICE = _builtin("Service")
CONFIGMAP = _builtin("ConfigMap")


def _entry(obj: Json, manager: str, operation: str | None = None) -> Json:
    found: list[Json] = [
        e
        for e in obj["metadata"].get("managedFields", [])
        if e["manager"] == manager and (operation is None or e["operation"] == operation)
    ]
    assert len(found) == 1, obj["metadata"].get("managedFields")
    return found[0]


def _managers(obj: Json) -> list[tuple[str, str]]:
    return [(e["manager"], e["operation"]) for e in obj["metadata"].get("managedFields", [])]


def _deploy(**spec: Any) -> Json:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": spec,
    }


def _web_config(replicas: int = 3, image: str = "nginx:1.27", **labels: str) -> Json:
    config = _deploy(
        replicas=replicas,
        selector={"matchLabels": {"app": "web"}},
        template={
            "metadata": {"labels": {"app": "web"}},
            "spec": {
                "containers": [
                    {
                        "name": "app",
                        "image": image,
                        "ports": [{"containerPort": 80}],
                        "env": [{"name": "MODE", "value": "prod"}],
                    }
                ]
            },
        },
    )
    config["metadata"]["labels"] = {"app": "web", **labels}
    return config


def _apply(
    live: Json | None, config: Json, manager: str, *, force: bool = False, **kw: Any
) -> Json:
    kw.setdefault("rt", DEPLOYMENT)
    kw.setdefault("now", T0)
    return server_side_apply(live, config, manager=manager, force=force, **kw)


def _container(obj: Json, name: str) -> Json:
    containers = obj["spec"]["template"]["spec"]["containers"]
    return next(c for c in containers if c["name"] == name)


# --- Fidelity with a real apiserver ----------------------------------------------------------

KUBECTL_CREATED = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"labels": {"app": "nginx-0930"}, "name": "nginx-0930", "namespace": "default"},
    "spec": {
        "progressDeadlineSeconds": 600,
        "replicas": 1,
        "revisionHistoryLimit": 10,
        "selector": {"matchLabels": {"app": "nginx-0930"}},
        "strategy": {
            "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"},
            "type": "RollingUpdate",
        },
        "template": {
            "metadata": {"creationTimestamp": None, "labels": {"app": "nginx-0930"}},
            "spec": {
                "containers": [
                    {
                        "image": "nginx:stable",
                        "imagePullPolicy": "Always",
                        "name": "nginx",
                        "resources": {},
                        "terminationMessagePath": "/dev/termination-log",
                        "terminationMessagePolicy": "File",
                    }
                ],
                "dnsPolicy": "ClusterFirst",
                "restartPolicy": "Always",
                "schedulerName": "default-scheduler",
                "securityContext": {},
                "terminationGracePeriodSeconds": 30,
            },
        },
    },
    "status": {},
}

KUBECTL_CREATE_FIELDS = (
    '{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:progressDeadlineSeconds":{},'
    '"f:replicas":{},"f:revisionHistoryLimit":{},"f:selector":{},"f:strategy":{"f:rollingUpdate":'
    '{".":{},"f:maxSurge":{},"f:maxUnavailable":{}},"f:type":{}},"f:template":{"f:metadata":'
    '{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:containers":{"k:{\\"name\\":\\"nginx\\"}":'
    '{".":{},"f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:resources":{},'
    '"f:terminationMessagePath":{},"f:terminationMessagePolicy":{}}},"f:dnsPolicy":{},'
    '"f:restartPolicy":{},"f:schedulerName":{},"f:securityContext":{},'
    '"f:terminationGracePeriodSeconds":{}}}}}'
)


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def test_create_records_every_field_like_kube_apiserver() -> None:
    created = track_update(None, KUBECTL_CREATED, manager="kubectl-create", rt=DEPLOYMENT, now=T0)

    assert created["metadata"]["managedFields"] == [
        {
            "manager": "kubectl-create",
            "operation": "Update",
            "apiVersion": "apps/v1",
            "time": T0,
            "fieldsType": "FieldsV1",
            "fieldsV1": json.loads(KUBECTL_CREATE_FIELDS),
        }
    ]
    # Byte for byte, including element order and where "." appears.
    assert _compact(created["metadata"]["managedFields"][0]["fieldsV1"]) == KUBECTL_CREATE_FIELDS


def test_update_moves_changed_fields_to_the_updater() -> None:
    created = track_update(None, KUBECTL_CREATED, manager="kubectl-create", rt=DEPLOYMENT, now=T0)
    new = copy.deepcopy(created)
    new["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.27"

    replaced = track_update(created, new, manager="kubectl-replace", rt=DEPLOYMENT, now=T1)

    assert _managers(replaced) == [("kubectl-create", "Update"), ("kubectl-replace", "Update")]
    replace = _entry(replaced, "kubectl-replace")
    assert replace["time"] == T1
    assert replace["fieldsV1"] == {
        "f:spec": {
            "f:template": {"f:spec": {"f:containers": {'k:{"name":"nginx"}': {"f:image": {}}}}}
        }
    }
    create = _entry(replaced, "kubectl-create")
    assert create["time"] == T0
    item = create["fieldsV1"]["f:spec"]["f:template"]["f:spec"]["f:containers"]
    assert "f:image" not in item['k:{"name":"nginx"}']


def test_update_that_changes_nothing_keeps_entries_and_times() -> None:
    created = track_update(None, KUBECTL_CREATED, manager="kubectl-create", rt=DEPLOYMENT, now=T0)
    same = copy.deepcopy(created)
    same["metadata"]["resourceVersion"] = "42"

    updated = track_update(created, same, manager="controller", rt=DEPLOYMENT, now=T1)

    assert updated["metadata"]["managedFields"] == created["metadata"]["managedFields"]


# --- Apply: ownership, conflicts, force, sharing ---------------------------------------------


def test_apply_create_records_the_applied_field_set() -> None:
    obj = _apply(None, _web_config(), "kubectl")

    assert obj["spec"]["replicas"] == 3
    assert obj["metadata"]["name"] == "web"
    [entry] = obj["metadata"]["managedFields"]
    assert entry == {
        "manager": "kubectl",
        "operation": "Apply",
        "apiVersion": "apps/v1",
        "time": T0,
        "fieldsType": "FieldsV1",
        "fieldsV1": {
            # An applied map lists its keys without "." of its own; name/namespace are untracked.
            "f:metadata": {"f:labels": {"f:app": {}}},
            "f:spec": {
                "f:replicas": {},
                "f:selector": {},
                "f:template": {
                    "f:metadata": {"f:labels": {"f:app": {}}},
                    "f:spec": {
                        "f:containers": {
                            'k:{"name":"app"}': {
                                ".": {},
                                "f:env": {
                                    'k:{"name":"MODE"}': {".": {}, "f:name": {}, "f:value": {}}
                                },
                                "f:image": {},
                                "f:name": {},
                                # Ports key on (containerPort, protocol); protocol defaults to TCP.
                                "f:ports": {
                                    'k:{"containerPort":80,"protocol":"TCP"}': {
                                        ".": {},
                                        "f:containerPort": {},
                                    }
                                },
                            }
                        }
                    },
                },
            },
        },
    }


def test_second_applier_changing_a_field_conflicts() -> None:
    live = _apply(None, _web_config(replicas=3), "kubectl")

    with pytest.raises(ApiError) as err:
        _apply(live, _deploy(replicas=5), "dynamo-operator", now=T1)

    assert err.value.code == 409
    assert err.value.reason == "Conflict"
    assert (
        err.value.message == 'Apply failed with 1 conflict: conflict with "kubectl": .spec.replicas'
    )
    assert err.value.details == {
        "causes": [
            {
                "reason": "FieldManagerConflict",
                "message": 'conflict with "kubectl"',
                "field": ".spec.replicas",
            }
        ]
    }
    assert err.value.status()["details"]["causes"][0]["field"] == ".spec.replicas"


def test_force_moves_ownership_to_the_applier() -> None:
    live = _apply(None, _web_config(replicas=3), "kubectl")

    obj = _apply(live, _deploy(replicas=5), "dynamo-operator", force=True, now=T1)

    assert obj["spec"]["replicas"] == 5
    assert _entry(obj, "dynamo-operator")["fieldsV1"] == {"f:spec": {"f:replicas": {}}}
    assert "f:replicas" not in _entry(obj, "kubectl")["fieldsV1"]["f:spec"]
    # kubectl no longer owns replicas: its next apply with the old value conflicts.
    with pytest.raises(ApiError) as err:
        _apply(obj, _web_config(replicas=3), "kubectl", now=T2)
    assert err.value.message == (
        'Apply failed with 1 conflict: conflict with "dynamo-operator": .spec.replicas'
    )


def test_same_value_is_shared_and_survives_one_owner_leaving() -> None:
    live = _apply(None, _web_config(replicas=3), "kubectl")

    shared = _apply(live, _deploy(replicas=3), "dynamo-operator", now=T1)
    assert "f:replicas" in _entry(shared, "kubectl")["fieldsV1"]["f:spec"]
    assert _entry(shared, "dynamo-operator")["fieldsV1"] == {"f:spec": {"f:replicas": {}}}
    # A no-op apply does not stamp a new entry with a time (kubernetes/kubernetes#127938).
    assert "time" not in _entry(shared, "dynamo-operator")

    config = _web_config()
    del config["spec"]["replicas"]
    after_kubectl_leaves = _apply(shared, config, "kubectl", now=T2)
    assert after_kubectl_leaves["spec"]["replicas"] == 3
    assert "f:replicas" not in _entry(after_kubectl_leaves, "kubectl")["fieldsV1"]["f:spec"]

    # Changing a shared field conflicts with every other owner.
    with pytest.raises(ApiError) as err:
        _apply(shared, _web_config(replicas=4), "kubectl", now=T2)
    assert 'conflict with "dynamo-operator"' in err.value.message


def test_removing_a_field_from_the_config_removes_it_from_the_object() -> None:
    live = _apply(None, _web_config(tier="frontend"), "kubectl")
    assert live["metadata"]["labels"] == {"app": "web", "tier": "frontend"}

    config = _web_config()
    del config["spec"]["replicas"]
    container = config["spec"]["template"]["spec"]["containers"][0]
    container["env"] = []
    obj = _apply(live, config, "kubectl", now=T1)

    assert obj["metadata"]["labels"] == {"app": "web"}
    assert "replicas" not in obj["spec"]
    # An empty associative list owns no element, so the field itself is released and pruned.
    assert "env" not in _container(obj, "app")
    assert obj["metadata"]["name"] == "web"


def test_removal_keeps_fields_another_manager_owns() -> None:
    live = _apply(None, _web_config(tier="frontend"), "kubectl")
    # An Update (e.g. kubectl label) takes over the tier label.
    relabelled = copy.deepcopy(live)
    relabelled["metadata"]["labels"]["tier"] = "edge"
    live = track_update(live, relabelled, manager="kubectl-label", rt=DEPLOYMENT, now=T1)

    obj = _apply(live, _web_config(), "kubectl", now=T2)

    assert obj["metadata"]["labels"] == {"app": "web", "tier": "edge"}


def test_containers_merge_by_name_between_managers() -> None:
    live = _apply(None, _web_config(), "kubectl")
    sidecar = _deploy(
        template={
            "spec": {"containers": [{"name": "sidecar", "image": "envoy:1.30"}]},
        }
    )

    obj = _apply(live, sidecar, "dynamo-operator", now=T1)

    names = [c["name"] for c in obj["spec"]["template"]["spec"]["containers"]]
    assert names == ["app", "sidecar"]
    operator = _entry(obj, "dynamo-operator")["fieldsV1"]
    assert operator == {
        "f:spec": {
            "f:template": {
                "f:spec": {
                    "f:containers": {'k:{"name":"sidecar"}': {".": {}, "f:image": {}, "f:name": {}}}
                }
            }
        }
    }
    # kubectl re-applying its own container leaves the sidecar alone.
    again = _apply(obj, _web_config(image="nginx:1.28"), "kubectl", now=T2)
    assert [c["name"] for c in again["spec"]["template"]["spec"]["containers"]] == [
        "app",
        "sidecar",
    ]
    assert _container(again, "app")["image"] == "nginx:1.28"
    # The operator dropping its container removes it.
    dropped = _apply(again, _deploy(replicas=3), "dynamo-operator", now=T2)
    assert [c["name"] for c in dropped["spec"]["template"]["spec"]["containers"]] == ["app"]


def test_env_merges_by_name_and_conflicts_per_variable() -> None:
    live = _apply(None, _web_config(), "kubectl")
    extra_env = _deploy(
        template={
            "spec": {
                "containers": [
                    {"name": "app", "env": [{"name": "GPU", "value": "1"}]},
                ]
            }
        }
    )

    obj = _apply(live, extra_env, "dynamo-operator", now=T1)
    env = _container(obj, "app")["env"]
    assert env == [{"name": "MODE", "value": "prod"}, {"name": "GPU", "value": "1"}]

    clash = copy.deepcopy(extra_env)
    clash["spec"]["template"]["spec"]["containers"][0]["env"] = [{"name": "MODE", "value": "dev"}]
    with pytest.raises(ApiError) as err:
        _apply(obj, clash, "dynamo-operator", now=T2)
    assert err.value.details["causes"][0]["field"] == (
        '.spec.template.spec.containers[name="app"].env[name="MODE"].value'
    )


def test_labels_are_owned_key_by_key() -> None:
    live = _apply(None, _web_config(), "kubectl")
    labels = _deploy()
    labels["metadata"]["labels"] = {"team": "inference"}

    obj = _apply(live, labels, "dynamo-operator", now=T1)

    assert obj["metadata"]["labels"] == {"app": "web", "team": "inference"}
    assert _entry(obj, "dynamo-operator")["fieldsV1"] == {
        "f:metadata": {"f:labels": {"f:team": {}}}
    }
    changed = copy.deepcopy(labels)
    changed["metadata"]["labels"] = {"app": "other"}
    with pytest.raises(ApiError) as err:
        _apply(obj, changed, "dynamo-operator", now=T2)
    assert err.value.details["causes"][0]["field"] == ".metadata.labels.app"


def test_apply_after_create_conflicts_with_the_creator() -> None:
    created = track_update(None, KUBECTL_CREATED, manager="kubectl-create", rt=DEPLOYMENT, now=T0)
    config = copy.deepcopy(_deploy(replicas=2))
    config["metadata"]["name"] = "nginx-0930"

    with pytest.raises(ApiError) as err:
        _apply(created, config, "dynamo-operator", now=T1)
    assert err.value.message == (
        'Apply failed with 1 conflict: conflict with "kubectl-create" using apps/v1: .spec.replicas'
    )

    same = copy.deepcopy(config)
    same["spec"]["replicas"] = 1
    shared = _apply(created, same, "dynamo-operator", now=T1)
    assert "f:replicas" in _entry(shared, "kubectl-create")["fieldsV1"]["f:spec"]


def test_several_conflicts_are_listed_per_manager() -> None:
    live = _apply(None, _web_config(), "kubectl")
    csa = copy.deepcopy(live)
    csa["spec"]["paused"] = True
    live = track_update(live, csa, manager="kubectl-client-side-apply", rt=DEPLOYMENT, now=T1)

    config = _web_config(replicas=7, image="nginx:2")
    config["spec"]["paused"] = False
    with pytest.raises(ApiError) as err:
        _apply(live, config, "dynamo-operator", now=T2)

    assert err.value.message == (
        "Apply failed with 3 conflicts: "
        'conflicts with "kubectl":\n'
        "- .spec.replicas\n"
        '- .spec.template.spec.containers[name="app"].image\n'
        'conflicts with "kubectl-client-side-apply" using apps/v1:\n'
        "- .spec.paused"
    )
    assert [c["field"] for c in err.value.details["causes"]] == [
        ".spec.replicas",
        '.spec.template.spec.containers[name="app"].image',
        ".spec.paused",
    ]
    assert err.value.details["causes"][2]["message"] == (
        'conflict with "kubectl-client-side-apply" using apps/v1'
    )


def test_explicit_null_clears_a_field() -> None:
    live = _apply(None, _web_config(), "kubectl")
    with_paused = copy.deepcopy(live)
    with_paused["spec"]["paused"] = True
    live = track_update(live, with_paused, manager="admin", rt=DEPLOYMENT, now=T1)

    with pytest.raises(ApiError):
        _apply(live, _deploy(paused=None), "dynamo-operator", now=T2)

    obj = _apply(live, _deploy(paused=None), "dynamo-operator", force=True, now=T2)
    assert "paused" not in obj["spec"]


def test_inputs_are_not_mutated() -> None:
    live = _apply(None, _web_config(), "kubectl")
    config = _deploy(replicas=3, template={"spec": {"containers": [{"name": "x", "image": "y"}]}})
    before_live, before_config = copy.deepcopy(live), copy.deepcopy(config)

    _apply(live, config, "dynamo-operator", now=T1)
    track_update(live, config | {"status": {}}, manager="m", rt=DEPLOYMENT, now=T1)

    assert live == before_live
    assert config == before_config


# --- Request validation ----------------------------------------------------------------------


def test_applied_object_of_another_type_is_a_bad_request() -> None:
    config = _web_config()
    config["apiVersion"] = "apps/v1beta1"
    with pytest.raises(ApiError) as err:
        _apply(None, config, "kubectl")
    assert (err.value.code, err.value.reason) == (400, "BadRequest")
    assert err.value.message == "invalid object type: apps/v1beta1, Kind=Deployment"

    with pytest.raises(ApiError) as err:
        _apply(None, {"metadata": {"name": "web"}}, "kubectl")
    assert err.value.message == "invalid object type: /, Kind="


def test_applied_managed_fields_are_a_bad_request() -> None:
    config = _web_config()
    config["metadata"]["managedFields"] = []
    with pytest.raises(ApiError) as err:
        _apply(None, config, "kubectl")
    assert (err.value.code, err.value.message) == (400, "metadata.managedFields must be nil")


def test_unkeyable_and_duplicate_elements_fail_typed_conversion() -> None:
    config = _web_config()
    config["spec"]["template"]["spec"]["containers"][0]["env"].append(
        {"name": "MODE", "value": "dev"}
    )
    with pytest.raises(ApiError) as err:
        _apply(None, config, "kubectl")
    assert err.value.code == 500
    assert err.value.message == (
        "failed to create typed patch object (default/web; apps/v1, Kind=Deployment): "
        '.spec.template.spec.containers[name="app"].env: duplicate entries for key [name="MODE"]'
    )
    assert "reason" not in err.value.status()

    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"ports": [{"targetPort": 8080}]},
    }
    with pytest.raises(ApiError) as err:
        server_side_apply(None, service, manager="kubectl", force=False, rt=SERVICE, now=T0)
    assert err.value.message == (
        "failed to create typed patch object (default/web; /v1, Kind=Service): .spec.ports: "
        'element 0: associative list with keys has an element that omits key field "port" '
        "(and doesn't have default value)"
    )


def test_service_selector_is_atomic() -> None:
    svc = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]},
    }
    obj = server_side_apply(None, svc, manager="kubectl", force=False, rt=SERVICE, now=T0)
    assert _entry(obj, "kubectl")["fieldsV1"]["f:spec"] == {
        "f:ports": {'k:{"port":80,"protocol":"TCP"}': {".": {}, "f:port": {}}},
        "f:selector": {},
    }


def test_field_manager_rules() -> None:
    assert default_manager("kubectl/v1.31.1 (linux/arm64) kubernetes/948afe5") == "kubectl"
    assert default_manager("dynamo-operator") == "dynamo-operator"
    assert default_manager("a\tb/1") == "ab"
    assert default_manager("x" * 200) == "x" * 128
    assert default_manager("") == ""

    with pytest.raises(ApiError) as err:
        validate_field_manager("", apply=True)
    assert err.value.code == 422
    assert err.value.message == (
        'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: '
        "is required for apply patch"
    )
    assert err.value.details == {
        "kind": "PatchOptions",
        "group": "meta.k8s.io",
        "causes": [
            {
                "reason": "FieldValueRequired",
                "message": "Required value: is required for apply patch",
                "field": "fieldManager",
            }
        ],
    }
    validate_field_manager("", options_kind="UpdateOptions")
    with pytest.raises(ApiError) as err:
        validate_field_manager("x" * 129, options_kind="CreateOptions")
    assert err.value.message.startswith('CreateOptions.meta.k8s.io "" is invalid: fieldManager:')


def test_check_name_matches_the_url() -> None:
    check_name({"metadata": {"name": "web", "namespace": "default"}}, "web", "default")
    with pytest.raises(ApiError) as err:
        check_name({"metadata": {}}, "web", "default")
    assert err.value.message == (
        "the name of the object (web based on URL) was undeterminable: name must be provided"
    )
    with pytest.raises(ApiError) as err:
        check_name({"metadata": {"name": "api"}}, "web")
    assert (
        err.value.message == "the name of the object (api) does not match the name on the URL (web)"
    )


# --- Custom resources ------------------------------------------------------------------------

WIDGET_SCHEMA: Json = {
    "type": "object",
    "properties": {
        "apiVersion": {"type": "string"},
        "kind": {"type": "string"},
        "metadata": {"type": "object"},
        "spec": {
            "type": "object",
            "properties": {
                "replicas": {"type": "integer"},
                "components": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name", "kind"],
                    "items": {
                        "type": "object",
                        "properties": {
                            "name": {"type": "string"},
                            "kind": {"type": "string", "default": "worker"},
                            "image": {"type": "string"},
                        },
                    },
                },
                "args": {"type": "array", "items": {"type": "string"}},
                "tags": {
                    "type": "array",
                    "x-kubernetes-list-type": "set",
                    "items": {"type": "string"},
                },
                "resources": {
                    "type": "object",
                    "x-kubernetes-map-type": "atomic",
                    "properties": {"gpu": {"type": "integer"}, "cpu": {"type": "string"}},
                },
                "envs": {"type": "object", "additionalProperties": {"type": "string"}},
                "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            },
        },
        "status": {
            "type": "object",
            "properties": {"phase": {"type": "string"}, "ready": {"type": "integer"}},
        },
    },
}
WIDGET = ResourceType(
    group="nvidia.com",
    version="v1alpha1",
    kind="Widget",
    plural="widgets",
    namespaced=True,
    has_status=True,
    schema=WIDGET_SCHEMA,
    custom=True,
    storage_version="v1alpha1",
)


def _widget(spec: Json | None = None, status: Json | None = None) -> Json:
    obj: Json = {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "Widget",
        "metadata": {"name": "w", "namespace": "default"},
    }
    if spec is not None:
        obj["spec"] = spec
    if status is not None:
        obj["status"] = status
    return obj


def _apply_widget(live: Json | None, config: Json, manager: str, **kw: Any) -> Json:
    kw.setdefault("now", T0)
    kw.setdefault("force", False)
    return server_side_apply(live, config, manager=manager, rt=WIDGET, **kw)


def test_crd_map_list_merges_by_keys_with_defaults() -> None:
    live = _apply_widget(
        None,
        _widget({"components": [{"name": "frontend", "image": "fe:1"}], "replicas": 1}),
        "kubectl",
    )
    obj = _apply_widget(
        live,
        _widget({"components": [{"name": "decode", "kind": "gpu", "image": "vllm:1"}]}),
        "dynamo-operator",
        now=T1,
    )

    assert obj["spec"]["components"] == [
        {"name": "frontend", "image": "fe:1"},
        {"name": "decode", "kind": "gpu", "image": "vllm:1"},
    ]
    kubectl = _entry(obj, "kubectl")["fieldsV1"]
    assert kubectl == {
        "f:spec": {
            "f:components": {
                'k:{"kind":"worker","name":"frontend"}': {".": {}, "f:image": {}, "f:name": {}}
            },
            "f:replicas": {},
        }
    }


def test_crd_lists_sets_and_atomic_maps() -> None:
    live = _apply_widget(
        None,
        _widget({"args": ["--a"], "tags": ["x"], "resources": {"gpu": 1}, "envs": {"A": "1"}}),
        "kubectl",
    )
    assert _entry(live, "kubectl")["fieldsV1"]["f:spec"] == {
        "f:args": {},
        "f:envs": {"f:A": {}},
        "f:resources": {},
        "f:tags": {'v:"x"': {}},
    }

    obj = _apply_widget(
        live,
        _widget({"tags": ["y"], "envs": {"B": "2"}}),
        "dynamo-operator",
        now=T1,
    )
    assert obj["spec"]["tags"] == ["x", "y"]
    assert obj["spec"]["envs"] == {"A": "1", "B": "2"}

    # Atomic list and atomic map are owned whole: any change conflicts at the field itself.
    with pytest.raises(ApiError) as err:
        _apply_widget(obj, _widget({"args": ["--b"], "resources": {"gpu": 1, "cpu": "2"}}), "op")
    assert [c["field"] for c in err.value.details["causes"]] == [".spec.args", ".spec.resources"]


def test_crd_preserved_fields_are_granular_maps_and_atomic_lists() -> None:
    obj = _apply_widget(None, _widget({"extra": {"a": {"b": 1}, "l": [1, 2]}}), "kubectl")
    assert _entry(obj, "kubectl")["fieldsV1"]["f:spec"] == {
        "f:extra": {"f:a": {".": {}, "f:b": {}}, "f:l": {}}
    }


def test_crd_undeclared_field_fails_typed_conversion() -> None:
    with pytest.raises(ApiError) as err:
        _apply_widget(None, _widget({"replicas": 1, "topologyKeys": ["a"]}), "kubectl")
    assert err.value.code == 500
    assert err.value.message == (
        "failed to create typed patch object (default/w; nvidia.com/v1alpha1, Kind=Widget): "
        ".spec.topologyKeys: field not declared in schema"
    )


def test_crd_create_by_update_marks_added_structs() -> None:
    created = track_update(None, _widget({"replicas": 2}), manager="helm", rt=WIDGET, now=T0)
    assert _entry(created, "helm")["fieldsV1"] == {"f:spec": {".": {}, "f:replicas": {}}}


# --- Status subresource ----------------------------------------------------------------------


def test_main_resource_apply_ignores_status() -> None:
    live = _apply_widget(None, _widget({"replicas": 1}, {"phase": "Pending"}), "kubectl")
    assert "status" not in live
    assert "f:status" not in _entry(live, "kubectl")["fieldsV1"]


def test_status_subresource_apply_changes_only_status() -> None:
    live = _apply_widget(None, _widget({"replicas": 1}), "kubectl")

    obj = _apply_widget(
        live,
        _widget({"replicas": 9}, {"phase": "Ready", "ready": 1}),
        "dynamo-operator",
        subresource="status",
        now=T1,
    )

    assert obj["spec"] == {"replicas": 1}
    assert obj["status"] == {"phase": "Ready", "ready": 1}
    entry = _entry(obj, "dynamo-operator")
    assert entry["subresource"] == "status"
    assert entry["fieldsV1"] == {"f:status": {"f:phase": {}, "f:ready": {}}}
    assert list(entry) == [
        "manager",
        "operation",
        "apiVersion",
        "time",
        "fieldsType",
        "fieldsV1",
        "subresource",
    ]

    # Another status writer conflicts, and the message names the subresource.
    with pytest.raises(ApiError) as err:
        _apply_widget(obj, _widget(status={"phase": "Failed"}), "other", subresource="status")
    assert err.value.message == (
        'Apply failed with 1 conflict: conflict with "dynamo-operator" with subresource "status":'
        " .status.phase"
    )
    # A status update through the main resource is not recorded either.
    changed = copy.deepcopy(obj)
    changed["status"]["phase"] = "Gone"
    updated = track_update(obj, changed, manager="m", rt=WIDGET, now=T2)
    assert updated["metadata"]["managedFields"] == obj["metadata"]["managedFields"]


def test_status_update_is_tracked_with_the_subresource() -> None:
    live = _apply_widget(None, _widget({"replicas": 1}), "kubectl")
    new = copy.deepcopy(live)
    new["status"] = {"phase": "Ready"}
    new["metadata"]["managedFields"] = []  # ignored on a subresource

    obj = track_update(
        live, new, manager="dynamo-operator", rt=WIDGET, subresource="status", now=T1
    )

    assert _managers(obj) == [("kubectl", "Apply"), ("dynamo-operator", "Update")]
    entry = _entry(obj, "dynamo-operator")
    assert entry["subresource"] == "status"
    assert entry["apiVersion"] == "nvidia.com/v1alpha1"
    assert entry["fieldsV1"] == {"f:status": {".": {}, "f:phase": {}}}


# --- managedFields written by the client -----------------------------------------------------


def test_empty_managed_fields_list_resets_them() -> None:
    live = _apply(None, _web_config(), "kubectl")
    new = copy.deepcopy(live)
    new["metadata"]["managedFields"] = []
    assert (
        "managedFields"
        not in track_update(live, new, manager="m", rt=DEPLOYMENT, now=T1)["metadata"]
    )

    new["metadata"]["managedFields"] = [{}]
    new["spec"]["replicas"] = 8
    reset = track_update(live, new, manager="m", rt=DEPLOYMENT, now=T1)
    assert _managers(reset) == [("m", "Update")]
    assert _entry(reset, "m")["fieldsV1"] == {"f:spec": {"f:replicas": {}}}


def test_client_managed_fields_replace_valid_ones_and_ignore_invalid() -> None:
    live = _apply(None, _web_config(), "kubectl")
    new = copy.deepcopy(live)
    new["metadata"]["managedFields"] = [
        {
            "manager": "imported",
            "operation": "Update",
            "apiVersion": "apps/v1",
            "time": T0,
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:spec": {"f:replicas": {}}},
        }
    ]
    assert _managers(track_update(live, new, manager="m", rt=DEPLOYMENT, now=T1)) == [
        ("imported", "Update")
    ]

    new["metadata"]["managedFields"][0]["operation"] = "Patch"
    kept = track_update(live, new, manager="m", rt=DEPLOYMENT, now=T1)
    assert kept["metadata"]["managedFields"] == live["metadata"]["managedFields"]

    del new["metadata"]["managedFields"]
    omitted = track_update(live, new, manager="m", rt=DEPLOYMENT, now=T1)
    assert omitted["metadata"]["managedFields"] == live["metadata"]["managedFields"]


def test_update_managers_beyond_ten_are_merged_into_ancient_changes() -> None:
    obj = track_update(
        None,
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}},
        manager="creator",
        rt=CONFIGMAP,
        now=T0,
    )
    for i in range(11):
        new = copy.deepcopy(obj)
        new.setdefault("data", {})[f"k{i}"] = "v"
        obj = track_update(
            obj, new, manager=f"writer-{i:02d}", rt=CONFIGMAP, now=f"2024-10-01T00:00:{i:02d}Z"
        )

    managers = [m for m, _ in _managers(obj)]
    assert len(managers) == 10
    assert managers[0] == "ancient-changes"
    ancient = _entry(obj, "ancient-changes")
    # writer-00 added the data map itself, so the merged bucket owns it too.
    assert ancient["fieldsV1"] == {"f:data": {".": {}, "f:k0": {}, "f:k1": {}}}
    assert ancient["time"] == "2024-10-01T00:00:01Z"


def test_entries_are_ordered_apply_first_then_by_time() -> None:
    live = track_update(None, KUBECTL_CREATED, manager="kubectl-create", rt=DEPLOYMENT, now=T1)
    config = _deploy(revisionHistoryLimit=10)
    config["metadata"]["name"] = "nginx-0930"
    config["metadata"]["labels"] = {"team": "x"}
    obj = _apply(live, config, "zz-applier", now=T2)
    assert _managers(obj) == [("zz-applier", "Apply"), ("kubectl-create", "Update")]


# --- FieldsV1 encoding -----------------------------------------------------------------------


def test_fields_v1_orders_fields_then_keys_then_values() -> None:
    paths = {
        ("f:metadata", "f:finalizers", 'v:"b"'),
        ("f:metadata", "f:finalizers", 'v:"a"'),
        ("f:spec", "f:ports", 'k:{"port":80,"protocol":"TCP"}'),
        ("f:spec", "f:ports", 'k:{"port":80,"protocol":"TCP"}', "f:port"),
        ("f:spec", "f:ports", 'k:{"port":443,"protocol":"TCP"}'),
        ("f:spec", "f:a"),
    }
    encoded = set_to_fields(paths)
    assert _compact(encoded) == (
        '{"f:metadata":{"f:finalizers":{"v:\\"a\\"":{},"v:\\"b\\"":{}}},'
        '"f:spec":{"f:a":{},"f:ports":{"k:{\\"port\\":80,\\"protocol\\":\\"TCP\\"}":'
        '{".":{},"f:port":{}},"k:{\\"port\\":443,\\"protocol\\":\\"TCP\\"}":{}}}}'
    )
    assert fields_to_set(encoded) == paths


def test_fields_v1_keys_are_canonicalized_on_read() -> None:
    decoded = fields_to_set({"f:spec": {'k:{"protocol": "TCP", "port": 80}': {}, "x:future": {}}})
    assert decoded == {("f:spec", 'k:{"port":80,"protocol":"TCP"}')}
    with pytest.raises(ValueError):
        fields_to_set({"f:spec": {"k:{not json": {}}})


def test_finalizers_are_a_set() -> None:
    cm: Json = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c", "finalizers": ["a/b"]},
    }
    live = server_side_apply(None, cm, manager="kubectl", force=False, rt=CONFIGMAP, now=T0)
    other = copy.deepcopy(cm)
    other["metadata"]["finalizers"] = ["dynamo/cleanup"]
    obj = server_side_apply(live, other, manager="op", force=False, rt=CONFIGMAP, now=T1)
    assert obj["metadata"]["finalizers"] == ["a/b", "dynamo/cleanup"]
    assert _entry(obj, "op")["fieldsV1"] == {
        "f:metadata": {"f:finalizers": {'v:"dynamo/cleanup"': {}}}
    }
