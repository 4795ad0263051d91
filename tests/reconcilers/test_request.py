"""The DGDR controller against the local API server, the profiler's part played by the test:
validation, the profiling Job and its identity, reading the results back, and the way to Ready
without autoApply (spec/controllers.md §8.3-§8.7)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from operator_harness import (
    Operator,
    condition,
    get_or_none,
    running_operator,
    wait_for,
)
from request_support import (
    EVENTS,
    NODES,
    NS,
    Json,
    extra_config_map,
    failed_pod,
    finish_job,
    generated_graph,
    profile_config_of,
    reasons_of,
    reasons_once,
    request,
    request_client,
    stream,
    write_output,
)

from controller.client import KubeClient
from hack.localcluster.server import LocalCluster
from hack.our_crds import DEPLOYMENT_REQUESTS
from reconcilers import request as dgdr_controller
from reconcilers.machinery.resources import (
    CONFIG_MAPS,
    JOBS,
    ROLE_BINDINGS,
    ROLES,
    SERVICE_ACCOUNTS,
)
from reconcilers.machinery.resources import (
    DEPLOYMENT_REQUESTS as HUB_REQUESTS,
)


@pytest.fixture
async def kube(cluster: LocalCluster, kubeconfig: Path) -> AsyncIterator[KubeClient]:
    async with request_client(kubeconfig, "*dynamographdeploy*.yaml") as client:
        yield client


@pytest.fixture
async def operator(kube: KubeClient, kubeconfig: Path) -> AsyncIterator[Operator]:
    async with running_operator(kubeconfig, [dgdr_controller.register]) as op:
        op.ctx.dgdr_profiling_cluster_role_name = "dynamo-dgdr-profiling"
        yield op


async def in_state(kube: KubeClient, name: str, state: str) -> Json:
    return await wait_for(kube, DEPLOYMENT_REQUESTS, NS, name,
                          lambda o: (o.get("status") or {}).get("state") == state)


async def test_happy_path_without_auto_apply(kube: KubeClient, operator: Operator) -> None:
    created = await kube.create(DEPLOYMENT_REQUESTS, request("r"))
    obj = await in_state(kube, "r", "Profiling")
    assert obj["status"]["observedGeneration"] == obj["metadata"]["generation"]
    # The status is written in v1beta1; v1alpha1 reads what the conversion maps.
    stored = await kube.get(HUB_REQUESTS, NS, "r")
    assert (stored["status"]["phase"], stored["status"]["profilingPhase"],
            stored["status"]["profilingJobName"]) == ("Profiling", "Initializing", "profile-r")
    assert "nvidia.com/dgdr-status" not in stored["metadata"].get("annotations", {})
    assert "nvidia.com/finalizer" in obj["metadata"]["finalizers"]
    profiling = condition(obj, "Profiling")
    assert (profiling["status"], profiling["reason"], profiling["message"]) == (
        "False", "ProfilingRunning", "Profiling is in progress")
    assert condition(obj, "Validation")["status"] == "True"

    job = await wait_for(kube, JOBS, NS, "profile-r")
    assert job["metadata"]["labels"] == {"app": "dynamo-profiler", "dgdr": "r",
                                         "nvidia.com/managed-by": "dynamo-operator"}
    owner = job["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["uid"], owner["controller"]) == (
        "DynamoGraphDeploymentRequest", created["metadata"]["uid"], True)
    assert job["spec"]["backoffLimit"] == 3
    pod = job["spec"]["template"]["spec"]
    assert [c["name"] for c in pod["containers"]] == ["profiler", "output-copier"]
    assert pod["serviceAccountName"] == "dgdr-profiling-job"
    assert pod["restartPolicy"] == "Never"
    assert pod["securityContext"] == {"runAsNonRoot": True, "runAsUser": 1000,
                                      "runAsGroup": 1000, "fsGroup": 1000}
    assert pod["volumes"] == [{"name": "profiling-output", "emptyDir": {}}]
    env = {e["name"]: e.get("value") for e in pod["containers"][0]["env"]}
    assert env["DGDR_NAME"] == "r" and env["DGDR_UID"] == created["metadata"]["uid"]
    config = profile_config_of(job)
    assert config["deployment"] == {"namespace": NS, "model": "Qwen/Qwen3-0.6B"}
    assert config["engine"] == {"backend": "vllm"}
    assert config["output_dir"] == "/data"
    assert config["sla"] == {"ttft": 100, "itl": 1500}
    # The copier's identity, bound to the profiling ClusterRole in cluster-wide mode.
    assert await get_or_none(kube, SERVICE_ACCOUNTS, NS, "dgdr-profiling-job") is not None
    binding = await wait_for(kube, ROLE_BINDINGS, NS, "dgdr-profiling-job-binding")
    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io",
                                  "kind": "ClusterRole", "name": "dynamo-dgdr-profiling"}
    assert "ownerReferences" not in binding["metadata"]

    await write_output(kube, "r", {
        "config_with_planner.yaml": stream(generated_graph(), extra_config_map()),
        "profiler_status.yaml": "status: success\n"})
    await finish_job(kube, "r")
    obj = await in_state(kube, "r", "Ready")
    status = obj["status"]
    assert status["generatedDeployment"]["kind"] == "DynamoGraphDeployment"
    assert status["generatedDeployment"]["metadata"]["labels"]["dgdr.nvidia.com/name"] == "r"
    assert status["generatedDeployment"]["apiVersion"] == "nvidia.com/v1beta1"
    assert (condition(obj, "Profiling")["status"], condition(obj, "Profiling")["reason"]) == (
        "True", "ProfilingCompleted")
    generated = condition(obj, "SpecGenerated")
    assert (generated["status"], generated["reason"], generated["message"]) == (
        "True", "SpecGenerated",
        "Generated spec is available in status.profilingResults.selectedConfig")
    assert "planner-profile-data" in obj["metadata"]["annotations"][
        "dgdr.nvidia.com/additional-resources"]
    extra = await wait_for(kube, CONFIG_MAPS, NS, "planner-profile-data")
    assert extra["metadata"]["labels"]["dgdr.nvidia.com/namespace"] == NS
    assert "ownerReferences" not in extra["metadata"]
    reasons = [r for r in await reasons_of(kube, "r") if not r.startswith("Create")]
    assert reasons == ["Initialized", "ProfilingJobCreated", "SpecGenerated"]
    assert "status" not in status.get("deployment", {})


async def test_ai_configurator_label_restricted_rbac_and_config_map_ref(
        kube: KubeClient, operator: Operator) -> None:
    operator.ctx.namespace = NS
    await kube.create(CONFIG_MAPS, {"apiVersion": "v1", "kind": "ConfigMap",
                                    "metadata": {"name": "base", "namespace": NS},
                                    "data": {"agg.yaml": "kind: DynamoGraphDeployment\n"}})
    await kube.create(DEPLOYMENT_REQUESTS, request(
        "aic", profilingConfig={
            "profilerImage": "img", "configMapRef": {"name": "base", "key": "agg.yaml"},
            "config": {"sweep": {"use_ai_configurator": True}}},
        deploymentOverrides={"workersImage": "my/worker:1"}))
    await in_state(kube, "aic", "Profiling")
    job = await wait_for(kube, JOBS, NS, "profile-aic")
    assert job["metadata"]["labels"]["app"] == "aic-profiler"
    assert "AIC profiling job created" in [
        e["message"] for e in (await kube.list(EVENTS, NS))["items"]]
    pod = job["spec"]["template"]["spec"]
    assert pod["volumes"][1] == {"name": "profiling-config", "configMap": {
        "name": "base", "items": [{"key": "agg.yaml", "path": "disagg.yaml"}]}}
    config = profile_config_of(job)
    assert config["engine"]["config"] == "/config/disagg.yaml"
    assert config["deployment"]["dgd_image"] == "my/worker:1"
    # Namespace-restricted: a Role of the namespace, not the cluster role.
    binding = await wait_for(kube, ROLE_BINDINGS, NS, "dgdr-profiling-job-binding")
    assert binding["roleRef"]["kind"] == "Role"
    role = await wait_for(kube, ROLES, NS, "dgdr-profiling-job")
    assert {"configmaps"} <= {r for rule in role["rules"] for r in rule["resources"]}


@pytest.mark.parametrize(("spec", "message"), [
    ({"profilingConfig": {"profilerImage": "img", "config": {"sla": {}},
                          "configMapRef": {"name": "nope"}}},
     f"ConfigMap nope not found in namespace {NS}"),
    ({"profilingConfig": {"profilerImage": "img", "config": {"sla": {}},
                          "configMapRef": {"name": "base"}}},
     "key disagg.yaml not found in ConfigMap base"),
    ({"deploymentOverrides": {"name": "Not_A_Name"}}, "spec.deploymentOverrides.name"),
])
async def test_invalid_request_fails(kube: KubeClient, operator: Operator, spec: Json,
                                     message: str) -> None:
    await kube.create(CONFIG_MAPS, {"apiVersion": "v1", "kind": "ConfigMap",
                                    "metadata": {"name": "base", "namespace": NS},
                                    "data": {"other.yaml": ""}})
    await kube.create(DEPLOYMENT_REQUESTS, request("bad", **spec))
    obj = await in_state(kube, "bad", "Failed")
    validation = condition(obj, "Validation")
    assert (validation["status"], validation["reason"]) == ("False", "ValidationFailed")
    assert message in validation["message"]
    assert "ValidationFailed" in await reasons_once(kube, "bad", "ValidationFailed")
    assert await get_or_none(kube, JOBS, NS, "profile-bad") is None


async def test_gpu_discovery_fills_hardware_and_needs_cluster_scope(
        kube: KubeClient, operator: Operator) -> None:
    await kube.create(NODES, {"apiVersion": "v1", "kind": "Node", "metadata": {
        "name": "gpu-0", "labels": {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
                                    "nvidia.com/gpu.count": "8",
                                    "nvidia.com/gpu.memory": "81559"}}})
    await kube.create(DEPLOYMENT_REQUESTS, request(
        "gpu", enableGpuDiscovery=True,
        profilingConfig={"profilerImage": "img",
                         "config": {"hardware": {"num_gpus_per_node": 4}}}))
    await in_state(kube, "gpu", "Profiling")
    job = await wait_for(kube, JOBS, NS, "profile-gpu")
    assert "--enable-gpu-discovery" in job["spec"]["template"]["spec"]["containers"][0]["args"]
    assert profile_config_of(job)["hardware"] == {
        "num_gpus_per_node": 4, "gpu_model": "NVIDIA-H100-80GB-HBM3", "system": "h100_sxm",
        "gpu_vram_mib": 81559}
    operator.ctx.namespace = NS
    await kube.create(DEPLOYMENT_REQUESTS, request("gpu2", enableGpuDiscovery=True))
    obj = await in_state(kube, "gpu2", "Failed")
    assert "namespace-restricted" in condition(obj, "Validation")["message"]


async def test_stale_output_is_deleted_before_the_job(kube: KubeClient,
                                                      operator: Operator) -> None:
    await write_output(kube, "s", {"config_with_planner.yaml": stream(generated_graph())})
    await kube.create(DEPLOYMENT_REQUESTS, request("s"))
    await in_state(kube, "s", "Profiling")
    assert await get_or_none(kube, CONFIG_MAPS, NS, "dgdr-output-s") is None


async def test_job_failure_names_pod_container_exit_code_and_message(
        kube: KubeClient, operator: Operator) -> None:
    await kube.create(DEPLOYMENT_REQUESTS, request("f"))
    await in_state(kube, "f", "Profiling")
    job = await wait_for(kube, JOBS, NS, "profile-f")
    await failed_pod(kube, job, "profile-f-abcde")
    await write_output(kube, "f", {"profiler_status.yaml": (
        "status: failed\nmessage: no configuration meets TTFT 1 ms\n")})
    await finish_job(kube, "f", ok=False)
    obj = await in_state(kube, "f", "Failed")
    profiling = condition(obj, "Profiling")
    assert (profiling["status"], profiling["reason"]) == ("False", "ProfilingFailed")
    assert profiling["message"] == (
        "profiling job failed: Job has reached the specified backoff limit. Details: Pod: "
        "profile-f-abcde, Container: profiler, ExitCode: 1, Reason: Error, Message: no "
        "configuration meets TTFT 1 ms")
    assert "ProfilingCheckFailed" in await reasons_once(kube, "f", "ProfilingCheckFailed")


async def test_job_deleted_while_profiling_fails(kube: KubeClient, operator: Operator) -> None:
    await kube.create(DEPLOYMENT_REQUESTS, request("gone"))
    await in_state(kube, "gone", "Profiling")
    await kube.delete(JOBS, NS, "profile-gone")
    obj = await in_state(kube, "gone", "Failed")
    assert "profile-gone not found" in condition(obj, "Profiling")["message"]


@pytest.mark.parametrize(("data", "message"), [
    (None, "output ConfigMap dgdr-output-o not found - profiling may not have completed yet"),
    ({"other": ""}, "key config_with_planner.yaml not found in ConfigMap dgdr-output-o"),
    ({"config_with_planner.yaml": stream(extra_config_map())},
     "no DynamoGraphDeployment found in YAML content"),
    ({"config_with_planner.yaml": stream(generated_graph(), {
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "big"},
        "data": {"x": "y" * 260_000}})}, "exceeds maximum annotation size"),
])
async def test_unusable_output_fails_generation(kube: KubeClient, operator: Operator,
                                                data: dict[str, str] | None,
                                                message: str) -> None:
    await kube.create(DEPLOYMENT_REQUESTS, request("o"))
    await in_state(kube, "o", "Profiling")
    if data is not None:
        await write_output(kube, "o", data)
    await finish_job(kube, "o")
    obj = await in_state(kube, "o", "Failed")
    assert condition(obj, "Profiling")["reason"] == "ProfilingCompleted"
    generated = condition(obj, "SpecGenerated")
    assert (generated["status"], generated["reason"]) == ("False", "GenerationFailed")
    assert message in generated["message"]
    assert "GenerationFailed" in await reasons_once(kube, "o", "GenerationFailed")


async def test_use_mocker_reads_the_mocker_graph(kube: KubeClient, operator: Operator) -> None:
    await kube.create(DEPLOYMENT_REQUESTS, request("m", useMocker=True))
    await in_state(kube, "m", "Profiling")
    await write_output(kube, "m", {
        "config_with_planner.yaml": stream(generated_graph("real")),
        "mocker_config_with_planner.yaml": stream(generated_graph("mocker"))})
    await finish_job(kube, "m")
    obj = await in_state(kube, "m", "Ready")
    assert obj["status"]["generatedDeployment"]["metadata"]["name"] == "mocker"


async def test_job_creation_refused_fails(kube: KubeClient, operator: Operator) -> None:
    # A request name of 250 characters is valid; "profile-" + it is too long for a Job.
    name = "x" * 250
    await kube.create(DEPLOYMENT_REQUESTS, request(name))
    obj = await in_state(kube, name, "Failed")
    profiling = condition(obj, "Profiling")
    assert (profiling["status"], profiling["reason"]) == ("False", "JobCreationFailed")
    assert "profile-" + name in profiling["message"]


async def test_gpu_discovery_without_gpu_nodes(kube: KubeClient, operator: Operator) -> None:
    await kube.create(DEPLOYMENT_REQUESTS, request("none", enableGpuDiscovery=True))
    obj = await in_state(kube, "none", "Failed")
    profiling = condition(obj, "Profiling")
    assert profiling["reason"] == "JobCreationFailed"
    assert "GPU discovery found no node" in profiling["message"]
    # Engine sizes given by hand are enough to profile with.
    sizes = {"min_num_gpus_per_engine": 1, "max_num_gpus_per_engine": 4}
    await kube.create(DEPLOYMENT_REQUESTS, request("sized", enableGpuDiscovery=True,
        profilingConfig={"profilerImage": "img", "config": {"hardware": sizes}}))
    await in_state(kube, "sized", "Profiling")
    backwards = {"min_num_gpus_per_engine": 8, "max_num_gpus_per_engine": 2}
    await kube.create(DEPLOYMENT_REQUESTS, request("backwards", profilingConfig={
        "profilerImage": "img", "config": {"hardware": backwards}}))
    obj = await in_state(kube, "backwards", "Failed")
    assert "min_num_gpus_per_engine (8) is greater" in condition(obj, "Validation")["message"]
