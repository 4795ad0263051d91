"""The rules of GPU memory service and failover (issue #29 item 3), as the original's webhook
states them, in both versions: a v1beta1 graph is refused naming its `experimental` field, a
v1alpha1 one naming the service's field."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from api.errors import InvalidObject
from api.hub_errors import validate_stored
from api.v1alpha1 import DynamoComponentDeployment, DynamoGraphDeployment

Json = dict[str, Any]
CONTAINER = {"nvidia.com/dynamo-kube-discovery-mode": "container"}


def beta(experimental: Json, *, component: Json | None = None,
         annotations: dict[str, str] | None = None, backend: str = "vllm") -> Json:
    """A v1beta1 graph of a frontend and a worker `w` with these preview features."""
    worker: Json = {
        "name": "w", "type": "worker",
        "podTemplate": {"spec": {"containers": [{
            "name": "main", "image": "img:1", "command": ["python3"],
            "args": ["-m", "dynamo.vllm"],
            "resources": {"limits": {"nvidia.com/gpu": "2"}}}]}},
        "experimental": experimental, **(component or {})}
    meta: Json = {"name": "g", "namespace": "team"}
    if annotations is not None:
        meta["annotations"] = annotations
    return {"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment",
            "metadata": meta,
            "spec": {"backendFramework": backend,
                     "components": [{"name": "f", "type": "frontend"}, worker]}}


def alpha(service: Json, *, annotations: dict[str, str] | None = None) -> Json:
    """A v1alpha1 graph with one worker service `w` (2 GPUs) plus `service`'s fields."""
    meta: Json = {"name": "g", "namespace": "team"}
    if annotations is not None:
        meta["annotations"] = annotations
    return {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment",
            "metadata": meta,
            "spec": {"backendFramework": "vllm", "services": {"w": {
                "componentType": "worker", "resources": {"limits": {"gpu": "2"}},
                "extraPodSpec": {"mainContainer": {"image": "img:1"}}, **service}}}}


def refusal(obj: Json, kind: Any = DynamoGraphDeployment) -> str:
    with pytest.raises(InvalidObject) as refused:
        validate_stored(kind, obj)
    return str(refused.value)


GMS = {"gpuMemoryService": {"mode": "IntraPod"}}
FAILOVER = {"gpuMemoryService": {"mode": "IntraPod"}, "failover": {"mode": "IntraPod"}}


def test_gms_and_failover_on_a_gpu_worker_are_valid_in_both_versions() -> None:
    validate_stored(DynamoGraphDeployment, beta(GMS))
    validate_stored(DynamoGraphDeployment, beta(FAILOVER, annotations=CONTAINER))
    validate_stored(DynamoGraphDeployment, alpha({"gpuMemoryService": {"enabled": True}}))
    validate_stored(DynamoGraphDeployment, alpha(
        {"gpuMemoryService": {"enabled": True, "mode": "intraPod"},
         "failover": {"enabled": True, "numShadows": 1}}, annotations=CONTAINER))


REFUSED_BETA = {
    "failover without GMS": (
        beta({"failover": {"mode": "IntraPod"}}, annotations=CONTAINER),
        "spec.components[1].experimental.failover: Forbidden: gpuMemoryService is required"),
    "modes differ": (
        beta({"gpuMemoryService": {"mode": "IntraPod"}, "failover": {"mode": "InterPod"}}),
        "spec.components[1].experimental.failover.mode: Invalid value: must match "
        "gpuMemoryService.mode"),
    "two shadows": (
        beta({**FAILOVER, "failover": {"mode": "IntraPod", "numShadows": 2}},
             annotations=CONTAINER),
        "spec.components[1].experimental.failover.numShadows: Invalid value: 2: should be "
        "less than or equal to 1"),
    "pod discovery": (
        beta(FAILOVER),
        'metadata.annotations[nvidia.com/dynamo-kube-discovery-mode]: Invalid value: "": '
        'must be "container" when intra-pod failover is configured'),
    "unknown discovery mode": (
        beta(GMS, annotations={"nvidia.com/dynamo-kube-discovery-mode": "node"}),
        'metadata.annotations[nvidia.com/dynamo-kube-discovery-mode]: Unsupported value: '
        '"node"'),
    "no GPU": (
        beta(GMS, component={"podTemplate": {"spec": {"containers": [
            {"name": "main", "image": "img:1"}]}}}),
        "spec.components[1].experimental.gpuMemoryService: Forbidden: GPU memory service "
        "requires podTemplate.spec.containers[main].resources.limits.nvidia.com/gpu >= 1"),
    "not a worker": (
        beta(GMS, component={"type": "planner"}),
        "spec.components[1].experimental.gpuMemoryService: Forbidden: GPU memory service is "
        "only supported for worker, prefill, or decode components"),
    "bad client name": (
        beta({"gpuMemoryService": {"extraClientContainers": ["Bad_Name"]}}),
        'spec.components[1].experimental.gpuMemoryService.extraClientContainers[0]: Invalid '
        'value: "Bad_Name": is not a valid container name'),
    "client containers inter-pod": (
        beta({"gpuMemoryService": {"mode": "InterPod", "extraClientContainers": ["m"]}}),
        "spec.components[1].experimental.gpuMemoryService.extraClientContainers: Forbidden: "
        "extraClientContainers is only supported with the intra-pod mode"),
    "client pods": (
        beta({"gpuMemoryService": {"extraClientPods": [{"name": "c", "podTemplate": {}}]}}),
        "spec.components[1].experimental.gpuMemoryService.extraClientPods: Forbidden: "
        "extraClientPods is reserved for inter-pod GMS and is not implemented yet"),
    "inter-pod not vllm": (
        beta({"gpuMemoryService": {"mode": "InterPod"}}, backend="sglang"),
        "spec.components[1].experimental.gpuMemoryService.mode: Invalid value: the inter-pod "
        "GMS layout is currently supported only for vLLM (detected backend: sglang)"),
    "with a checkpoint": (
        beta({**GMS, "checkpoint": {"enabled": True}}),
        "spec.components[1].experimental.checkpoint: Forbidden: GMS + Snapshot is temporarily "
        "disabled"),
}


@pytest.mark.parametrize("case", sorted(REFUSED_BETA))
def test_v1beta1_refusals_name_the_experimental_field(case: str) -> None:
    obj, message = REFUSED_BETA[case]
    assert message in refusal(obj)


def test_v1alpha1_refusals_name_the_service_field() -> None:
    no_gms = alpha({"failover": {"enabled": True}}, annotations=CONTAINER)
    assert ("spec.services.w.failover: Forbidden: gpuMemoryService is required"
            in refusal(no_gms))
    off = alpha({"gpuMemoryService": {"enabled": False}, "failover": {"enabled": True}},
                annotations=CONTAINER)
    assert "spec.services.w.failover: Forbidden" in refusal(off)
    shared = alpha({"gpuMemoryService": {"enabled": True, "mode": "intraPod"},
                    "failover": {"enabled": True}})
    assert "metadata.annotations[nvidia.com/dynamo-kube-discovery-mode]" in refusal(shared)


def test_switched_off_features_are_not_checked_but_client_names_are() -> None:
    validate_stored(DynamoGraphDeployment, alpha(
        {"gpuMemoryService": {"enabled": False, "mode": "interPod",
                              "extraClientPods": [{"name": "c", "podTemplate": {}}]},
         "failover": {"enabled": False, "mode": "interPod", "numShadows": 3}}))
    bad = alpha({"gpuMemoryService": {"enabled": False, "extraClientContainers": ["A"]}})
    assert "spec.services.w.gpuMemoryService.extraClientContainers[0]" in refusal(bad)


def test_a_component_deployment_is_checked_alike() -> None:
    dcd = {"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoComponentDeployment",
           "metadata": {"name": "d", "namespace": "team"},
           "spec": {"type": "frontend", "experimental": copy.deepcopy(GMS)}}
    assert ("spec.experimental.gpuMemoryService: Forbidden: GPU memory service is only "
            "supported" in refusal(dcd, DynamoComponentDeployment))
