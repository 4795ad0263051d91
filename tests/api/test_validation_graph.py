"""Validation of graphs (DGD) and components (DGD services and DCDs), one rule at a time."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from api.convert import load
from api.errors import FieldError
from api.names import is_dns1123_subdomain
from api.v1alpha1 import DynamoComponentDeployment, DynamoGraphDeployment
from api.validation import validate, warnings

Json = dict[str, Any]
SUBDOMAIN_MESSAGE = is_dns1123_subdomain("-")[0]


def dgd(services: Json | None = None, name: str = "g", **spec: Any) -> DynamoGraphDeployment:
    body: Json = {"services": {"Frontend": {"componentType": "frontend"}}, **spec}
    if services is not None:
        body["services"] = services
    return load(DynamoGraphDeployment, {"metadata": {"name": name}, "spec": body})


def service(**fields: Any) -> DynamoGraphDeployment:
    """A graph whose only service is `w` with these fields."""
    return dgd({"w": fields}, backendFramework=fields.pop("_backend", "vllm"))


def errors_of(obj: Any, old: Any = None, **options: Any) -> list[str]:
    return [str(e) for e in validate(obj, old, **options)]


def test_a_minimal_graph_is_valid() -> None:
    assert errors_of(dgd()) == []


@pytest.mark.parametrize("services", [None, {}])
def test_services_must_not_be_empty(services: Json | None) -> None:
    obj = load(DynamoGraphDeployment, {"metadata": {"name": "g"}, "spec": {}})
    if services is not None:
        obj = dgd(services)
    assert errors_of(obj) == ["spec.services: must have at least one service"]


def test_at_most_25_services() -> None:
    obj = dgd({f"s{i}": {} for i in range(26)})
    assert errors_of(obj) == ["spec.services: must have at most 25 services"]


def test_backend_framework_enum() -> None:
    assert errors_of(dgd(backendFramework="onnx")) == [
        'spec.backendFramework: unsupported value "onnx"; supported values: "sglang", "vllm", '
        '"trtllm"'
    ]


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"subComponentType": "middle"}, "spec.services.w.subComponentType: unsupported value"),
        ({"replicas": -1}, "spec.services.w.replicas: must be >= 0"),
        ({"multinode": {"nodeCount": 1}}, "spec.services.w.multinode.nodeCount: must be >= 2"),
        (
            {"resources": {"limits": {"gpu": "0"}}},
            "spec.services.w.resources.limits.gpu: must be a whole number of GPUs greater than 0",
        ),
        (
            {"resources": {"limits": {"gpu": "1.5"}}},
            "spec.services.w.resources.limits.gpu: must be a whole number of GPUs, got '1.5'",
        ),
        (
            {"resources": {"requests": {"gpu": "two"}}},
            "spec.services.w.resources.requests.gpu: must be a whole number of GPUs",
        ),
        (
            {"resources": {"requests": {"cpu": "1 core"}}},
            "spec.services.w.resources.requests.cpu: must be a Kubernetes quantity",
        ),
        (
            {"resources": {"limits": {"memory": "-1Gi"}}},
            "spec.services.w.resources.limits.memory: must be >= 0",
        ),
        (
            {"resources": {"limits": {"custom": {"rdma/ib": "lots"}}}},
            "spec.services.w.resources.limits.custom.rdma/ib: must be a Kubernetes quantity",
        ),
        (
            {"resources": {"claims": [{"request": "r"}]}},
            "spec.services.w.resources.claims[0].name: required",
        ),
        (
            {"sharedMemory": {"size": "8GB"}},
            "spec.services.w.sharedMemory.size: must be a Kubernetes quantity",
        ),
        (
            {"sharedMemory": {}},
            "spec.services.w.sharedMemory.size: required when disabled is false",
        ),
        (
            {"sharedMemory": {"size": "0"}},
            "spec.services.w.sharedMemory.size: required when disabled is false",
        ),
        ({"modelRef": {"name": ""}}, "spec.services.w.modelRef.name: required"),
        ({"envs": [{"value": "x"}]}, "spec.services.w.envs[0].name: required"),
        ({"envFromSecret": "HF_Token"}, "spec.services.w.envFromSecret: 'HF_Token': a lowercase"),
    ],
)
def test_component_rules(fields: Json, expected: str) -> None:
    (error,) = errors_of(service(**fields))
    assert error.startswith(expected)


@pytest.mark.parametrize(
    "fields",
    [{"componentType": t}
     for t in ("frontend", "worker", "prefill", "decode", "planner", "main", "router")]
    + [
        {"componentType": ""},
        {"subComponentType": "prefill"},
        {"replicas": 0},
        {"multinode": {"nodeCount": 2}},
        {"multinode": {}},
        {"resources": {"requests": {"gpu": "0", "cpu": "500m", "memory": "1.5Gi"}}},
        {"resources": {"limits": {"gpu": "8", "custom": {"rdma/ib": "1"}}}},
        {"sharedMemory": {"disabled": True}},
        {"sharedMemory": {"size": 1073741824}},
    ],
)
def test_valid_components(fields: Json) -> None:
    assert errors_of(service(**fields)) == []


def test_volume_mounts_must_name_a_declared_pvc() -> None:
    obj = dgd(
        {
            "w": {
                "volumeMounts": [
                    {"name": "cache", "mountPoint": "/c"},
                    {"name": "other", "mountPoint": "/o"},
                ]
            }
        },
        pvcs=[{"name": "cache"}],
    )
    assert errors_of(obj) == [
        'spec.services.w.volumeMounts[1].name: PVC "other" is not declared in spec.pvcs'
    ]


def test_volume_mount_needs_a_mount_point_unless_it_is_a_vllm_cache() -> None:
    pvcs = [{"name": "c"}]
    assert errors_of(dgd({"w": {"volumeMounts": [{"name": "c"}]}}, pvcs=pvcs)) == [
        "spec.services.w.volumeMounts[0].mountPoint: required unless useAsCompilationCache is true"
    ]
    cache = {"w": {"volumeMounts": [{"name": "c", "useAsCompilationCache": True}]}}
    assert errors_of(dgd(cache, pvcs=pvcs, backendFramework="vllm")) == []
    assert errors_of(dgd(cache, pvcs=pvcs, backendFramework="sglang")) == [
        "spec.services.w.volumeMounts[0].mountPoint: required: only the vllm backend has a "
        "default compilation cache path (backendFramework is sglang)"
    ]
    assert errors_of(dgd(cache, pvcs=pvcs)) == [
        "spec.services.w.volumeMounts[0].mountPoint: required: only the vllm backend has a "
        "default compilation cache path (backendFramework is not set)"
    ]


def test_volume_mount_point_is_absolute() -> None:
    obj = dgd({"w": {"volumeMounts": [{"name": "c", "mountPoint": "data"}]}}, pvcs=[{"name": "c"}])
    assert errors_of(obj) == [
        "spec.services.w.volumeMounts[0].mountPoint: must be an absolute path"
    ]


def test_pvc_rules() -> None:
    obj = dgd(
        pvcs=[
            {"name": "a", "create": True},
            {"name": "a"},
            {"name": "Bad_Name"},
            {
                "name": "z",
                "create": True,
                "size": "0",
                "storageClass": "s",
                "volumeAccessMode": "ReadWriteOnce",
            },
            {"name": "y", "size": "lots", "volumeAccessMode": "RWX"},
        ]
    )
    errors = errors_of(obj)
    assert 'spec.pvcs[1].name: duplicate value "a"' in errors
    assert "spec.pvcs[0].storageClass: required when create is true" in errors
    assert "spec.pvcs[0].size: required when create is true" in errors
    assert "spec.pvcs[0].volumeAccessMode: required when create is true" in errors
    assert any(
        e.startswith("spec.pvcs[2].name: 'Bad_Name': a lowercase RFC 1123 subdomain")
        for e in errors
    )
    assert "spec.pvcs[3].size: required when create is true" in errors
    assert any(e.startswith("spec.pvcs[4].size: must be a Kubernetes quantity") for e in errors)
    assert any(
        e.startswith('spec.pvcs[4].volumeAccessMode: unsupported value "RWX"') for e in errors
    )
    assert len(errors) == 8


def test_at_most_100_pvcs() -> None:
    assert errors_of(dgd(pvcs=[{"name": f"p{i}"} for i in range(101)])) == [
        "spec.pvcs: must have at most 100 items"
    ]


@pytest.mark.parametrize(
    ("ingress", "expected"),
    [
        ({"enabled": True}, ["spec.services.w.ingress.host: required when ingress is enabled"]),
        ({"enabled": False}, []),
        ({"enabled": True, "host": "api"}, []),
        ({"enabled": True, "host": "api", "hostPrefix": "*.", "hostSuffix": "example.com"}, []),
        (
            {"enabled": True, "host": "My_Api"},
            ['spec.services.w.ingress.host: host name "My_Api.local": ' + SUBDOMAIN_MESSAGE],
        ),
        (
            {"enabled": True, "host": "api", "tls": {"secretName": "Not Valid"}},
            ["spec.services.w.ingress.tls.secretName: 'Not Valid': " + SUBDOMAIN_MESSAGE],
        ),
    ],
)
def test_ingress_rules(ingress: Json, expected: list[str]) -> None:
    assert errors_of(service(ingress=ingress)) == expected


EPP_CONFIG = {"config": {"kind": "EndpointPickerConfig"}}


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"componentType": "epp", "eppConfig": EPP_CONFIG}, []),
        ({"componentType": "epp", "eppConfig": {"configMapRef": {"name": "c", "key": "k"}}}, []),
        ({"componentType": "epp"}, ["spec.services.w.eppConfig: required for componentType epp"]),
        (
            {"componentType": "worker", "eppConfig": EPP_CONFIG},
            ["spec.services.w.eppConfig: only allowed for componentType epp"],
        ),
        (
            {"componentType": "epp", "eppConfig": {}},
            ["spec.services.w.eppConfig: exactly one of configMapRef and config must be set"],
        ),
        (
            {
                "componentType": "epp",
                "eppConfig": {"config": {}, "configMapRef": {"name": "c", "key": "k"}},
            },
            ["spec.services.w.eppConfig: exactly one of configMapRef and config must be set"],
        ),
        (
            {"componentType": "epp", "eppConfig": {"configMapRef": {"key": "k"}}},
            ["spec.services.w.eppConfig.configMapRef.name: required"],
        ),
        (
            {"componentType": "epp", "eppConfig": EPP_CONFIG, "replicas": 2},
            ["spec.services.w.replicas: epp components run exactly 1 replica"],
        ),
        (
            {"componentType": "epp", "eppConfig": EPP_CONFIG, "multinode": {"nodeCount": 2}},
            ["spec.services.w.multinode: epp components run on a single node"],
        ),
        (
            {"componentType": "epp", "eppConfig": EPP_CONFIG, "scalingAdapter": {"enabled": True}},
            [
                "spec.services.w.scalingAdapter.enabled: not supported for epp components, "
                "which run exactly 1 replica"
            ],
        ),
    ],
)
def test_epp_rules(fields: Json, expected: list[str]) -> None:
    assert errors_of(service(**fields)) == expected


def test_service_names_must_lowercase_to_dns_labels() -> None:
    (error,) = errors_of(dgd({"Bad_Service": {}}))
    assert error.startswith("spec.services.Bad_Service: service name 'Bad_Service' lowercased:")


def test_service_keys_differing_only_in_case_are_rejected_naming_both() -> None:
    graph = dgd({"Worker": {"componentType": "worker"}, "worker": {"componentType": "worker"},
                 "Frontend": {"componentType": "frontend"}})
    assert errors_of(graph) == [
        'spec.services.worker: service keys "Worker" and "worker" differ only in case and would '
        'both be DynamoComponentDeployment "g-worker"; rename one of them'
    ]


def test_an_unknown_component_type_is_a_warning_naming_the_defaults() -> None:
    graph = service(componentType="router")
    assert errors_of(graph) == []
    (warning,) = [str(w) for w in warnings(graph)]
    assert warning.startswith('spec.services.w.componentType: "router" has no defaults of its '
                              "own; the generic component defaults apply")
    assert warnings(service(componentType="main")) == []


def test_graph_and_service_names_fit_generated_object_names() -> None:
    assert errors_of(dgd({"s" * 40: {}}, name="g" * 5)) == []
    (error,) = errors_of(dgd({"s" * 41: {}}, name="g" * 5))
    assert "46 characters" in error and "limit 45" in error
    # A multinode service also names its leader: <svc>-ldr.
    (error,) = errors_of(dgd({"worker": {"multinode": {"nodeCount": 2}}}, name="g" * 30))
    assert "46 characters" in error


@pytest.mark.parametrize(
    ("restart", "expected"),
    [
        ({"id": "1"}, []),
        ({"id": "1", "strategy": {"type": "Sequential", "order": ["b", "a"]}}, []),
        ({"id": "1", "strategy": {"type": "Parallel"}}, []),
        ({"id": ""}, ["spec.restart.id: required"]),
        (
            {"id": "1", "strategy": {"type": "Rolling"}},
            [
                'spec.restart.strategy.type: unsupported value "Rolling"; supported values: '
                '"Sequential", "Parallel"'
            ],
        ),
        (
            {"id": "1", "strategy": {"type": "Parallel", "order": ["a", "b"]}},
            ["spec.restart.strategy.order: cannot be set when the strategy type is Parallel"],
        ),
        (
            {"id": "1", "strategy": {"order": ["a", "a", "b"]}},
            ['spec.restart.strategy.order[1]: duplicate value "a"'],
        ),
        (
            {"id": "1", "strategy": {"order": ["a", "c"]}},
            ['spec.restart.strategy.order[1]: unknown service "c"'],
        ),
        (
            {"id": "1", "strategy": {"order": ["a"]}},
            ["spec.restart.strategy.order: must list each of the 2 services exactly once"],
        ),
    ],
)
def test_restart_rules(restart: Json, expected: list[str]) -> None:
    assert errors_of(dgd({"a": {}, "b": {}}, restart=restart)) == expected


def test_backend_framework_is_immutable() -> None:
    old = dgd(backendFramework="vllm")
    assert errors_of(dgd(backendFramework="sglang"), old) == ["spec.backendFramework: is immutable"]
    assert errors_of(dgd(), old) == ["spec.backendFramework: is immutable"]


def _adapted(replicas: int | None, enabled: bool = True) -> DynamoGraphDeployment:
    worker: Json = {"scalingAdapter": {"enabled": enabled}}
    if replicas is not None:
        worker["replicas"] = replicas
    return dgd({"w": worker})


def test_adapter_owned_replicas_cannot_be_edited_directly() -> None:
    message = (
        "spec.services.w.replicas: cannot be changed directly while the scaling adapter is "
        "enabled; scale the DynamoGraphDeploymentScalingAdapter instead"
    )
    assert errors_of(_adapted(3), _adapted(2)) == [message]
    assert errors_of(_adapted(2), _adapted(None)) == [message]
    # Unset means one replica, so this is no change.
    assert errors_of(_adapted(1), _adapted(None)) == []
    # The operator and the Planner may write them.
    assert errors_of(_adapted(3), _adapted(2), replicas_authorized=True) == []
    # Without an adapter on both sides, replicas are the user's.
    assert errors_of(_adapted(3, enabled=False), _adapted(2, enabled=False)) == []
    assert errors_of(_adapted(3, enabled=True), _adapted(2, enabled=False)) == []
    assert errors_of(_adapted(3, enabled=False), _adapted(2, enabled=True)) == []


def test_new_services_and_other_edits_are_allowed_on_update() -> None:
    old = dgd({"a": {"replicas": 1, "scalingAdapter": {"enabled": True}}})
    new = dgd(
        {
            "a": {"replicas": 1, "scalingAdapter": {"enabled": True}, "labels": {"x": "y"}},
            "b": {"replicas": 5},
        }
    )
    assert errors_of(new, old) == []


def test_deprecated_fields_are_warnings_not_errors() -> None:
    obj = service(autoscaling={"enabled": True}, dynamoNamespace="ns")
    assert errors_of(obj) == []
    assert [w.path for w in warnings(obj)] == [
        "spec.services.w.autoscaling",
        "spec.services.w.dynamoNamespace",
    ]


# --- DynamoComponentDeployment ----------------------------------------------------------------


def dcd(**spec: Any) -> DynamoComponentDeployment:
    return load(DynamoComponentDeployment, {"metadata": {"name": "c"}, "spec": spec})


def test_dcd_uses_the_component_rules_at_spec() -> None:
    assert errors_of(dcd(replicas=-2, backendFramework="vllm")) == ["spec.replicas: must be >= 0"]
    assert errors_of(dcd(backendFramework="tgi"))[0].startswith(
        'spec.backendFramework: unsupported value "tgi"'
    )


def test_dcd_mounts_are_not_checked_against_a_pvc_list() -> None:
    assert errors_of(dcd(volumeMounts=[{"name": "any", "mountPoint": "/m"}])) == []


def test_dcd_backend_is_immutable_and_deprecations_warn() -> None:
    assert errors_of(dcd(backendFramework="vllm"), dcd(backendFramework="sglang")) == [
        "spec.backendFramework: is immutable"
    ]
    assert [w.path for w in warnings(dcd(dynamoNamespace="x"))] == ["spec.dynamoNamespace"]


def test_dynamo_namespace_warning_says_what_the_field_does_where_it_stands() -> None:
    # A DCD of its own: the field still sets the pods' Dynamo namespace, and says so.
    [own] = warnings(dcd(dynamoNamespace="custom-ns"))
    assert "still sets this component's Dynamo namespace" in own.message
    assert "ignored" not in own.message
    # A DCD a graph made: the graph wrote the field, so nobody is warned about it.
    made = load(DynamoComponentDeployment, {"metadata": {"name": "g-c", "ownerReferences": [
        {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment", "name": "g",
         "uid": "u", "controller": True}]}, "spec": {"dynamoNamespace": "default-g"}})
    assert warnings(made) == []
    # A graph's service: the graph computes every namespace, so the field is ignored.
    [ignored] = warnings(load(DynamoGraphDeployment, {"metadata": {"name": "g"}, "spec": {
        "services": {"Frontend": {"dynamoNamespace": "x"}}}}))
    assert ignored.path == "spec.services.Frontend.dynamoNamespace"
    assert ignored.message.startswith("deprecated and ignored")


def test_validation_does_not_modify_its_input() -> None:
    obj = service(replicas=-1)
    before = copy.deepcopy(obj)
    validate(obj)
    assert obj == before


def test_field_error_str() -> None:
    assert str(FieldError("spec.replicas", "must be >= 0")) == "spec.replicas: must be >= 0"
    assert str(FieldError("", "bad")) == "bad"
