"""The pure parts of a DGDR's profiling run by its profilingConfig: profile config injection,
the Job and its identity, GPU facts from node labels, and the ConfigMaps made from the output;
the request read as stored (the hub) with its `request_inputs`."""

from __future__ import annotations

from typing import Any

import pytest

from api.conversion import HUB, convert
from api.conversion.request_inputs import RequestInputs, request_inputs
from api.convert import load
from api.v1beta1.graph_deployment_request import DynamoGraphDeploymentRequest
from backends.children import Write
from backends.errors import GenerationError
from backends.generated_graph import additional_config_maps, materialize
from backends.gpu_discovery import hardware_from_nodes, system_of
from backends.profiling_job import profile_config, profiler_app, profiling_children

Json = dict[str, Any]


def dgdr(**spec: Any) -> tuple[DynamoGraphDeploymentRequest, RequestInputs]:
    """A request written as v1alpha1, as stored: its v1beta1 model and its inputs."""
    body: Json = {"model": "m", "backend": "sglang",
                  "profilingConfig": {"profilerImage": "img", "config": {"sla": {"ttft": 1}}}}
    body.update(spec)
    stored = convert({"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeploymentRequest",
                      "metadata": {"name": "r", "namespace": "ns", "uid": "u-1"},
                      "spec": body}, HUB)
    return load(DynamoGraphDeploymentRequest, stored), request_inputs(stored)


def test_config_injection_overwrites_model_and_backend_and_keeps_the_rest() -> None:
    request = dgdr(profilingConfig={"profilerImage": "img", "config": {
        "deployment": {"model": "other", "namespace": "elsewhere"},
        "engine": {"backend": "vllm", "max_context_length": 8},
        "output_dir": "/out", "hardware": {"gpu_model": "mine"}}},
        deploymentOverrides={"workersImage": "w:1"})
    config = profile_config(*request, "ns", {"gpu_model": "H100", "num_gpus_per_node": 8})
    assert config["deployment"] == {"model": "m", "namespace": "elsewhere", "dgd_image": "w:1"}
    assert config["engine"] == {"backend": "sglang", "max_context_length": 8}
    assert config["output_dir"] == "/out"
    # Discovered facts fill only what the user left out.
    assert config["hardware"] == {"gpu_model": "mine", "num_gpus_per_node": 8}


def test_a_section_that_is_not_an_object_is_an_error() -> None:
    request = dgdr(profilingConfig={"profilerImage": "img", "config": {"deployment": "x"}})
    with pytest.raises(GenerationError, match="deployment must be an object, got str"):
        profile_config(*request, "ns")


def test_children_are_identity_then_a_create_only_job() -> None:
    request = dgdr()
    config = profile_config(*request, "ns")
    desired = profiling_children(*request, config, "sla: {}\n", cluster_role="profiling")
    kinds = [(c.obj["kind"], c.write) for c in desired.children]
    assert kinds == [("ServiceAccount", Write.UNOWNED), ("RoleBinding", Write.UNOWNED),
                     ("Job", Write.CREATE_ONLY)]
    binding = desired.children[1]
    assert binding.immutable == ("roleRef",)
    assert binding.obj["roleRef"]["name"] == "profiling"
    job = desired.children[2].obj
    profiler = job["spec"]["template"]["spec"]["containers"][0]
    assert profiler["args"] == ["--profile-config", "sla: {}\n"]
    assert profiler["resources"] == {"requests": {"cpu": "16", "memory": "10Gi"}}
    token = profiler["env"][0]["valueFrom"]["secretKeyRef"]
    assert token == {"name": "hf-token-secret", "key": "HF_TOKEN", "optional": True}
    restricted = profiling_children(*request, config, "", cluster_role="")
    assert [c.obj["kind"] for c in restricted.children] == [
        "ServiceAccount", "Role", "RoleBinding", "Job"]


def test_output_pvc_and_profiler_app() -> None:
    request = dgdr(profilingConfig={"profilerImage": "img", "config": {"a": 1},
                                    "outputPVC": "results"})
    job = profiling_children(*request, {}, "").children[-1].obj
    assert job["spec"]["template"]["spec"]["volumes"][0] == {
        "name": "profiling-output", "persistentVolumeClaim": {"claimName": "results"}}
    assert profiler_app({"sweep": {"use_ai_configurator": True}}) == "aic-profiler"
    assert profiler_app({"sweep": {"use_ai_configurator": "true"}}) == "dynamo-profiler"


def node(name: str, labels: dict[str, str], gpus: str | None = None) -> Json:
    status = {"capacity": {"nvidia.com/gpu": gpus}} if gpus else {}
    return {"metadata": {"name": name, "labels": labels}, "status": status}


def test_hardware_from_the_node_with_most_gpus() -> None:
    nodes = [node("cpu", {}),
             node("a", {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB",
                        "nvidia.com/gpu.count": "4", "nvidia.com/gpu.memory": "81920"}),
             node("h", {"nvidia.com/gpu.product": "NVIDIA-H200"}, gpus="8")]
    assert hardware_from_nodes(nodes) == {"num_gpus_per_node": 8, "gpu_model": "NVIDIA-H200",
                                          "system": "h200_sxm"}
    assert hardware_from_nodes([node("cpu", {})]) is None
    assert system_of("Tesla-T4") == "tesla-t4"


def test_created_graph_and_config_maps_carry_the_request() -> None:
    request, _ = dgdr(deploymentOverrides={
        "name": "prod", "namespace": "serve",
        "labels": {"dgdr.nvidia.com/name": "mine", "t": "x"}})
    generated = {"kind": "DynamoGraphDeployment",
                 "metadata": {"name": "gen", "labels": {"a": "b"}, "annotations": {"k": "v"}},
                 "spec": {"services": {}}}
    graph = materialize(generated, request)
    assert graph["metadata"] == {
        "name": "prod", "namespace": "serve", "annotations": {"k": "v"},
        "labels": {"a": "b", "dgdr.nvidia.com/name": "mine", "dgdr.nvidia.com/namespace": "ns",
                   "nvidia.com/managed-by": "dynamo-operator", "t": "x"}}
    maps = additional_config_maps([{"kind": "ConfigMap", "metadata": {"name": "c"}},
                                   {"kind": "Secret", "metadata": {"name": "s"}}], request)
    assert [(m["metadata"]["name"], m["metadata"]["namespace"]) for m in maps] == [
        ("c", "serve")]
