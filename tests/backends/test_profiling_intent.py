"""The pure parts of an intent-based (v1beta1) DGDR's profiling run: the spec handed to the
profiler (defaults, discovered hardware), the Job built from the intent fields (image, args,
env, model cache, overrides.profilingJob), and the v1beta1 graph made from the output with
overrides.dgd in either shape."""

from __future__ import annotations

import json
from typing import Any

import pytest

from api.convert import load
from api.v1beta1.graph_deployment_request import DynamoGraphDeploymentRequest
from backends.children import Write
from backends.errors import GenerationError
from backends.generated_graph import materialize
from backends.profiling_intent import (
    default_profiler_image,
    discovered_hardware,
    effective_spec,
    intent_profiling_children,
    manual_hardware,
)

Json = dict[str, Any]


def dgdr(**spec: Any) -> DynamoGraphDeploymentRequest:
    return load(DynamoGraphDeploymentRequest, {
        "metadata": {"name": "q", "namespace": "ns", "uid": "u-1"},
        "spec": {"model": "Qwen/Qwen3-0.6B", **spec}})


def job_of(request: DynamoGraphDeploymentRequest, discovered: Json | None = None) -> Json:
    children = intent_profiling_children(request, effective_spec(request, discovered),
                                         cluster_role="dgdr-profiling")
    [job] = [c for c in children.children if c.obj["kind"] == "Job"]
    assert job.write is Write.CREATE_ONLY
    return job.obj


def profiler(job: Json) -> Json:
    containers: list[Json] = job["spec"]["template"]["spec"]["containers"]
    return containers[0]


def node(name: str, gpus: int, product: str = "NVIDIA-H100-80GB-HBM3") -> Json:
    return {"metadata": {"name": name, "labels": {
        "nvidia.com/gpu.product": product, "nvidia.com/gpu.count": str(gpus),
        "nvidia.com/gpu.memory": "81559"}}}


def test_defaults_fill_what_the_user_left_out() -> None:
    spec = effective_spec(dgdr())
    assert spec == {"model": "Qwen/Qwen3-0.6B", "backend": "auto", "searchStrategy": "rapid",
                    "autoApply": True, "workload": {"isl": 4000, "osl": 1000},
                    "sla": {"ttft": 2000, "itl": 30}}


def test_the_users_values_win_and_e2e_latency_replaces_ttft_and_itl() -> None:
    spec = effective_spec(dgdr(backend="sglang", autoApply=False, workload={"isl": 10},
                               sla={"e2eLatency": 500},
                               modelCache={"pvcName": "weights"}))
    assert (spec["backend"], spec["autoApply"]) == ("sglang", False)
    assert spec["workload"] == {"isl": 10, "osl": 1000}
    assert spec["sla"] == {"e2eLatency": 500}
    assert spec["modelCache"] == {"pvcName": "weights", "pvcMountPath": "/opt/model-cache"}


def test_hardware_is_discovered_where_left_out_and_the_budget_capped() -> None:
    nodes = [node(f"gpu-{i}", 8) for i in range(5)] + [{"metadata": {"name": "cpu"}}]
    found = discovered_hardware(nodes)
    assert found == {"numGpusPerNode": 8, "gpuSku": "h100_sxm", "vramMb": 81559,
                     "totalGpus": 32}
    spec = effective_spec(dgdr(hardware={"totalGpus": 4}), found)
    assert spec["hardware"] == {**found, "totalGpus": 4}
    assert discovered_hardware([{"metadata": {"name": "cpu"}}]) is None
    assert not manual_hardware(dgdr(hardware={"totalGpus": 4}))
    assert manual_hardware(dgdr(hardware={"gpuSku": "l40s"}))


def test_the_job_runs_the_profiler_on_the_intent() -> None:
    job = job_of(dgdr(image="nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.4.0"),
                 {"numGpusPerNode": 8})
    assert job["metadata"]["name"] == "profile-q"
    assert job["metadata"]["labels"] == {"app": "dynamo-profiler", "dgdr": "q",
                                         "nvidia.com/managed-by": "dynamo-operator"}
    container = profiler(job)
    assert container["image"] == "nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.4.0"
    assert container["command"] == ["python", "-m", "dynamo.profiler"]
    args = container["args"]
    assert args[0] == "--config" and args[2:] == ["--output-dir", "/data"]
    handed = json.loads(args[1])
    assert handed["model"] == "Qwen/Qwen3-0.6B" and handed["hardware"] == {"numGpusPerNode": 8}
    assert container["workingDir"] == "/workspace"
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert (env["DGDR_NAME"], env["DGDR_NAMESPACE"], env["DGDR_UID"]) == ("q", "ns", "u-1")
    pod = job["spec"]["template"]["spec"]
    assert pod["volumes"] == [{"name": "profiling-output", "emptyDir": {}}]
    copier = pod["containers"][1]
    assert copier["name"] == "output-copier"
    assert "--from-file=/data/final_config.yaml" in copier["command"][2]
    assert profiler(job_of(dgdr()))["image"] == default_profiler_image("1.4.0")


def test_without_an_image_the_profiler_runs_the_operators_dynamo_release() -> None:
    request = dgdr()
    children = intent_profiling_children(request, effective_spec(request, None),
                                         dynamo_version="1.5.2")
    [job] = [c.obj for c in children.children if c.obj["kind"] == "Job"]
    assert profiler(job)["image"] == "nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.5.2"


def test_the_model_cache_is_mounted_read_only() -> None:
    job = job_of(dgdr(modelCache={"pvcName": "weights", "pvcModelPath": "qwen",
                                  "pvcMountPath": "/models"}))
    pod = job["spec"]["template"]["spec"]
    assert {"name": "model-cache", "persistentVolumeClaim": {
        "claimName": "weights", "readOnly": True}} in pod["volumes"]
    assert {"name": "model-cache", "mountPath": "/models",
            "readOnly": True} in profiler(job)["volumeMounts"]


def test_profiling_job_overrides_merge_by_name() -> None:
    job = job_of(dgdr(overrides={"profilingJob": {
        "backoffLimit": 0,
        "template": {"spec": {
            "tolerations": [{"key": "gpu", "operator": "Exists"}],
            "containers": [{"name": "profiler",
                            "env": [{"name": "DGDR_NAME", "value": "x"},
                                    {"name": "EXTRA", "value": "1"}]}]}}}}))
    assert job["spec"]["backoffLimit"] == 0
    pod = job["spec"]["template"]["spec"]
    assert pod["tolerations"] == [{"key": "gpu", "operator": "Exists"}]
    assert [c["name"] for c in pod["containers"]] == ["profiler", "output-copier"]
    env = {e["name"]: e.get("value") for e in profiler(job)["env"]}
    assert (env["DGDR_NAME"], env["EXTRA"]) == ("x", "1")
    assert profiler(job)["command"] == ["python", "-m", "dynamo.profiler"]


def generated() -> Json:
    """What the profiler templates give: v1alpha1, Frontend/decode/prefill."""
    def worker(role: str) -> Json:
        return {"componentType": "worker", "subComponentType": role, "replicas": 1,
                "extraPodSpec": {"mainContainer": {"image": "rt", "args": ["--model", "m"]}}}
    return {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment",
            "metadata": {"name": "sglang-disagg", "labels": {"from": "profiler"}},
            "spec": {"backendFramework": "sglang", "services": {
                "Frontend": {"componentType": "frontend", "replicas": 1, "extraPodSpec": {
                    "mainContainer": {"image": "rt", "args": ["--http-port", "8000"]}}},
                "prefill": worker("prefill"), "decode": worker("decode")}}}


def component(graph: Json, name: str) -> Json:
    found: Json = next(c for c in graph["spec"]["components"] if c["name"] == name)
    return found


def main(graph: Json, name: str) -> Json:
    found: Json = next(c for c in component(graph, name)["podTemplate"]["spec"]["containers"]
                       if c["name"] == "main")
    return found


def test_the_graph_is_v1beta1_named_and_labelled() -> None:
    graph = materialize(generated(), dgdr())
    assert (graph["apiVersion"], graph["metadata"]["name"],
            graph["metadata"]["namespace"]) == ("nvidia.com/v1beta1", "sglang-disagg", "ns")
    assert graph["metadata"]["labels"] == {
        "from": "profiler", "dgdr.nvidia.com/name": "q", "dgdr.nvidia.com/namespace": "ns",
        "nvidia.com/managed-by": "dynamo-operator"}
    assert sorted(c["name"] for c in graph["spec"]["components"]) == ["Frontend", "decode",
                                                                      "prefill"]


def test_a_v1beta1_override_merges_by_name_and_appends_args_on_request() -> None:
    request = dgdr(features={"kvRouter": {"enabled": True}}, runtimeVersionOverride="1.4.0",
                   overrides={"dgd": {
                       "apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment",
                       "metadata": {"name": "prod", "labels": {"team": "a"}},
                       "spec": {"components": [
                           {"name": "decode", "replicas": 3, "podTemplate": {"spec": {
                               "containers": [{"name": "main", "env": [
                                   {"name": "TRITON_PTXAS_PATH", "value": "/p"}]}]}}},
                           {"name": "Frontend", "podTemplate": {"spec": {"containers": [
                               {"name": "main", "$patch": {"args": "append"},
                                "args": ["--router-mode", "kv"]}]}}},
                           {"name": "prefill", "podTemplate": {"spec": {"containers": [
                               {"name": "main", "args": ["--only"]}]}}}]}}})
    graph = materialize(generated(), request)
    assert graph["metadata"]["name"] == "prod"
    assert graph["metadata"]["labels"]["team"] == "a"
    assert component(graph, "decode")["replicas"] == 3
    assert {"name": "TRITON_PTXAS_PATH", "value": "/p"} in main(graph, "decode")["env"]
    assert main(graph, "Frontend")["args"] == ["--http-port", "8000", "--router-mode", "kv"]
    assert "$patch" not in main(graph, "Frontend")
    assert main(graph, "prefill")["args"] == ["--only"]  # v1beta1 args are atomic
    assert {"name": "DYN_ROUTER_MODE", "value": "kv"} in main(graph, "Frontend")["env"]
    assert {c.get("runtimeVersionOverride") for c in graph["spec"]["components"]} == {"1.4.0"}


def test_a_v1alpha1_override_merges_services_and_appends_worker_args() -> None:
    request = dgdr(overrides={"dgd": {
        "apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment",
        "spec": {"services": {"decode": {
            "replicas": 2, "extraPodSpec": {"mainContainer": {"args": ["--extra"]}}}}}}})
    graph = materialize(generated(), request)
    assert component(graph, "decode")["replicas"] == 2
    assert main(graph, "decode")["args"] == ["--model", "m", "--extra"]


@pytest.mark.parametrize("override", [
    {"apiVersion": "nvidia.com/v1beta1", "spec": {"components": [{"name": "worker"}]}},
    {"apiVersion": "nvidia.com/v1alpha1", "spec": {"services": {"worker": {"replicas": 1}}}},
])
def test_an_override_cannot_add_topology(override: Json) -> None:
    request = dgdr(overrides={"dgd": {"kind": "DynamoGraphDeployment", **override}})
    with pytest.raises(GenerationError, match="'worker'"):
        materialize(generated(), request)


def test_trust_remote_code_reaches_every_worker_after_the_override() -> None:
    request = dgdr(overrides={"trustRemoteCode": True, "dgd": {
        "apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment",
        "spec": {"components": [{"name": "decode", "podTemplate": {"spec": {"containers": [
            {"name": "main", "args": ["--own"]}]}}}]}}})
    graph = materialize(generated(), request)
    assert main(graph, "decode")["args"] == ["--own", "--trust-remote-code"]
    assert main(graph, "prefill")["args"] == ["--model", "m", "--trust-remote-code"]
    assert "--trust-remote-code" not in main(graph, "Frontend")["args"]
