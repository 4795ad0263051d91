"""Validation of requests (DGDR), models and scaling adapters."""

from __future__ import annotations

from typing import Any

import pytest

from api.convert import load
from api.v1alpha1 import (
    DynamoGraphDeploymentRequest,
    DynamoGraphDeploymentScalingAdapter,
    DynamoModel,
)
from api.validation import validate, warnings

Json = dict[str, Any]


def errors_of(obj: Any, old: Any = None, **options: Any) -> list[str]:
    return [str(e) for e in validate(obj, old, **options)]


# --- DynamoGraphDeploymentRequest --------------------------------------------------------------


def dgdr(state: str | None = None, **changes: Any) -> DynamoGraphDeploymentRequest:
    spec: Json = {
        "model": "Qwen/Qwen3-0.6B",
        "backend": "vllm",
        "profilingConfig": {
            "profilerImage": "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.6.1",
            "config": {"sla": {"ttft": 200, "itl": 20}},
        },
    }
    spec.update(changes)
    body: Json = {
        "metadata": {"name": "r"},
        "spec": {k: v for k, v in spec.items() if v is not None},
    }
    if state is not None:
        body["status"] = {"state": state}
    return load(DynamoGraphDeploymentRequest, body)


def test_a_complete_request_is_valid() -> None:
    assert errors_of(dgdr()) == []


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"model": None}, ["spec.model: required"]),
        ({"model": ""}, ["spec.model: required"]),
        # No backend is the intent's "auto"; no profilingConfig (or one with no more than
        # the image) is a request profiled from its intent.
        ({"backend": None}, []),
        (
            {"backend": "mocker"},
            [
                'spec.backend: unsupported value "mocker"; supported values: "vllm", "sglang", '
                '"trtllm"'
            ],
        ),
        ({"profilingConfig": None}, []),
        (
            {"profilingConfig": {"config": {"a": 1}}},
            ["spec.profilingConfig.profilerImage: required"],
        ),
        ({"profilingConfig": {"profilerImage": "img"}}, []),
        (
            {"profilingConfig": {"profilerImage": "img", "config": {}}},
            ["spec.profilingConfig.config: required and must not be empty"],
        ),
        (
            {
                "profilingConfig": {
                    "profilerImage": "img",
                    "config": {"a": 1},
                    "configMapRef": {"name": ""},
                }
            },
            ["spec.profilingConfig.configMapRef.name: required"],
        ),
        (
            {
                "profilingConfig": {
                    "profilerImage": "img",
                    "config": {"a": 1},
                    "resources": {"limits": {"memory": "lots"}},
                }
            },
            [
                "spec.profilingConfig.resources.limits.memory: must be a Kubernetes quantity "
                "such as 500m or 10Gi, got 'lots'"
            ],
        ),
    ],
)
def test_request_rules(changes: Json, expected: list[str]) -> None:
    assert errors_of(dgdr(**changes)) == expected


def test_deployment_override_names() -> None:
    errors = errors_of(dgdr(deploymentOverrides={"name": "My DGD", "namespace": "a.b"}))
    assert errors[0].startswith("spec.deploymentOverrides.name: 'My DGD': a lowercase RFC 1123")
    assert errors[1] == "spec.deploymentOverrides.namespace: 'a.b': must not contain dots"


def test_overrides_without_auto_apply_are_a_warning() -> None:
    obj = dgdr(deploymentOverrides={"name": "x"})
    assert errors_of(obj) == []
    assert [str(w) for w in warnings(obj)] == [
        "spec.deploymentOverrides: ignored because autoApply is not true"
    ]
    assert warnings(dgdr(deploymentOverrides={"name": "x"}, autoApply=True)) == []


def test_gpu_discovery_needs_a_cluster_wide_operator() -> None:
    obj = dgdr(enableGpuDiscovery=True)
    assert errors_of(obj) == []
    (error,) = errors_of(obj, namespace_restricted=True)
    assert error.startswith("spec.enableGpuDiscovery: needs a cluster-wide operator")
    assert "num_gpus_per_node" in error


@pytest.mark.parametrize(
    ("legacy", "path"),
    [
        ({"modelName": "m"}, "spec.modelName"),
        ({"sla": {"ttft": 1, "itl": 2}}, "spec.sla"),
        ({"gpu": {"type": "h100"}}, "spec.gpu"),
        ({"online": False}, "spec.online"),
    ],
)
def test_older_shape_fields_are_rejected_with_a_migration_hint(legacy: Json, path: str) -> None:
    (error,) = validate(dgdr(**legacy))
    assert error.path == path
    assert "spec.model" in error.message or "spec.profilingConfig" in error.message


@pytest.mark.parametrize("state", ["Profiling", "Deploying", "Ready", "DeploymentDeleted"])
def test_spec_is_frozen_once_profiling_started(state: str) -> None:
    (error,) = errors_of(dgdr(model="other/model"), dgdr(state))
    assert error == (
        f"spec: is immutable once profiling has started (state {state}); delete the request "
        "and create a new one to change it"
    )
    # Status and metadata changes are fine.
    assert errors_of(dgdr(state), dgdr(state)) == []


@pytest.mark.parametrize("state", [None, "", "Pending", "Failed"])
def test_spec_may_change_before_profiling(state: str | None) -> None:
    assert errors_of(dgdr(model="other/model"), dgdr(state)) == []


# --- DynamoModel -------------------------------------------------------------------------------


def model(**spec: Any) -> DynamoModel:
    body = {"modelName": "acme/lora", "baseModelName": "Qwen/Qwen3-0.6B", **spec}
    return load(DynamoModel, {"metadata": {"name": "m"}, "spec": body})


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({}, []),
        ({"modelType": "base"}, []),
        ({"modelType": "adapter"}, []),
        ({"modelType": "lora", "source": {"uri": "s3://bucket/path"}}, []),
        ({"modelType": "lora", "source": {"uri": "hf://org/model@abc123"}}, []),
        ({"modelType": "lora"}, ["spec.source: required when modelType is lora"]),
        ({"modelType": "lora", "source": {"uri": ""}}, ["spec.source.uri: required"]),
        (
            {"modelType": "lora", "source": {"uri": "https://x/y"}},
            [
                "spec.source.uri: must be s3://<bucket>/<path> or hf://<org>/<model>[@<revision>], "
                "got 'https://x/y'"
            ],
        ),
        (
            {"source": {"uri": "s3://"}},
            [
                "spec.source.uri: must be s3://<bucket>/<path> or hf://<org>/<model>[@<revision>], "
                "got 's3://'"
            ],
        ),
        (
            {"modelType": "LoRA"},
            [
                'spec.modelType: unsupported value "LoRA"; supported values: "base", "lora", '
                '"adapter"'
            ],
        ),
        ({"modelName": ""}, ["spec.modelName: required"]),
        ({"baseModelName": ""}, ["spec.baseModelName: required"]),
    ],
)
def test_model_rules(spec: Json, expected: list[str]) -> None:
    assert errors_of(model(**spec)) == expected


def test_model_type_and_base_model_are_immutable() -> None:
    assert errors_of(model(modelType="base"), model()) == []
    assert errors_of(model(modelType="adapter"), model()) == ["spec.modelType: is immutable"]
    assert errors_of(model(baseModelName="other"), model()) == ["spec.baseModelName: is immutable"]
    assert errors_of(model(modelName="renamed"), model()) == []


# --- DynamoGraphDeploymentScalingAdapter -------------------------------------------------------


def adapter(replicas: int = 1, **ref: str) -> DynamoGraphDeploymentScalingAdapter:
    dgd_ref = {"name": "g", "serviceName": "decode", **ref}
    return load(
        DynamoGraphDeploymentScalingAdapter,
        {"metadata": {"name": "a"}, "spec": {"replicas": replicas, "dgdRef": dgd_ref}},
    )


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        (adapter(), []),
        (adapter(0), []),
        (adapter(-1), ["spec.replicas: must be >= 0"]),
        (adapter(name=""), ["spec.dgdRef.name: required"]),
        (adapter(serviceName=""), ["spec.dgdRef.serviceName: required"]),
    ],
)
def test_adapter_rules(obj: DynamoGraphDeploymentScalingAdapter, expected: list[str]) -> None:
    assert errors_of(obj) == expected
    assert errors_of(obj, adapter()) == expected


def test_adapter_target_must_be_a_valid_graph_name() -> None:
    (error,) = errors_of(adapter(name="My.Graph"))
    assert error.startswith("spec.dgdRef.name: 'My.Graph': a lowercase RFC 1123 subdomain")


def test_validate_rejects_mixed_kinds_and_unknown_types() -> None:
    with pytest.raises(TypeError):
        validate(adapter(), model())
    with pytest.raises(TypeError):
        validate({"kind": "DynamoModel"})
