"""Golden files: the full objects generated for each component type and backend, on one node
and on 2 and 4 nodes, with and without extraPodSpec overrides, on the DCD path (Deployment or
LeaderWorkerSet) and on the Grove path. The files under golden/ were reviewed against the API
reference and spec/podgen.md; regenerate with UPDATE_GOLDEN=1 and review the diff."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import pytest
from backend_cases import (
    GOLDEN,
    IMAGE,
    PULL_SECRETS,
    SETTINGS,
    check_golden,
    dcd_path,
    graph,
    hub_of,
)

from backends.grove import grove_objects
from backends.render import render

Json = dict[str, Any]

# Every kind of override a user makes through extraPodSpec and the component fields.
OVERRIDES: Json = {
    "annotations": {"team.example.com/owner": "inference"},
    "labels": {"team.example.com/tier": "gold"},
    "envs": [{"name": "LOG_LEVEL", "value": "info"}],
    "envFromSecret": "hf-token",
    "sharedMemory": {"size": "16Gi"},
    "livenessProbe": {
        "httpGet": {"path": "/healthz", "port": 9999},
        "periodSeconds": 7,
    },
    "extraPodMetadata": {
        "labels": {"team.example.com/pod": "yes"},
        "annotations": {"prometheus.io/scrape": "true"},
    },
    "extraPodSpec": {
        "nodeSelector": {"node.example.com/pool": "inference"},
        "tolerations": [{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}],
        "terminationGracePeriodSeconds": 300,
        "securityContext": {"runAsUser": 2000, "runAsGroup": 3000},
        "imagePullSecrets": [{"name": "extra-pull"}],
        "volumes": [{"name": "config", "configMap": {"name": "engine-config"}}],
        "containers": [{"name": "sidecar", "image": "busybox:1.36", "command": ["sleep", "1d"]}],
        "mainContainer": {
            "env": [{"name": "LOG_LEVEL", "value": "debug"}, {"name": "EXTRA", "value": "1"}],
            "resources": {"requests": {"ephemeral-storage": "10Gi"}},
            "volumeMounts": [{"name": "config", "mountPath": "/config"}],
            "startupProbe": {"tcpSocket": {"port": 9999}, "failureThreshold": 30},
        },
    },
}


def _service(component_type: str | None, main: Json, **fields: Any) -> Json:
    service: Json = {"replicas": 1, "extraPodSpec": {"mainContainer": {"image": IMAGE, **main}}}
    if component_type:
        service["componentType"] = component_type
    service.update(fields)
    return service


def _with_overrides(service: Json) -> Json:
    """The service with every override, and a worker's command in shell form (a script that
    pipes the engine's output), so flags must be spliced into the script."""
    result = copy.deepcopy(service)
    main = result["extraPodSpec"]["mainContainer"]
    if result.get("componentType") == "worker":
        line = " ".join([*main["command"], *main["args"]])
        main["command"] = ["/bin/sh", "-c"]
        main["args"] = [f"{line} 2>&1 | tee /tmp/engine.log"]
    for key, value in OVERRIDES.items():
        if key == "extraPodSpec":
            main = {**result["extraPodSpec"]["mainContainer"], **value["mainContainer"]}
            result["extraPodSpec"] = {**copy.deepcopy(value), "mainContainer": main}
        else:
            result[key] = copy.deepcopy(value)
    return result


def _worker(backend: str, nodes: int, args: list[str], gpus: str, **fields: Any) -> Json:
    extra: Json = {"resources": {"limits": {"gpu": gpus}}, **fields}
    if nodes > 1:
        extra["multinode"] = {"nodeCount": nodes}
    main = {"command": ["python3", "-m", f"dynamo.{backend}"], "args": args}
    return _service("worker", main, **extra)


EPP_CONFIG = {"configMapRef": {"name": "epp-picker", "key": "picker.yaml"}}
SINGLE: dict[str, Json] = {
    "frontend": _service("frontend", {}),
    "planner": _service("planner", {"command": ["python3", "-m", "planner_sla"]}),
    "epp": _service("epp", {}, eppConfig=EPP_CONFIG),
    "other": _service(None, {"command": ["python3"], "args": ["-m", "tool.main"]}),
    "vllm-1node": _worker("vllm", 1, ["--model", "Qwen/Qwen3-0.6B"], "1"),
    "sglang-1node": _worker("sglang", 1, ["--model-path", "Qwen/Qwen3-0.6B"], "1"),
    "trtllm-1node": _worker("trtllm", 1, ["--model-path", "Qwen/Qwen3-0.6B"], "1"),
}
MULTINODE: dict[str, Json] = {
    # Tensor parallel 8 over 4-GPU nodes: Ray.
    "vllm-2node": _worker("vllm", 2, ["--model", "m", "--tensor-parallel-size", "8"], "4"),
    # Data parallel 16 over 4-GPU nodes: hybrid load-balanced DP.
    "vllm-4node": _worker("vllm", 4, ["--model", "m", "--data-parallel-size", "16"], "4"),
    "sglang-2node": _worker("sglang", 2, ["--model-path", "m", "--tp-size", "16"], "8"),
    "sglang-4node": _worker("sglang", 4, ["--model-path", "m", "--tp-size", "32"], "8"),
    "trtllm-2node": _worker("trtllm", 2, ["--model-path", "m"], "4"),
    "trtllm-4node": _worker("trtllm", 4, ["--model-path", "m"], "4"),
}
BACKEND_OF = {"vllm": "vllm", "sglang": "sglang", "trtllm": "trtllm"}


def _backend(case: str) -> str | None:
    return BACKEND_OF.get(case.split("-")[0])


@pytest.mark.parametrize("overrides", [False, True], ids=["defaults", "overrides"])
@pytest.mark.parametrize("case", [*SINGLE, *MULTINODE])
def test_dcd_path_objects_match_golden(case: str, overrides: bool) -> None:
    service = {**SINGLE, **MULTINODE}[case]
    if overrides:
        service = _with_overrides(service)
    dgd = graph({"Svc": service}, backend=_backend(case))
    suffix = "-overrides" if overrides else ""
    check_golden(f"dcd-{case}{suffix}", dcd_path(dgd, "Svc"))


@pytest.mark.parametrize("case", list(MULTINODE))
def test_grove_objects_match_golden(case: str) -> None:
    dgd = graph({"Svc": MULTINODE[case]}, backend=_backend(case))
    check_golden(f"grove-{case}", grove_objects(hub_of(dgd), SETTINGS, pull_secrets=PULL_SECRETS))


def test_grove_disaggregated_graph_matches_golden() -> None:
    services = {
        "Frontend": _service("frontend", {}),
        "Planner": SINGLE["planner"],
        "prefill": {**MULTINODE["sglang-2node"], "subComponentType": "prefill"},
        "decode": {
            **_worker("sglang", 1, ["--model-path", "m"], "8", modelRef={"name": "m"}),
            "subComponentType": "decode",
            "replicas": 2,
        },
    }
    settings = dataclasses.replace(
        SETTINGS, ingress_controller_class_name="nginx", kai_scheduler_enabled=True
    )
    dgd = graph(
        services,
        backend="sglang",
        annotations={"nvidia.com/kai-scheduler-queue": " gpu-queue "},
        envs=[{"name": "HF_HOME", "value": "/cache"}],
    )
    check_golden("grove-disagg-graph",
                 grove_objects(hub_of(dgd), settings, pull_secrets=PULL_SECRETS))


def test_render_of_a_graph_matches_golden() -> None:
    manifest = {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "vllm-agg", "namespace": "dynamo"},
        "spec": {
            "backendFramework": "vllm",
            "pvcs": [
                {
                    "name": "model-cache",
                    "create": True,
                    "size": "100Gi",
                    "storageClass": "standard",
                    "volumeAccessMode": "ReadWriteMany",
                }
            ],
            "services": {
                "Frontend": SINGLE["frontend"],
                "VllmDecodeWorker": {
                    **SINGLE["vllm-1node"],
                    "modelRef": {"name": "Qwen/Qwen3-0.6B"},
                    "scalingAdapter": {"enabled": True},
                    "volumeMounts": [{"name": "model-cache", "useAsCompilationCache": True}],
                },
            },
        },
    }
    check_golden("render-vllm-agg", render(manifest, SETTINGS))


def test_every_golden_file_belongs_to_a_case() -> None:
    cases = {*SINGLE, *MULTINODE}
    expected = {f"dcd-{c}{s}" for c in cases for s in ("", "-overrides")}
    expected |= {f"grove-{c}" for c in MULTINODE} | {"grove-disagg-graph", "render-vllm-agg"}
    assert {p.stem for p in GOLDEN.glob("*.yaml")} == expected
