"""The profiling run of an intent-based (v1beta1) DynamoGraphDeploymentRequest, as data.

As the original does it: the profiler container runs `python -m dynamo.profiler` with the
request's spec as JSON (`--config`, defaults filled in and hardware discovered from the GPU
nodes where the user left it out) and `--output-dir /data`; the output copier publishes
`final_config.yaml` and `profiler_status.yaml` as ConfigMap `dgdr-output-<dgdr>`. A model
cache PVC is mounted read-only at its mount path; `overrides.profilingJob` is merged into the
Job's spec last (containers, env and volumes by name). The Job's name, identity and copier are
those of `backends.profiling_job`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, Final

from api.convert import dump
from api.v1beta1.graph_deployment_request import DynamoGraphDeploymentRequest
from backends import constants
from backends import profiling_job as pj
from backends.children import Child, DesiredChildren, Write
from backends.gpu_discovery import hardware_from_nodes
from backends.named_merge import merge_named

Json = dict[str, Any]

__all__ = ["INTENT_OUTPUT_KEY", "PROFILER_IMAGE_REPOSITORY", "default_profiler_image",
           "discovered_hardware", "effective_spec", "intent_profiling_children",
           "manual_hardware"]

INTENT_OUTPUT_KEY: Final = "final_config.yaml"
#: What the original's defaulting webhook gives a request without spec.image: the planner
#: image of the Dynamo release whose API this operator serves.
PROFILER_IMAGE_REPOSITORY: Final = "nvcr.io/nvidia/ai-dynamo/dynamo-planner"
DEFAULT_MODEL_CACHE_MOUNT: Final = "/opt/model-cache"
#: The original caps a discovered GPU budget (set hardware.totalGpus to go past it).
MAX_DISCOVERED_GPUS: Final = 32
MODEL_CACHE_VOLUME: Final = "model-cache"
_DEFAULTS: Final[Json] = {"backend": "auto", "searchStrategy": "rapid", "autoApply": True}


def manual_hardware(dgdr: DynamoGraphDeploymentRequest) -> bool:
    """The user described the GPUs (any of gpuSku, vramMb, numGpusPerNode)."""
    hardware = dgdr.spec.hardware
    return hardware is not None and any(v is not None for v in (
        hardware.gpu_sku, hardware.vram_mb, hardware.num_gpus_per_node))


def discovered_hardware(nodes: Iterable[Json]) -> Json | None:
    """spec.hardware as the GPU nodes describe it (gpuSku, vramMb, numGpusPerNode and a
    totalGpus capped at MAX_DISCOVERED_GPUS), or None when no node reports GPUs."""
    nodes = list(nodes)
    best = hardware_from_nodes(nodes)
    if best is None:
        return None
    out: Json = {"numGpusPerNode": best["num_gpus_per_node"]}
    if best.get("system"):
        out["gpuSku"] = best["system"]
    if best.get("gpu_vram_mib"):
        out["vramMb"] = best["gpu_vram_mib"]
    total = sum(_gpus(n) for n in nodes)
    out["totalGpus"] = min(total, MAX_DISCOVERED_GPUS)
    return out


def _gpus(node: Json) -> int:
    one = hardware_from_nodes([node])
    return int(one["num_gpus_per_node"]) if one else 0


def effective_spec(dgdr: DynamoGraphDeploymentRequest, discovered: Json | None = None) -> Json:
    """The spec handed to the profiler: the user's, with the documented defaults (backend
    auto, searchStrategy rapid, autoApply true, isl 4000, osl 1000, ttft 2000 and itl 30
    unless e2eLatency is given, the model cache's mount path) and the discovered hardware
    where the user left a field out."""
    spec: Json = {**_DEFAULTS, **dump(dgdr.spec)}
    spec["workload"] = {"isl": 4000, "osl": 1000, **(spec.get("workload") or {})}
    sla = spec.get("sla") or {}
    if "e2eLatency" not in sla:
        sla = {"ttft": 2000, "itl": 30, **sla}
    spec["sla"] = sla
    cache = spec.get("modelCache")
    if cache and cache.get("pvcName"):
        spec["modelCache"] = {"pvcMountPath": DEFAULT_MODEL_CACHE_MOUNT, **cache}
    if discovered:
        spec["hardware"] = {**discovered, **(spec.get("hardware") or {})}
    return spec


def _env(dgdr: DynamoGraphDeploymentRequest, namespace: str) -> list[Json]:
    return [
        {"name": "HUGGING_FACE_HUB_TOKEN", "valueFrom": {"secretKeyRef": {
            "name": "hf-token-secret", "key": "HF_TOKEN", "optional": True}}},
        {"name": "NATS_SERVER", "value": f"nats://{namespace}-nats:4222"},
        {"name": "ETCD_ENDPOINTS", "value": f"{namespace}-etcd:2379"},
        {"name": "DGDR_NAME", "value": str(dgdr.metadata["name"])},
        {"name": "DGDR_NAMESPACE", "value": namespace},
        {"name": "DGDR_UID", "value": str(dgdr.metadata.get("uid", ""))},
    ]


def default_profiler_image(dynamo_version: str) -> str:
    """The profiler image of a request that names none: the planner image of the Dynamo
    release the operator serves, as the original defaults it to its own version."""
    return f"{PROFILER_IMAGE_REPOSITORY}:{dynamo_version}"


def _pod_spec(dgdr: DynamoGraphDeploymentRequest, namespace: str, spec: Json,
              dynamo_version: str) -> Json:
    name = str(dgdr.metadata["name"])
    mounts: list[Json] = [{"name": "profiling-output", "mountPath": pj.OUTPUT_DIR}]
    volumes: list[Json] = [{"name": "profiling-output", "emptyDir": {}}]
    cache = spec.get("modelCache") or {}
    if cache.get("pvcName"):
        mounts.append({"name": MODEL_CACHE_VOLUME, "mountPath": cache["pvcMountPath"],
                       "readOnly": True})
        volumes.append({"name": MODEL_CACHE_VOLUME, "persistentVolumeClaim": {
            "claimName": cache["pvcName"], "readOnly": True}})
    profiler: Json = {
        "name": pj.PROFILER_CONTAINER,
        "image": dgdr.spec.image or default_profiler_image(dynamo_version),
        "command": ["python", "-m", "dynamo.profiler"],
        "args": ["--config", json.dumps(spec, sort_keys=True), "--output-dir", pj.OUTPUT_DIR],
        "env": _env(dgdr, namespace), "volumeMounts": mounts, "workingDir": "/workspace",
    }
    copier: Json = {
        "name": pj.COPIER_CONTAINER, "image": pj.COPIER_IMAGE,
        "command": ["/bin/sh", "-c", pj.copier_script(name, namespace, (INTENT_OUTPUT_KEY,))],
        "volumeMounts": [{"name": "profiling-output", "mountPath": pj.OUTPUT_DIR,
                          "readOnly": True}],
    }
    return {
        "serviceAccountName": pj.SERVICE_ACCOUNT,
        "restartPolicy": "Never",
        "securityContext": {"runAsNonRoot": True, "runAsUser": 1000, "runAsGroup": 1000,
                            "fsGroup": 1000},
        "imagePullSecrets": [{"name": pj.PULL_SECRET}],
        "containers": [profiler, copier],
        "volumes": volumes,
    }


def _job(dgdr: DynamoGraphDeploymentRequest, namespace: str, spec: Json,
         dynamo_version: str) -> Json:
    name = str(dgdr.metadata["name"])
    labels = pj.labels("dynamo-profiler", name)
    job_spec: Json = {
        "backoffLimit": pj.BACKOFF_LIMIT,
        "template": {"metadata": {"labels": dict(labels)},
                     "spec": _pod_spec(dgdr, namespace, spec, dynamo_version)},
    }
    overrides = dgdr.spec.overrides
    if overrides is not None and overrides.profiling_job:
        job_spec = merge_named(job_spec, overrides.profiling_job)
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": pj.job_name(name), "namespace": namespace, "labels": labels},
            "spec": job_spec}


def intent_profiling_children(dgdr: DynamoGraphDeploymentRequest, spec: Json, *,
                              cluster_role: str = "",
                              dynamo_version: str = constants.DYNAMO_VERSION) -> DesiredChildren:
    """The profiling identity and Job of an intent-based request; `spec` is
    `effective_spec`'s result. The Job is created once (its template cannot change)."""
    namespace = str(dgdr.metadata["namespace"])
    job = _job(dgdr, namespace, spec, dynamo_version)
    return DesiredChildren(children=(*pj.rbac(namespace, cluster_role),
                                     Child(job, Write.CREATE_ONLY)))
