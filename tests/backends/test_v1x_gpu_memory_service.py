"""GPU memory service and shadow-engine failover (issue #29 item 3), rendered as the original
renders them: one fixture per field in both API versions (`fixtures/gms/`), the objects in
golden files (`golden/gms/`), and what each field changes in the pods, on the DCD path and
on Grove. The builders are pure: no cluster."""

from __future__ import annotations

import copy
import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from backend_cases import SETTINGS, check_golden, containers, env

from backends.errors import GenerationError
from backends.render import render

Json = dict[str, Any]

FIXTURES = Path(__file__).parent / "fixtures" / "gms"
DRA = dataclasses.replace(SETTINGS, dra_enabled=True)
GROVE = dataclasses.replace(DRA, grove_enabled=True)
CASES = ("gms", "gms-device-class", "gms-clients", "failover", "gms-dcd")
VERSIONS = ("v1alpha1", "v1beta1")
CLAIM = "intrapod-shared-gpu"
SOCKETS = {"name": "gms-intrapod-control", "mountPath": "/gms-intrapod-control"}


def fixture(case: str, version: str) -> Json:
    loaded: Json = yaml.safe_load((FIXTURES / f"{case}.{version}.yaml").read_text())
    return loaded


def objects(case: str, version: str, settings: Any = DRA) -> list[Json]:
    return render(fixture(case, version), settings)


def one(rendered: list[Json], kind: str, part: str = "") -> Json:
    found = [o for o in rendered if o["kind"] == kind and part in o["metadata"]["name"]]
    assert len(found) == 1, [o["metadata"]["name"] for o in found]
    return found[0]


def pod_of(rendered: list[Json], part: str) -> Json:
    spec: Json = one(rendered, "Deployment", part)["spec"]["template"]["spec"]
    return spec


def without_worker_hash(obj: Any) -> Any:
    """The objects with the worker generation (a hash of the spec as written, so of its
    version too) blanked out."""
    text = yaml.safe_dump(obj, sort_keys=True)
    for found in set(re.findall(r"dynamo-worker-hash: '?([0-9a-f]{8})", text)):
        text = text.replace(found, "<hash>")
    return yaml.safe_load(text)


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("case", CASES)
def test_every_fixture_renders_its_golden_objects(case: str, version: str) -> None:
    check_golden(f"gms/{case}.{version}", objects(case, version))


@pytest.mark.parametrize("case", CASES)
def test_both_versions_give_the_same_workloads(case: str) -> None:
    kinds = ("Deployment", "ResourceClaimTemplate", "Service")
    alpha = [o for o in objects(case, "v1alpha1") if o["kind"] in kinds]
    beta = [o for o in objects(case, "v1beta1") if o["kind"] in kinds]
    assert without_worker_hash(alpha) == without_worker_hash(beta)


@pytest.mark.parametrize("case", ["gms", "failover"])
def test_grove_renders_the_same_pods_and_claim_templates(case: str) -> None:
    rendered = objects(case, "v1beta1", GROVE)
    check_golden(f"gms/{case}-grove", rendered)
    cliques = one(rendered, "PodCliqueSet")["spec"]["template"]["cliques"]
    worker = next(c for c in cliques if c["name"] not in ("frontend",))
    dcd_path = pod_of(objects(case, "v1beta1"), "-worker" if case == "failover" else
                      "-vllmworker")
    grove_pod = worker["spec"]["podSpec"]
    for key in ("resourceClaims", "initContainers", "tolerations", "volumes"):
        assert grove_pod[key] == dcd_path[key]
    assert [c["name"] for c in grove_pod["containers"]] == [
        c["name"] for c in dcd_path["containers"]]
    template = one(rendered, "ResourceClaimTemplate")
    assert template == one(objects(case, "v1beta1"), "ResourceClaimTemplate")


def test_the_claim_template_asks_mains_gpus_of_the_device_class() -> None:
    rendered = objects("gms-device-class", "v1beta1")
    template = one(rendered, "ResourceClaimTemplate")
    assert template == {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
        "metadata": {"name": "sglang-gms-decode-gpu", "namespace": "dynamo"},
        "spec": {"spec": {"devices": {"requests": [{"name": "gpus", "exactly": {
            "deviceClassName": "gpu.example.com", "allocationMode": "ExactCount",
            "count": 2}}]}}}}
    default = one(objects("gms", "v1beta1"), "ResourceClaimTemplate")
    assert default["metadata"]["name"] == "vllm-agg-gms-vllmworker-gpu"
    assert default["spec"]["spec"]["devices"]["requests"][0]["exactly"] == {
        "deviceClassName": "gpu.nvidia.com", "allocationMode": "ExactCount", "count": 1}


def test_main_reaches_its_gpus_through_the_claim_beside_the_gms_server() -> None:
    pod = pod_of(objects("gms", "v1beta1"), "vllmworker")
    main = containers(pod)["main"]
    assert main["resources"] == {"claims": [{"name": CLAIM}]}  # no nvidia.com/gpu left
    assert SOCKETS in main["volumeMounts"]
    assert env(main)["GMS_SOCKET_DIR"] == "/gms-intrapod-control"
    assert pod["resourceClaims"] == [
        {"name": CLAIM, "resourceClaimTemplateName": "vllm-agg-gms-vllmworker-gpu"}]
    assert pod["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    assert {"name": "gms-intrapod-control", "emptyDir": {}} in pod["volumes"]
    assert pod["initContainers"] == [{
        "name": "gms-server", "image": "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.4.0",
        "command": ["python3", "-m", "gpu_memory_service.cli.server"],
        "env": [{"name": "GMS_SOCKET_DIR", "value": "/gms-intrapod-control"}],
        "volumeMounts": [SOCKETS], "resources": {"claims": [{"name": CLAIM}]},
        "restartPolicy": "Always"}]
    # The frontend uses no GMS: nothing of it.
    frontend = pod_of(objects("gms", "v1beta1"), "frontend")
    assert "resourceClaims" not in frontend and "initContainers" not in frontend


def test_extra_client_containers_present_in_the_pod_are_wired_like_main() -> None:
    pod = pod_of(objects("gms-clients", "v1beta1"), "vllmworker")
    probe = containers(pod)["weights-probe"]
    assert probe["resources"] == {"claims": [{"name": CLAIM}]}
    assert probe["volumeMounts"] == [SOCKETS]
    assert env(probe) == {"GMS_SOCKET_DIR": "/gms-intrapod-control"}
    # "not-in-the-pod" names no container: ignored, as the reference says.
    assert sorted(containers(pod)) == ["main", "weights-probe"]


def test_failover_runs_main_as_a_primary_and_a_shadow_engine() -> None:
    pod = pod_of(objects("failover", "v1beta1"), "-worker")
    engines = containers(pod)
    assert sorted(engines) == ["engine-0", "engine-1"]
    for index in (0, 1):
        engine = engines[f"engine-{index}"]
        variables = env(engine)
        assert variables["ENGINE_ID"] == str(index)
        assert variables["CONTAINER_NAME"] == f"engine-{index}"
        assert variables["DYN_SYSTEM_PORT"] == str(9090 + index)
        assert variables["DYN_FORWARDPASS_METRIC_PORT"] == str(20380 + index)
        assert variables["VLLM_NIXL_SIDE_CHANNEL_PORT"] == str(5600 + index)
        assert variables["FAILOVER_LOCK_PATH"] == "/gms-intrapod-control/failover.lock"
        assert variables["DYN_VLLM_GMS_LOCK_BEFORE_INIT"] == ("1" if index == 0 else "0")
        assert variables["DYN_GMS_FAILOVER_PRIMARY_ENGINE_ID"] == "0"
        assert variables["DYN_GMS_FAILOVER_SHADOW_MODE"] == "true"
        assert variables["DYN_VLLM_GMS_SHADOW_MODE"] == "true"
        assert variables["DYN_SYSTEM_STARTING_HEALTH_STATUS"] == "notready"
        assert variables["DYN_KUBE_DISCOVERY_MODE"] == "container"
        assert "DYN_SYSTEM_USE_ENDPOINT_HEALTH_STATUS" not in variables
        assert engine["ports"] == [{"name": f"system-{index}",
                                    "containerPort": 9090 + index, "protocol": "TCP"}]
        for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
            assert engine[probe]["httpGet"]["port"] == f"system-{index}"
        assert engine["resources"] == {"claims": [{"name": CLAIM}]}
        assert SOCKETS in engine["volumeMounts"]
    # The shadow's torch.distributed rendezvous on its own port.
    assert engines["engine-0"]["args"][-2:] == ["--load-format", "gms"]
    assert engines["engine-1"]["args"][-2:] == ["--master-port", "29600"]
    assert [c["name"] for c in pod["initContainers"]] == ["gms-server"]


def failover_graph(backend: str, args: list[str], **extra: Any) -> Json:
    obj = copy.deepcopy(fixture("failover", "v1beta1"))
    obj["spec"]["backendFramework"] = backend
    main = obj["spec"]["components"][1]["podTemplate"]["spec"]["containers"][0]
    main["command"] = ["python3", "-m", f"dynamo.{backend}"]
    main["args"] = args
    obj["spec"]["components"][1].update(extra)
    return obj


def test_a_given_master_port_is_staggered_not_added() -> None:
    obj = failover_graph("vllm", ["--model", "m", "--master-port", "30000"])
    engines = containers(pod_of(render(obj, DRA), "-worker"))
    assert engines["engine-0"]["args"] == ["--model", "m", "--master-port", "30000"]
    assert engines["engine-1"]["args"] == ["--model", "m", "--master-port", "30100"]


def test_sglang_engines_run_without_piecewise_cuda_graphs() -> None:
    obj = failover_graph("sglang", ["--model-path", "m"])
    engines = containers(pod_of(render(obj, DRA), "-worker"))
    for engine in engines.values():
        assert engine["args"] == ["--model-path", "m", "--disable-piecewise-cuda-graph"]
        assert "DYN_VLLM_GMS_SHADOW_MODE" not in env(engine)


def test_the_frontend_sidecar_of_a_failover_pod_is_told_the_fast_timings() -> None:
    obj = failover_graph("vllm", ["--model", "m"], frontendSidecar="edge")
    # A graph made by this operator (its origin stamp): the sidecar gets the frontend's
    # defaults (`backends.origin_gates`).
    obj["metadata"]["annotations"]["nvidia.com/dynamo-operator-origin-version"] = "0.1.0"
    obj["spec"]["components"][1]["podTemplate"]["spec"]["containers"].append(
        {"name": "edge", "image": "nvcr.io/nvidia/ai-dynamo/dynamo-frontend:1.4.0"})
    pod = pod_of(render(obj, DRA), "-worker")
    # The DCD path names the sidecar as v1alpha1 does.
    assert sorted(containers(pod)) == ["engine-0", "engine-1", "sidecar-frontend"]
    edge = env(containers(pod)["sidecar-frontend"])
    assert edge["DYN_KUBE_DISCOVERY_DEBOUNCE_MS"] == "25"
    assert edge["DYN_MIGRATION_RECENT_FAILOVER_WINDOW_MS"] == "1500"
    assert "FAILOVER_LOCK_PATH" not in edge


def test_without_dra_served_gms_is_refused_with_the_originals_words() -> None:
    with pytest.raises(GenerationError, match="gpuMemoryService requires DRA"):
        render(fixture("gms", "v1beta1"), SETTINGS)
    with pytest.raises(GenerationError, match="gpuMemoryService requires DRA"):
        render(fixture("gms-dcd", "v1alpha1"), SETTINGS)


def test_the_inter_pod_layout_off_grove_is_refused_naming_the_field() -> None:
    obj = fixture("gms", "v1beta1")
    obj["spec"]["components"][1]["experimental"]["gpuMemoryService"]["mode"] = "InterPod"
    with pytest.raises(GenerationError,
                       match=r"spec.components\[VllmWorker\].experimental.gpuMemoryService.mode: "
                             "Forbidden: requires the Grove pathway"):
        render(obj, DRA)


def test_a_graph_without_these_fields_has_no_claim_anywhere() -> None:
    obj = fixture("gms", "v1beta1")
    del obj["spec"]["components"][1]["experimental"]
    rendered = render(obj, DRA)
    assert not [o for o in rendered if o["kind"] == "ResourceClaimTemplate"]
    pod = pod_of(rendered, "vllmworker")
    assert containers(pod)["main"]["resources"] == {"limits": {"nvidia.com/gpu": "1"}}
    assert "resourceClaims" not in pod and "initContainers" not in pod
    assert rendered == render(obj, SETTINGS)  # DRA being served changes nothing for it
