"""The inputs of the upgrade differential test (`test_upgrade_rewrites_nothing.py`): every
graph and DCD the operator may find stored, as the hub, with the settings it renders under.

Cases: every DynamoGraphDeployment and DynamoComponentDeployment of `deploy/examples/` and
`tests/api/manifests/`, each as written and written in the other version (stored as the hub
either way); the graphs of the golden-file cases; and graphs and DCDs drawn by hypothesis in
either version (`tests/api/model_strategies.py`), recorded in the baseline itself. Each graph
is rendered on the DCD path (LeaderWorkerSet, Kubernetes discovery, a default ingress) and on
the Grove path (Kai, a VirtualService gateway), with a restart token on its first service.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from api.conversion import HUB, SPOKE, convert

Json = dict[str, Any]

ROOT = Path(__file__).resolve().parents[2]
BASELINE = Path(__file__).parent / "golden" / "upgrade-baseline.json"
KINDS = ("DynamoGraphDeployment", "DynamoComponentDeployment")
TOKEN = "2026-01-01T00:00:00Z"


def digest(value: Any) -> str:
    """A short digest of JSON in canonical form (sorted keys)."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def settings_variants() -> dict[str, Any]:
    """The operator settings each case is rendered under, by name."""
    from backend_cases import SETTINGS

    return {
        "dcd": dataclasses.replace(SETTINGS, ingress_controller_class_name="nginx",
                                   inference_pool_enabled=True,
                                   ingress_controller_tls_secret_name="tls",
                                   mpi_run_secret_namespace=""),
        "dcd-etcd-istio": dataclasses.replace(SETTINGS, discovery_backend="etcd",
                                              virtual_service_gateway="istio/gw",
                                              volcano_enabled=False,
                                              inference_pool_enabled=True),
        "grove": dataclasses.replace(SETTINGS, grove_enabled=True, kai_scheduler_enabled=True,
                                     virtual_service_gateway="istio/gw",
                                     inference_pool_enabled=True),
    }


def _stored(obj: Json) -> Json:
    return obj if obj.get("apiVersion") == HUB else convert(obj, HUB)


def _other_version(obj: Json) -> Json:
    """`obj` as written in the other version, then stored."""
    other = SPOKE if obj.get("apiVersion") == HUB else HUB
    return _stored(convert(obj, other))


def manifest_cases() -> Iterator[tuple[str, Json]]:
    """(id, stored object) of every graph and DCD manifest of the repository."""
    files = sorted([*(ROOT / "deploy" / "examples").rglob("*.yaml"),
                    *(ROOT / "tests" / "api" / "manifests").rglob("*.yaml")])
    for path in files:
        for index, doc in enumerate(yaml.safe_load_all(path.read_text(encoding="utf-8"))):
            if not isinstance(doc, dict) or doc.get("kind") not in KINDS:
                continue
            doc.setdefault("metadata", {}).setdefault("namespace", "team")
            name = f"{path.relative_to(ROOT)}#{index}"
            yield name, _stored(doc)
            yield f"{name}@other", _other_version(doc)


def golden_cases() -> Iterator[tuple[str, Json]]:
    """(id, stored graph) of the golden-file cases (`test_golden_objects.py`)."""
    from backend_cases import graph
    from test_golden_objects import MULTINODE, SINGLE, _backend, _with_overrides

    from api.convert import dump

    for case, service in {**SINGLE, **MULTINODE}.items():
        for overrides in (False, True):
            body = _with_overrides(service) if overrides else service
            dgd = dump(graph({"Svc": body}, backend=_backend(case)))
            dgd["apiVersion"], dgd["kind"] = SPOKE, "DynamoGraphDeployment"
            name = f"golden:{case}{'-overrides' if overrides else ''}"
            yield name, _stored(dgd)
            yield f"{name}@other", _other_version(dgd)


def drawn_graphs() -> Any:
    """Hypothesis graphs written in `v1alpha1` that pass validation (the fuzzer's valid base,
    `hack.fuzz.specs`) with the fields whose `v1alpha1` and `v1beta1` forms render
    differently drawn on top: GPUs under requests or limits, gpuType and custom resources,
    PVC mounts with and without a mountPoint and a compilation cache, sharedMemory as size
    "0" or disabled, subComponentType, multinode, ingress, dynamoNamespace, serviceName,
    autoscaling, scalingAdapter, modelRef, env of mainContainer and envs with shared names,
    probes, envFromSecret, sidecars, a frontendSidecar, DYN_DEPLOYMENT_CONFIG."""
    from hypothesis import strategies as st

    from hack.fuzz.specs import graph_deployment

    extras = {
        "resources": st.sampled_from([
            {"requests": {"gpu": "1"}}, {"limits": {"gpu": "2", "gpuType": "amd.com/gpu"}},
            {"requests": {"cpu": "1", "custom": {"example.com/fpga": "1"}},
             "limits": {"gpu": "4", "memory": "8Gi"}}]),
        "volumeMounts": st.sampled_from([
            [{"name": "cache", "useAsCompilationCache": True}],
            [{"name": "models", "mountPoint": "/models"}],
            [{"name": "models", "mountPoint": "/models"},
             {"name": "cache", "mountPoint": "/cache", "useAsCompilationCache": True}]]),
        "sharedMemory": st.sampled_from([{"size": "0"}, {"disabled": True}, {"size": "16Gi"},
                                         {}]),
        "subComponentType": st.sampled_from(["prefill", "decode"]),
        "multinode": st.sampled_from([{"nodeCount": 2}, {"nodeCount": 1}, {}]),
        "ingress": st.sampled_from([{"enabled": True, "host": "h",
                                     "ingressControllerClassName": "nginx"},
                                    {"enabled": False}]),
        "dynamoNamespace": st.just("legacy-ns"),
        "serviceName": st.just("legacy-name"),
        "autoscaling": st.just({"enabled": False, "minReplicas": 1}),
        "scalingAdapter": st.sampled_from([{"enabled": True}, {"enabled": False}, {}]),
        "modelRef": st.just({"name": "Qwen/Qwen3-0.6B"}),
        "envs": st.just([{"name": "LOG_LEVEL", "value": "warn"}, {"name": "A", "value": "1"}]),
        "livenessProbe": st.just({"httpGet": {"path": "/l", "port": 1}}),
        "readinessProbe": st.just({"httpGet": {"path": "/r", "port": 2}}),
        "envFromSecret": st.just("hf"),
        "globalDynamoNamespace": st.booleans(),
        "frontendSidecar": st.just({"image": "fe:1", "args": ["-m"],
                                    "envs": [{"name": "X", "value": "1"}]}),
        "annotations": st.sampled_from([
            {"nvidia.com/dynamo-discovery-backend": "etcd"},
            {"nvidia.com/deployment-strategy": "Recreate"},
            {"nvidia.com/enable-metrics": "false"}]),
    }
    main_extras = {
        "resources": st.just({"requests": {"ephemeral-storage": "1Gi"},
                              "limits": {"nvidia.com/gpu": "1"}}),
        "volumeMounts": st.just([{"name": "cfg", "mountPath": "/cfg"}]),
        "env": st.just([{"name": "A", "value": "main"}, {"name": "B", "value": "2"}]),
        "startupProbe": st.just({"tcpSocket": {"port": 3}}),
        "command": st.just(["python3", "-m", "dynamo.vllm"]),
    }
    deployment_config = json.dumps({"Frontend": {"port": 1}, "worker": {
        "ServiceArgs": {"workers": 3, "resources": {"gpu": "2", "cpu": "4"}}}})

    @st.composite
    def graph(draw: Any) -> Json:
        dgd: Json = draw(graph_deployment("team"))
        dgd["metadata"]["name"] = "g"
        pvcs = []
        for svc in dgd["spec"]["services"].values():
            for field in draw(st.lists(st.sampled_from(sorted(extras)), max_size=6,
                                       unique=True)):
                svc[field] = draw(extras[field])
            main = svc["extraPodSpec"]["mainContainer"]
            for field in draw(st.lists(st.sampled_from(sorted(main_extras)), max_size=3,
                                       unique=True)):
                main[field] = draw(main_extras[field])
            if draw(st.booleans()):
                svc["extraPodSpec"]["containers"] = [{"name": "side", "image": "busybox"}]
                svc["extraPodSpec"]["volumes"] = [{"name": "cfg", "emptyDir": {}}]
            if draw(st.integers(0, 5)) == 0:
                svc["componentType"] = draw(st.sampled_from(["planner", "epp"]))
                if svc["componentType"] == "epp":
                    svc["eppConfig"] = {"configMapRef": {"name": "picker", "key": "k"}}
                    svc.pop("multinode", None)
            if draw(st.integers(0, 4)) == 0:
                svc["envs"] = [*svc.get("envs", []),
                               {"name": "DYN_DEPLOYMENT_CONFIG", "value": deployment_config}]
            pvcs += [m["name"] for m in svc.get("volumeMounts", [])]
        if pvcs:
            dgd["spec"]["pvcs"] = [{"name": n, "create": n == "cache", "size": "1Gi"}
                                   for n in sorted(set(pvcs))]
        if draw(st.booleans()):
            dgd["metadata"]["annotations"] = {"nvidia.com/dynamo-discovery-backend": "etcd"}
        return dgd

    return graph()
