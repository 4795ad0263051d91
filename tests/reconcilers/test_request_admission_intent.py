"""The DGDR's validating webhook on the intent rules: each rule a 422 naming the field, in
v1beta1 as the user wrote it and in v1alpha1 (through the conversion, v1alpha1's names where
it has a place for the field); the upstream reference's examples admitted; the frozen spec."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from api.conversion import convert
from api.v1alpha1 import DynamoGraphDeploymentRequest
from api.validation.request_versions import check_request
from controller.webhook import AdmissionRequest, AdmissionResponse
from reconcilers.operator.admission import AdmissionPolicy, decide

Json = dict[str, Any]
EXAMPLES = Path(__file__).resolve().parents[2] / "deploy" / "examples" / "v1beta1"
POLICY = AdmissionPolicy()
DGD = "nvidia.com/v1beta1"


def _dgdr(**spec: Any) -> Json:
    return {"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeploymentRequest",
            "metadata": {"name": "q", "namespace": "ns"},
            "spec": {"model": "Qwen/Qwen3-0.6B", **spec}}


def _admit(obj: Json, old: Json | None = None,
           policy: AdmissionPolicy = POLICY) -> AdmissionResponse:
    review = AdmissionRequest(uid="u", operation="UPDATE" if old else "CREATE",
                              resource="dynamographdeploymentrequests", subresource="",
                              name="q", namespace="ns", username="alice", groups=(),
                              object=obj, old_object=old, dry_run=False, raw={})
    return decide(DynamoGraphDeploymentRequest, review, policy)


def _override(**dgd: Any) -> Json:
    return {"dgd": {"apiVersion": DGD, "kind": "DynamoGraphDeployment", **dgd}}


def _container(**fields: Any) -> Json:
    return {"spec": {"components": [{"name": "Frontend", "podTemplate": {"spec": {
        "containers": [{"name": "main", **fields}]}}}]}}


#: (spec changes, the v1beta1 field named, the v1alpha1 field named)
RULES = [
    ({"workload": {"concurrency": 4, "requestRate": 2}},
     "spec.workload.requestRate", "spec.workload.requestRate"),
    ({"sla": {"ttft": 100, "e2eLatency": 900}}, "spec.sla.e2eLatency", "spec.sla.e2eLatency"),
    ({"sla": {"itl": 0}}, "spec.sla.itl", "spec.sla.itl"),
    ({"workload": {"isl": -1}}, "spec.workload.isl", "spec.workload.isl"),
    ({"searchStrategy": "thorough"}, "spec.searchStrategy", "spec.searchStrategy"),
    ({"hardware": {"totalGpus": 0}}, "spec.hardware.totalGpus", "spec.hardware.totalGpus"),
    ({"hardware": {"gpuSku": "H100-SXM5-80GB"}}, "spec.hardware.gpuSku",
     "spec.hardware.gpuSku"),
    ({"runtimeVersionOverride": "v1.4"}, "spec.runtimeVersionOverride",
     "spec.runtimeVersionOverride"),
    ({"image": "registry.local/dynamo-planner:latest"}, "spec.image",
     "spec.profilingConfig.profilerImage"),
    ({"modelCache": {"pvcModelPath": "llama"}}, "spec.modelCache.pvcName",
     "spec.modelCache.pvcName"),
    ({"modelCache": {"pvcName": "w", "pvcMountPath": "rel"}}, "spec.modelCache.pvcMountPath",
     "spec.modelCache.pvcMountPath"),
    ({"overrides": _override(metadata={"name": "Not_A_Name"})},
     "spec.overrides.dgd.metadata.name", "spec.deploymentOverrides.name"),
    ({"overrides": {"dgd": {"apiVersion": "nvidia.com/v2", "kind": "DynamoGraphDeployment"}}},
     "spec.overrides.dgd.apiVersion", "spec.overrides.dgd.apiVersion"),
    ({"overrides": _override(**_container(**{"$patch": {"args": "prepend"}, "args": ["x"]}))},
     "spec.overrides.dgd.spec.components[0].podTemplate.spec.containers[0].$patch",
     "spec.overrides.dgd.spec.components[0].podTemplate.spec.containers[0].$patch"),
    ({"overrides": _override(**_container(**{"$patch": {"args": "append"}, "args": []}))},
     "spec.overrides.dgd.spec.components[0].podTemplate.spec.containers[0].args",
     "spec.overrides.dgd.spec.components[0].podTemplate.spec.containers[0].args"),
]


@pytest.mark.parametrize(("spec", "hub_field", "spoke_field"), RULES)
def test_each_rule_is_a_422_naming_the_field_in_both_versions(
        spec: Json, hub_field: str, spoke_field: str) -> None:
    obj = _dgdr(**spec)
    response = _admit(obj)
    assert (response.allowed, response.code) == (False, 422)
    assert response.message.startswith(f"{hub_field}: "), response.message
    spoke = _admit(convert(obj, "v1alpha1"))
    assert (spoke.allowed, spoke.code) == (False, 422)
    assert spoke.message.startswith(f"{spoke_field}: "), spoke.message


def test_a_valid_intent_is_admitted_in_both_versions() -> None:
    obj = _dgdr(backend="vllm", searchStrategy="thorough",
                workload={"isl": 2000, "osl": 200, "requestRate": 2},
                sla={"e2eLatency": 800}, hardware={"gpuSku": "h100_sxm", "totalGpus": 8},
                modelCache={"pvcName": "weights", "pvcModelPath": "qwen"},
                overrides=_override(**_container(**{"$patch": {"args": "append"},
                                                    "args": ["--router-mode", "kv"]})))
    assert _admit(obj).allowed
    assert _admit(convert(obj, "v1alpha1")).allowed


def test_the_reference_examples_are_admitted() -> None:
    for path in sorted(EXAMPLES.glob("dgdr-intent-*.yaml")):
        obj = yaml.safe_load(path.read_text())
        assert "profilingConfig" not in obj["spec"]
        assert _admit(obj).allowed, path.name
        assert _admit(convert(obj, "v1alpha1")).allowed, path.name


def test_a_namespace_restricted_operator_needs_the_hardware() -> None:
    restricted = AdmissionPolicy(namespace_restricted=True)
    response = _admit(_dgdr(), policy=restricted)
    assert (response.code, response.message.split(":")[0]) == (422, "spec.hardware")
    assert _admit(_dgdr(hardware={"numGpusPerNode": 8}), policy=restricted).allowed


def test_v1alpha1_profiling_config_rules_keep_their_names() -> None:
    obj = {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeploymentRequest",
           "metadata": {"name": "q", "namespace": "ns"},
           "spec": {"model": "m", "backend": "vllm",
                    "profilingConfig": {"config": {"sla": {"ttft": "fast"}}}}}
    response = _admit(obj)
    assert response.code == 422
    assert "spec.profilingConfig.profilerImage: required" in response.message
    assert "spec.profilingConfig.config.sla.ttft: must be a number" in response.message
    # The same object written as v1beta1 names the v1alpha1 field it is about.
    hub = _admit(convert(obj, "v1beta1"))
    assert "spec: profilingConfig.config.sla.ttft (a v1alpha1 field" in hub.message


def test_the_spec_is_frozen_once_profiling_started_but_autoapply_may_follow_ready() -> None:
    old = _dgdr(autoApply=False)
    old["status"] = {"phase": "Profiling"}
    new = copy.deepcopy(old)
    new["spec"]["sla"] = {"ttft": 50}
    response = _admit(new, old)
    assert response.code == 422 and response.message.startswith("spec: is immutable")
    assert response.cause == "immutable_field_changed"
    assert _admit(_dgdr(searchStrategy="thorough")).cause == "invalid_config"
    old["status"] = {"phase": "Ready"}
    switched = copy.deepcopy(old)
    switched["spec"]["autoApply"] = True
    assert _admit(switched, old).allowed
    assert not _admit(new, old).allowed


def test_an_unversioned_image_needs_the_runtime_version() -> None:
    obj = _dgdr(image="registry.local/dynamo-planner@sha256:0123")
    assert _admit(obj).code == 422
    assert _admit(_dgdr(image="registry.local/dynamo-planner@sha256:0123",
                        runtimeVersionOverride="1.4.0")).allowed
    assert _admit(_dgdr(image="nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.4.0")).allowed


def test_the_controller_does_not_hold_an_admitted_image_against_a_request() -> None:
    obj = _dgdr(image="registry.local/dynamo-planner:latest")
    assert [e.path for e in check_request(obj).errors] == ["spec.image"]
    assert check_request(obj, new=False).errors == []
