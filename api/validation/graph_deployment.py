"""Rules for DynamoGraphDeployment: the graph as a whole, its PVCs, restart and services."""

from __future__ import annotations

from api import names
from api.errors import FieldError
from api.v1alpha1 import (
    BACKEND_FRAMEWORKS,
    PVC,
    RESTART_STRATEGIES,
    VOLUME_ACCESS_MODES,
    DynamoComponentDeploymentSharedSpec,
    DynamoGraphDeployment,
    Restart,
)
from api.validation import kube_values, values
from api.validation.component import (
    IGNORED_DYNAMO_NAMESPACE,
    component_warnings,
    dynamo_namespace_warnings,
    validate_component,
)
from api.validation.gpu_memory import discovery_mode_errors, gpu_memory_update_errors

MAX_SERVICES = 25
MAX_PVCS = 100
# Longest <graph name> + <service name> that still gives valid Grove object names.
MAX_GROVE_NAME_LENGTH = 45


def validate_graph_deployment(dgd: DynamoGraphDeployment) -> list[FieldError]:
    """Every error in a graph, as for a create."""
    spec = dgd.spec
    services = spec.services or {}
    errors = []
    if not services:
        errors.append(FieldError("spec.services", "must have at least one service"))
    elif len(services) > MAX_SERVICES:
        errors.append(FieldError("spec.services", f"must have at most {MAX_SERVICES} services"))
    errors += _case_collisions(dgd.metadata.get("name") or "", services)
    errors += _graph_name(dgd.metadata.get("name") or "")
    errors += discovery_mode_errors(dgd.metadata.get("annotations") or {}, services.values())
    errors += values.one_of("spec.backendFramework", spec.backend_framework, BACKEND_FRAMEWORKS)
    errors += _pvcs(spec.pvcs or [])
    for i, env in enumerate(spec.envs or []):
        errors += values.required(f"spec.envs[{i}].name", env.get("name"))
        errors += kube_values.env_var(f"spec.envs[{i}]", env)
    if spec.restart is not None:
        errors += _restart(spec.restart, services)
    graph_name = dgd.metadata.get("name") or ""
    pvc_names = {p.name for p in spec.pvcs or []}
    for key, service in services.items():
        path = f"spec.services.{key}"
        errors += _service_name(path, graph_name, key, service)
        errors += validate_component(
            service, path, backend=spec.backend_framework, pvc_names=pvc_names
        )
    return errors


def validate_graph_deployment_update(
    old: DynamoGraphDeployment,
    new: DynamoGraphDeployment,
    *,
    replicas_authorized: bool = False,
) -> list[FieldError]:
    """Errors of an update: those of `new`, plus what may not change. `replicas_authorized`
    is true for the operator and the Planner, which may write replicas owned by an adapter."""
    errors = validate_graph_deployment(new)
    if old.spec.backend_framework != new.spec.backend_framework:
        errors.append(FieldError("spec.backendFramework", "is immutable"))
    old_services = old.spec.services or {}
    for key, service in (new.spec.services or {}).items():
        if key in old_services:
            errors += gpu_memory_update_errors(old_services[key], service,
                                               f"spec.services.{key}", "DynamoGraphDeployment")
    if not replicas_authorized:
        errors += _adapter_owned_replicas(old, new)
    return errors


def graph_deployment_warnings(dgd: DynamoGraphDeployment) -> list[FieldError]:
    """Deprecated fields used by the graph's services."""
    warnings = []
    for key, service in (dgd.spec.services or {}).items():
        warnings += component_warnings(service, f"spec.services.{key}")
        warnings += dynamo_namespace_warnings(service, f"spec.services.{key}",
                                              IGNORED_DYNAMO_NAMESPACE)
    return warnings


def _case_collisions(
    graph_name: str, services: dict[str, DynamoComponentDeploymentSharedSpec]
) -> list[FieldError]:
    """Keys differing only in case name the same generated objects (`<graph>-<key lowercased>`):
    two specs would then fight over one DynamoComponentDeployment."""
    first: dict[str, str] = {}
    errors = []
    for key in services:
        lowered = key.lower()
        if lowered not in first:
            first[lowered] = key
            continue
        generated = f"{graph_name}-{lowered}" if graph_name else lowered
        errors.append(
            FieldError(
                f"spec.services.{key}",
                f'service keys "{first[lowered]}" and "{key}" differ only in case and would '
                f'both be DynamoComponentDeployment "{generated}"; rename one of them',
            )
        )
    return errors


def _graph_name(graph_name: str) -> list[FieldError]:
    """The graph's name starts the names of its Services (`<graph>-<service>`), which are
    RFC 1035 labels: no dots, a letter first."""
    if not graph_name:
        return []
    return [
        FieldError("metadata.name", f"{kube_values.shown(graph_name)}: {message} (it begins "
                                    "the names of the "
                                    "graph's Services, which are RFC 1035 labels)")
        for message in names.is_dns1035_label(graph_name)
    ]


def _pvcs(pvcs: list[PVC]) -> list[FieldError]:
    errors = []
    if len(pvcs) > MAX_PVCS:
        errors.append(FieldError("spec.pvcs", f"must have at most {MAX_PVCS} items"))
    errors += [
        FieldError(e.path + ".name", e.message)
        for e in values.duplicates("spec.pvcs", (p.name for p in pvcs))
    ]
    for i, pvc in enumerate(pvcs):
        path = f"spec.pvcs[{i}]"
        errors += values.required(f"{path}.name", pvc.name)
        errors += values.name(f"{path}.name", pvc.name, names.is_dns1123_subdomain)
        errors += values.quantity(f"{path}.size", pvc.size)
        errors += values.one_of(
            f"{path}.volumeAccessMode", pvc.volume_access_mode, VOLUME_ACCESS_MODES
        )
        if pvc.create:
            for field_name, value in (
                ("storageClass", pvc.storage_class),
                ("size", pvc.size),
                ("volumeAccessMode", pvc.volume_access_mode),
            ):
                if not value or (field_name == "size" and values.is_zero(value)):
                    errors.append(
                        FieldError(f"{path}.{field_name}", "required when create is true")
                    )
    return errors


def _restart(
    restart: Restart, services: dict[str, DynamoComponentDeploymentSharedSpec]
) -> list[FieldError]:
    errors = values.required("spec.restart.id", restart.id)
    strategy = restart.strategy
    if strategy is None:
        return errors
    errors += values.one_of("spec.restart.strategy.type", strategy.type, RESTART_STRATEGIES)
    order = strategy.order or []
    if not order:
        return errors
    path = "spec.restart.strategy.order"
    if strategy.type == "Parallel":
        return [*errors, FieldError(path, "cannot be set when the strategy type is Parallel")]
    errors += values.duplicates(path, order)
    errors += [
        FieldError(f"{path}[{i}]", f'unknown service "{kube_values.clip(name)}"')
        for i, name in enumerate(order)
        if name not in services
    ]
    if len(set(order)) != len(services):
        errors.append(
            FieldError(path, f"must list each of the {len(services)} services exactly once")
        )
    return errors


def _service_name(
    path: str, graph_name: str, key: str, service: DynamoComponentDeploymentSharedSpec
) -> list[FieldError]:
    lowered = key.lower()
    errors = [
        FieldError(path, f"service name {key!r} lowercased: {message}")
        for message in names.is_dns1123_label(lowered)
    ]
    if graph_name:
        length = len(graph_name) + len(lowered)
        if service.multinode is not None:
            length += len(lowered) + len("-ldr")
        if length > MAX_GROVE_NAME_LENGTH:
            errors.append(
                FieldError(
                    path,
                    f"graph and service names give {length} characters in generated object "
                    f"names (limit {MAX_GROVE_NAME_LENGTH}); shorten the graph or service name",
                )
            )
    return errors


def _adapter_owned_replicas(
    old: DynamoGraphDeployment, new: DynamoGraphDeployment
) -> list[FieldError]:
    errors = []
    old_services = old.spec.services or {}
    for key, service in (new.spec.services or {}).items():
        before = old_services.get(key)
        if before is None or not (_adapter_enabled(before) and _adapter_enabled(service)):
            continue
        # An unset replicas means one replica.
        if (before.replicas if before.replicas is not None else 1) != (
            service.replicas if service.replicas is not None else 1
        ):
            errors.append(
                FieldError(
                    f"spec.services.{key}.replicas",
                    "cannot be changed directly while the scaling adapter is enabled; scale "
                    "the DynamoGraphDeploymentScalingAdapter instead",
                )
            )
    return errors


def _adapter_enabled(service: DynamoComponentDeploymentSharedSpec) -> bool:
    return service.scaling_adapter is not None and bool(service.scaling_adapter.enabled)
