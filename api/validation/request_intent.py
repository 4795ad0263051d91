"""Rules for the v1beta1 DynamoGraphDeploymentRequest: the intent (model, workload, SLA,
hardware, model cache, overrides), as one set for both served versions.

A v1alpha1 request is checked through its v1beta1 form (`api.validation.request_versions`);
the profiling config only v1alpha1 can hold keeps its own rules (`api.validation.request`).
The rules follow the reference page and the original's controller: workload concurrency and
requestRate exclude each other, so do sla.e2eLatency and ttft/itl; a thorough search needs a
named backend; a new request's image needs a semantic-version tag unless
runtimeVersionOverride names the runtime; the override of the generated graph is a versioned
DynamoGraphDeployment whose only `$patch` modifier is `args: append` on a named container with
a non-empty args list.
"""

from __future__ import annotations

import re
from typing import Any

from api import names
from api.convert import dump
from api.errors import FieldError
from api.v1beta1.graph_deployment_request import (
    DynamoGraphDeploymentRequest,
    DynamoGraphDeploymentRequestSpec,
)
from api.validation import values

__all__ = ["FROZEN_PHASES", "GPU_SKUS", "image_tag", "validate_request_image",
           "validate_request_intent", "validate_request_intent_update"]

#: Phases in which the spec is frozen (the original rejects changes from Profiling on).
FROZEN_PHASES = ("Profiling", "Deploying", "Ready", "Deployed")
#: Fields that may still change while a request without autoApply waits in Ready.
_READY_MUTABLE = ("autoApply", "runtimeVersionOverride")
_DGD_VERSIONS = ("nvidia.com/v1alpha1", "nvidia.com/v1beta1")


#: The GPU SKUs the original's schema admits (lowercase, underscore: h100_sxm).
GPU_SKUS = ("vr_nvl72", "gb200", "gb200_sxm", "gb10", "b300_sxm", "b200_sxm", "h200_sxm",
            "h100_sxm", "h100_pcie", "a100_sxm", "a100_pcie", "a30", "l40s", "l40", "l4",
            "v100_sxm", "v100_pcie", "t4", "mi200", "mi300")
_RUNTIME_VERSION = re.compile(r"(0|[1-9][0-9]{0,3})\.(0|[1-9][0-9]{0,3})\.(0|[1-9][0-9]{0,3})")
_SEMVER_TAG = re.compile(r"v?[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.+-]*)?")


def image_tag(image: str) -> str | None:
    """The tag of an image reference (None for a digest-only or untagged one)."""
    name = image.split("@", 1)[0]
    last = name.rsplit("/", 1)[-1]
    return last.rsplit(":", 1)[1] if ":" in last else None


def validate_request_image(dgdr: DynamoGraphDeploymentRequest) -> list[FieldError]:
    """A new intent-based request's image needs a semantic-version tag, or
    runtimeVersionOverride to say which Dynamo runtime it is (the original's admission)."""
    image = dgdr.spec.image
    if not image or dgdr.spec.runtime_version_override:
        return []
    tag = image_tag(image)
    if tag is not None and _SEMVER_TAG.fullmatch(tag):
        return []
    return [FieldError("spec.image", (
        f"{image!r} has no semantic-version tag; set spec.runtimeVersionOverride to the Dynamo "
        "runtime version it runs (MAJOR.MINOR.PATCH)"))]


def validate_request_intent(dgdr: DynamoGraphDeploymentRequest) -> list[FieldError]:
    """Every error of a request's intent, as for a create."""
    spec = dgdr.spec
    errors = values.required("spec.model", spec.model)
    if spec.runtime_version_override is not None and not _RUNTIME_VERSION.fullmatch(
            spec.runtime_version_override):
        errors.append(FieldError("spec.runtimeVersionOverride", (
            "must be MAJOR.MINOR.PATCH, each part 0-9999 without leading zeros, "
            "v prefix, prerelease or build metadata")))
    if spec.search_strategy == "thorough" and spec.backend in (None, "auto"):
        errors.append(FieldError("spec.searchStrategy", (
            'thorough is incompatible with spec.backend "auto": set spec.backend to a '
            "specific backend (sglang, trtllm or vllm)")))
    errors += _workload(spec)
    errors += _sla(spec)
    errors += _hardware(spec)
    errors += _model_cache(spec)
    errors += _overrides(spec)
    return errors


def validate_request_intent_update(old: DynamoGraphDeploymentRequest,
                                   new: DynamoGraphDeploymentRequest) -> list[FieldError]:
    """Errors of an update: those of `new`, and a spec change once profiling has started
    (in Ready, autoApply and runtimeVersionOverride may still change)."""
    errors = validate_request_intent(new)
    phase = old.status.phase if old.status is not None else None
    if phase not in FROZEN_PHASES:
        return errors
    before, after = dump(old.spec), dump(new.spec)
    if phase == "Ready":
        for key in _READY_MUTABLE:
            before.pop(key, None)
            after.pop(key, None)
    if before != after:
        errors.append(FieldError("spec", (
            f"is immutable once profiling has started (phase {phase}); delete the request "
            "and create a new one to change it")))
    return errors


def _positive(path: str, value: int | float | None) -> list[FieldError]:
    if value is None or value > 0:
        return []
    return [FieldError(path, "must be greater than 0")]


def _workload(spec: DynamoGraphDeploymentRequestSpec) -> list[FieldError]:
    workload = spec.workload
    if workload is None:
        return []
    errors = _positive("spec.workload.isl", workload.isl)
    errors += _positive("spec.workload.osl", workload.osl)
    errors += _positive("spec.workload.concurrency", workload.concurrency)
    errors += _positive("spec.workload.requestRate", workload.request_rate)
    if workload.concurrency is not None and workload.request_rate is not None:
        errors.append(FieldError("spec.workload.requestRate",
                                 "may not be set together with spec.workload.concurrency"))
    return errors


def _sla(spec: DynamoGraphDeploymentRequestSpec) -> list[FieldError]:
    sla = spec.sla
    if sla is None:
        return []
    errors = _positive("spec.sla.ttft", sla.ttft)
    errors += _positive("spec.sla.itl", sla.itl)
    errors += _positive("spec.sla.e2eLatency", sla.e2e_latency)
    if sla.e2e_latency is not None and (sla.ttft is not None or sla.itl is not None):
        errors.append(FieldError("spec.sla.e2eLatency",
                                 "may not be combined with spec.sla.ttft or spec.sla.itl"))
    return errors


def _hardware(spec: DynamoGraphDeploymentRequestSpec) -> list[FieldError]:
    hardware = spec.hardware
    if hardware is None:
        return []
    errors = values.one_of("spec.hardware.gpuSku", hardware.gpu_sku, GPU_SKUS)
    errors += _positive("spec.hardware.vramMb", hardware.vram_mb)
    errors += values.at_least("spec.hardware.totalGpus", hardware.total_gpus, 1)
    errors += values.at_least("spec.hardware.numGpusPerNode", hardware.num_gpus_per_node, 1)
    return errors


def _model_cache(spec: DynamoGraphDeploymentRequestSpec) -> list[FieldError]:
    cache = spec.model_cache
    if cache is None:
        return []
    path = "spec.modelCache"
    errors = values.name(f"{path}.pvcName", cache.pvc_name, names.is_dns1123_subdomain)
    if cache.pvc_model_path and not cache.pvc_name:
        errors.append(FieldError(f"{path}.pvcName", "required when pvcModelPath is set"))
    if cache.pvc_mount_path is not None and not cache.pvc_mount_path.startswith("/"):
        errors.append(FieldError(f"{path}.pvcMountPath", "must be an absolute path"))
    return errors


def _overrides(spec: DynamoGraphDeploymentRequestSpec) -> list[FieldError]:
    overrides = spec.overrides
    if overrides is None or overrides.dgd is None:
        return []
    path = "spec.overrides.dgd"
    dgd = overrides.dgd
    errors = []
    if dgd.get("apiVersion") not in _DGD_VERSIONS:
        errors.append(FieldError(f"{path}.apiVersion", "must be nvidia.com/v1beta1 or "
                                 "nvidia.com/v1alpha1"))
    if dgd.get("kind") != "DynamoGraphDeployment":
        errors.append(FieldError(f"{path}.kind", "must be DynamoGraphDeployment"))
    metadata = dgd.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        return [*errors, FieldError(f"{path}.metadata", "must be an object")]
    metadata = metadata or {}
    errors += _string(f"{path}.metadata.name", metadata.get("name"),
                      names.is_dns1123_subdomain)
    errors += _string(f"{path}.metadata.namespace", metadata.get("namespace"),
                      names.is_dns1123_label)
    for key in ("labels", "annotations"):
        value = metadata.get(key)
        if value is not None and not (isinstance(value, dict) and all(
                isinstance(v, str) for v in value.values())):
            errors.append(FieldError(f"{path}.metadata.{key}", "must map strings to strings"))
    if "status" in dgd:
        errors.append(FieldError(f"{path}.status", "may not be overridden"))
    if dgd.get("apiVersion") == "nvidia.com/v1beta1":
        errors += _v1beta1_components(f"{path}.spec.components",
                                      (dgd.get("spec") or {}).get("components"))
    return errors


def _string(path: str, value: Any, check: Any) -> list[FieldError]:
    if value is None:
        return []
    if not isinstance(value, str):
        return [FieldError(path, "must be a string")]
    return values.name(path, value, check)


def _v1beta1_components(path: str, components: Any) -> list[FieldError]:
    """Components and their containers are matched by name; `$patch` is `args: append`."""
    if components is None:
        return []
    if not isinstance(components, list):
        return [FieldError(path, "must be a list")]
    errors = []
    for i, component in enumerate(components):
        where = f"{path}[{i}]"
        if not isinstance(component, dict) or not isinstance(component.get("name"), str):
            errors.append(FieldError(f"{where}.name", "required"))
            continue
        containers = ((component.get("podTemplate") or {}).get("spec") or {}).get("containers")
        for j, container in enumerate(containers if isinstance(containers, list) else []):
            errors += _container(f"{where}.podTemplate.spec.containers[{j}]", container)
    return errors


def _container(path: str, container: Any) -> list[FieldError]:
    if not isinstance(container, dict) or not isinstance(container.get("name"), str):
        return [FieldError(f"{path}.name", "required")]
    if "$patch" not in container:
        return []
    patch = container["$patch"]
    if patch != {"args": "append"}:
        return [FieldError(f"{path}.$patch", "the only supported modifier is args: append")]
    args = container.get("args")
    if not (isinstance(args, list) and args and all(isinstance(a, str) and a for a in args)):
        return [FieldError(f"{path}.args", "args: append needs a list of at least one "
                           "non-empty string")]
    return []
