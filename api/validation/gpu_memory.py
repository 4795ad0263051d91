"""The rules of GPU memory service and failover, as the original's webhook states them.

Per component (written against `v1alpha1`, where both are switched by `enabled`; a `v1beta1`
object is checked through its view, so the paths come out as `experimental.<field>`):

- `gpuMemoryService` (enabled): only for worker, prefill and decode components; `main` asks at
  least one GPU; `extraClientContainers` name valid containers, only with mode intraPod;
  `extraClientPods` are reserved and refused; the inter-pod layout only for vLLM; not with an
  enabled checkpoint (GMS + Snapshot is blocked upstream for now). Client container names are
  checked even when GMS is switched off, as the original checks them.
- `failover` (enabled): needs gpuMemoryService in the same mode; intra-pod runs exactly one
  shadow (`numShadows` 1); inter-pod needs at least one GPU and a worker-like component.
- a graph with intra-pod failover carries `nvidia.com/dynamo-kube-discovery-mode: container`
  (each engine container registers as its own worker); that annotation, when given, is `pod`
  or `container`.
- on update, the inter-pod layout and inter-pod failover are not switched on or off, and
  inter-pod failover keeps its `numShadows` (the Grove cliques cannot be reshaped in place).
- a graph's inter-pod layout needs the Grove pathway (`grove_pathway_errors`, on the object as
  written in either version, since whether Grove runs the graph is the operator's to say).
"""

from __future__ import annotations

from collections.abc import Iterable

from api import names
from api.errors import FieldError
from api.kube import Json
from api.v1alpha1 import DynamoComponentDeploymentSharedSpec
from api.validation.kube_values import shown
from api.validation.topology_levels import grove_pathway_refusal

__all__ = ["DISCOVERY_MODE_ANNOTATION", "discovery_mode_errors", "gpu_memory_errors",
           "gpu_memory_update_errors", "grove_pathway_errors", "intra_pod_failover"]

DISCOVERY_MODE_ANNOTATION = "nvidia.com/dynamo-kube-discovery-mode"
DISCOVERY_MODES = ("pod", "container")
INTRA_POD = "intraPod"
INTER_POD = "interPod"
GMS_TYPES = ("worker", "prefill", "decode")
NOT_FAILOVER_TYPES = ("epp", "frontend", "planner")
_GPU_NAMES = ("nvidia.com/gpu", "gpu")


def _mode(mode: str | None) -> str:
    # v1alpha1 spells the modes intraPod/interPod; the v1beta1 spelling is accepted too.
    return {"IntraPod": INTRA_POD, "InterPod": INTER_POD}.get(mode or INTRA_POD,
                                                              mode or INTRA_POD)


def _main_gpus(spec: DynamoComponentDeploymentSharedSpec) -> int:
    """The GPUs `main` asks: `resources` (limits, then requests), else the main container's
    own GPU resources; 0 when none or not a whole number."""
    resources = spec.resources
    if resources is not None:
        for item in (resources.limits, resources.requests):
            if item is not None and item.gpu is not None:
                text = item.gpu.strip()
                return int(text) if text.isdigit() else 0
    main = spec.extra_pod_spec.main_container if spec.extra_pod_spec is not None else None
    given = (main or {}).get("resources") or {}
    for part in ("limits", "requests"):
        amounts = given.get(part) if isinstance(given, dict) else None
        if not isinstance(amounts, dict):
            continue
        found = sorted(k for k in amounts if isinstance(k, str) and (
            k.lower() in _GPU_NAMES or k.lower().endswith("/gpu") or "/mig-" in k.lower()))
        if found:
            text = str(amounts[found[0]]).strip()
            return int(text) if text.isdigit() else 0
    return 0


def gpu_memory_errors(spec: DynamoComponentDeploymentSharedSpec, path: str, *,
                      backend: str | None) -> list[FieldError]:
    """Every GMS and failover error of one component."""
    errors: list[FieldError] = []
    gms = spec.gpu_memory_service
    gms_path = f"{path}.gpuMemoryService"
    if gms is not None:
        for i, name in enumerate(gms.extra_client_containers or []):
            problems = names.is_dns1123_label(name)
            if problems:
                errors.append(FieldError(f"{gms_path}.extraClientContainers[{i}]",
                                         f"Invalid value: {shown(name)}: is not a valid "
                                         f"container name: {'; '.join(problems)}"))
    enabled = gms is not None and gms.enabled
    if gms is not None and gms.enabled:
        if spec.component_type not in GMS_TYPES:
            errors.append(FieldError(gms_path, "Forbidden: GPU memory service is only supported "
                                               "for worker, prefill, or decode components"))
        if _main_gpus(spec) < 1:
            errors.append(FieldError(gms_path, "Forbidden: GPU memory service requires "
                                               "podTemplate.spec.containers[main].resources."
                                               "limits.nvidia.com/gpu >= 1"))
        if gms.extra_client_containers and _mode(gms.mode) != INTRA_POD:
            errors.append(FieldError(f"{gms_path}.extraClientContainers",
                                     "Forbidden: extraClientContainers is only supported with "
                                     "the intra-pod mode"))
        if gms.extra_client_pods:
            errors.append(FieldError(f"{gms_path}.extraClientPods",
                                     "Forbidden: extraClientPods is reserved for inter-pod GMS "
                                     "and is not implemented yet"))
        if _mode(gms.mode) == INTER_POD and backend != "vllm":
            errors.append(FieldError(f"{gms_path}.mode",
                                     "Invalid value: the inter-pod GMS layout is currently "
                                     "supported only for vLLM (detected backend: "
                                     f"{backend or '<unset>'})"))
        if spec.checkpoint is not None and spec.checkpoint.enabled:
            errors.append(FieldError(f"{path}.checkpoint",
                                     "Forbidden: GMS + Snapshot is temporarily disabled; "
                                     "disable gpuMemoryService"))
    errors += _failover(spec, path, enabled)
    return errors


def _failover(spec: DynamoComponentDeploymentSharedSpec, path: str,
              gms_enabled: bool) -> list[FieldError]:
    failover = spec.failover
    if failover is None or not failover.enabled:
        return []
    failover_path = f"{path}.failover"
    gms = spec.gpu_memory_service
    mode = _mode(failover.mode)
    errors = []
    if not gms_enabled or gms is None:
        errors.append(FieldError(failover_path, "Forbidden: gpuMemoryService is required when "
                                                "failover is enabled"))
    elif _mode(gms.mode) != mode:
        # No value shown: the view spells the modes as v1alpha1 does.
        errors.append(FieldError(f"{failover_path}.mode",
                                 "Invalid value: must match gpuMemoryService.mode"))
    shadows = failover.num_shadows
    if mode == INTRA_POD:
        if shadows is not None and shadows != 1:
            errors.append(FieldError(f"{failover_path}.numShadows",
                                     f"Invalid value: {shadows}: should be less than or equal "
                                     "to 1 (the intra-pod layout runs one primary and one "
                                     "shadow engine)"))
    else:
        if _main_gpus(spec) < 1:
            errors.append(FieldError(failover_path, "Forbidden: GMS failover requires at least "
                                                    "1 GPU in podTemplate.spec.containers[main]"
                                                    ".resources.limits.nvidia.com/gpu"))
        if spec.component_type in NOT_FAILOVER_TYPES:
            errors.append(FieldError(failover_path, "Forbidden: GMS failover is not supported "
                                                    f"for type {shown(spec.component_type)}"))
    return errors


def _inter_pod_gms(spec: DynamoComponentDeploymentSharedSpec) -> bool:
    gms = spec.gpu_memory_service
    return gms is not None and gms.enabled and _mode(gms.mode) == INTER_POD


def _inter_pod_failover(spec: DynamoComponentDeploymentSharedSpec) -> bool:
    failover = spec.failover
    return failover is not None and failover.enabled and _mode(failover.mode) == INTER_POD


def _shadows(spec: DynamoComponentDeploymentSharedSpec) -> int:
    shadows = spec.failover.num_shadows if spec.failover is not None else None
    return shadows if shadows is not None and shadows >= 1 else 1


def gpu_memory_update_errors(old: DynamoComponentDeploymentSharedSpec,
                             new: DynamoComponentDeploymentSharedSpec, path: str,
                             kind: str) -> list[FieldError]:
    """What an update may not change: the inter-pod layout, inter-pod failover and its
    shadows reshape the component's Grove cliques and claims, which cannot change in place
    (`kind`: the object to delete and recreate)."""
    errors = []
    if _inter_pod_gms(old) != _inter_pod_gms(new):
        errors.append(FieldError(f"{path}.gpuMemoryService.mode",
                                 "Invalid value: the inter-pod GMS layout cannot be toggled "
                                 f"after creation; delete and recreate the {kind}"))
    if _inter_pod_failover(old) != _inter_pod_failover(new):
        errors.append(FieldError(f"{path}.failover",
                                 "Invalid value: inter-pod GMS failover cannot be toggled "
                                 f"after creation; delete and recreate the {kind}"))
    elif _inter_pod_failover(new) and _shadows(old) != _shadows(new):
        errors.append(FieldError(f"{path}.failover.numShadows",
                                 "Invalid value: is immutable for inter-pod GMS failover; "
                                 f"delete and recreate the {kind} to change it"))
    return errors


def intra_pod_failover(services: Iterable[DynamoComponentDeploymentSharedSpec]) -> bool:
    """Whether some service runs intra-pod failover."""
    return any(s.failover is not None and s.failover.enabled
               and _mode(s.failover.mode) == INTRA_POD for s in services)


def discovery_mode_errors(annotations: dict[str, str],
                          services: Iterable[DynamoComponentDeploymentSharedSpec]
                          ) -> list[FieldError]:
    """The graph's discovery-mode annotation: a known mode, `container` with intra-pod
    failover."""
    path = f"metadata.annotations[{DISCOVERY_MODE_ANNOTATION}]"
    value = annotations.get(DISCOVERY_MODE_ANNOTATION)
    if value is not None and value not in DISCOVERY_MODES:
        return [FieldError(path, f'Unsupported value: {shown(value)}: supported values: '
                                 '"pod", "container"')]
    if intra_pod_failover(services) and value != "container":
        return [FieldError(path, f"Invalid value: {shown(value or '')}: must be \"container\" "
                                 "when intra-pod failover is configured")]
    return []


def grove_pathway_errors(graph: Json, *, grove_enabled: bool) -> list[FieldError]:
    """A graph's components asking the inter-pod layout while Grove does not run the graph
    (off in the operator, or the graph opting out), refused as the original's webhook words
    it; `graph` as written, `v1beta1` (`spec.components[i]`) or `v1alpha1`
    (`spec.services.<name>`)."""
    refusal = grove_pathway_refusal(graph, grove_enabled=grove_enabled)
    if refusal is None:
        return []
    return [FieldError(f"{path}.mode", f"Forbidden: {refusal}")
            for path in _inter_pod_gms_paths(graph)]


def _inter_pod_gms_paths(graph: Json) -> list[str]:
    spec = _field(graph, "spec")
    components = spec.get("components")
    if isinstance(components, list):  # v1beta1
        return [f"spec.components[{i}].experimental.gpuMemoryService"
                for i, component in enumerate(components)
                if _mode(_field(_field(component, "experimental"), "gpuMemoryService")
                         .get("mode")) == INTER_POD]
    services = spec.get("services")
    if not isinstance(services, dict):
        return []
    return [f"spec.services.{name}.gpuMemoryService" for name, service in services.items()
            if (gms := _field(service, "gpuMemoryService")).get("enabled") is True
            and _mode(gms.get("mode")) == INTER_POD]


def _field(obj: object, key: str) -> Json:
    value = obj.get(key) if isinstance(obj, dict) else None
    return value if isinstance(value, dict) else {}
