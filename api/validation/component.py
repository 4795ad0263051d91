"""Rules for one component spec: a DCD's `spec` or one entry of a DGD's `spec.services`."""

from __future__ import annotations

from collections.abc import Collection

from api import names
from api.errors import FieldError
from api.v1alpha1 import (
    COMPONENT_TYPES,
    SUB_COMPONENT_TYPES,
    DynamoComponentDeploymentSharedSpec,
    EPPConfig,
    IngressSpec,
    ResourceItem,
    Resources,
    VolumeMount,
)
from api.validation import kube_values, values
from api.validation.gpu_memory import gpu_memory_errors

#: The end of the error of a volume mount whose PVC the graph's `spec.pvcs` does not declare
#: (a `v1alpha1` rule: `v1beta1` has no `pvcs`, and its mounts name existing claims).
UNDECLARED_PVC = "is not declared in spec.pvcs"
# The only backend with a default compilation-cache mount point.
CACHE_DEFAULT_BACKEND = "vllm"
EPP = "epp"
#: Types that mean "the generic component" themselves.
GENERIC_TYPES = ("main", "default")


def validate_component(
    spec: DynamoComponentDeploymentSharedSpec,
    path: str,
    *,
    backend: str | None,
    pvc_names: Collection[str] | None,
) -> list[FieldError]:
    """Every error in one component. `pvc_names` are the PVCs a graph declares (None for a
    standalone DCD, whose mounts cannot be checked here)."""
    # componentType is a free string (the API reference's example is "main"): unknown types
    # get the generic defaults, which `component_warnings` says.
    errors = values.one_of(
        f"{path}.subComponentType", spec.sub_component_type or None, SUB_COMPONENT_TYPES
    )
    errors += values.at_least(f"{path}.replicas", spec.replicas, 0)
    if spec.multinode is not None:
        errors += values.at_least(f"{path}.multinode.nodeCount", spec.multinode.node_count, 2)
    if spec.resources is not None:
        errors += _resources(f"{path}.resources", spec.resources)
    for i, mount in enumerate(spec.volume_mounts or []):
        errors += _volume_mount(f"{path}.volumeMounts[{i}]", mount, backend, pvc_names)
    if spec.ingress is not None:
        errors += _ingress(f"{path}.ingress", spec.ingress)
    if spec.shared_memory is not None and not spec.shared_memory.disabled:
        size = spec.shared_memory.size
        errors += values.quantity(f"{path}.sharedMemory.size", size)
        if size is None or values.is_zero(size):
            errors.append(
                FieldError(f"{path}.sharedMemory.size", "required when disabled is false")
            )
    if spec.model_ref is not None:
        errors += values.required(f"{path}.modelRef.name", spec.model_ref.name)
    for i, env in enumerate(spec.envs or []):
        errors += values.required(f"{path}.envs[{i}].name", env.get("name"))
        errors += kube_values.env_var(f"{path}.envs[{i}]", env)
    errors += values.name(f"{path}.envFromSecret", spec.env_from_secret, names.is_dns1123_subdomain)
    errors += _epp(spec, path)
    errors += gpu_memory_errors(spec, path, backend=backend)
    errors += _passed_on(spec, path)
    return errors


def _passed_on(spec: DynamoComponentDeploymentSharedSpec, path: str) -> list[FieldError]:
    """What the component's objects carry as given: labels, annotations, int32 counts, the
    main container and the free-form pod spec, by Kubernetes' rules."""
    errors = kube_values.label_map(f"{path}.labels", spec.labels)
    # Both become label values of the component's objects and pods.
    if spec.component_type:
        errors += kube_values.label_value(f"{path}.componentType", spec.component_type)
    if spec.service_name:
        errors += kube_values.label_value(f"{path}.serviceName", spec.service_name)
    errors += kube_values.annotation_map(f"{path}.annotations", spec.annotations)
    errors += kube_values.int32(f"{path}.replicas", spec.replicas)
    if spec.multinode is not None:
        errors += kube_values.int32(f"{path}.multinode.nodeCount", spec.multinode.node_count)
    if spec.extra_pod_metadata is not None:
        meta = spec.extra_pod_metadata
        errors += kube_values.label_map(f"{path}.extraPodMetadata.labels", meta.labels)
        errors += kube_values.annotation_map(f"{path}.extraPodMetadata.annotations",
                                          meta.annotations)
    if spec.ingress is not None:
        errors += kube_values.label_map(f"{path}.ingress.labels", spec.ingress.labels)
        errors += kube_values.annotation_map(f"{path}.ingress.annotations",
                                          spec.ingress.annotations)
    extra = spec.extra_pod_spec
    if extra is not None:
        if extra.main_container is not None:
            errors += kube_values.container(f"{path}.extraPodSpec.mainContainer",
                                            extra.main_container, main=True)
        errors += kube_values.pod_spec(f"{path}.extraPodSpec", extra.pod_spec)
    return errors


def component_warnings(spec: DynamoComponentDeploymentSharedSpec, path: str) -> list[FieldError]:
    """Deprecated fields (accepted and kept, but they do nothing) and component types without
    defaults of their own."""
    warnings = []
    kind = spec.component_type
    if kind and kind not in COMPONENT_TYPES:
        warnings.append(
            FieldError(
                f"{path}.componentType",
                f"{kube_values.shown(kind)} has no defaults of its own; the generic component "
                "defaults apply "
                "(no ports, probes or service account are added; known types: "
                f"{', '.join(t for t in COMPONENT_TYPES if t not in GENERIC_TYPES)})",
            )
        )
    if spec.autoscaling is not None:
        warnings.append(
            FieldError(
                f"{path}.autoscaling",
                "deprecated and ignored; enable scalingAdapter and point HPA, KEDA or the "
                "Planner at the DynamoGraphDeploymentScalingAdapter instead",
            )
        )
    return warnings


#: What `dynamoNamespace` does in a graph's service: the graph computes every namespace.
IGNORED_DYNAMO_NAMESPACE = ("deprecated and ignored; the Dynamo namespace is computed from the "
                            "Kubernetes namespace and the graph name")
#: What it does in a DynamoComponentDeployment of its own, where it is still used.
USED_DYNAMO_NAMESPACE = ("deprecated; it still sets this component's Dynamo namespace "
                         "(DYN_NAMESPACE and the nvidia.com/dynamo-namespace label) and will be "
                         "removed in a future version; without it the namespace is computed from "
                         "the Kubernetes namespace and the component's name")


def dynamo_namespace_warnings(spec: DynamoComponentDeploymentSharedSpec, path: str,
                              message: str) -> list[FieldError]:
    """The deprecated `dynamoNamespace` in use, with what it does where it stands."""
    if not spec.dynamo_namespace:
        return []
    return [FieldError(f"{path}.dynamoNamespace", message)]


def _resources(path: str, resources: Resources) -> list[FieldError]:
    errors = []
    for part, item, positive_gpu in (
        ("requests", resources.requests, False),
        ("limits", resources.limits, True),
    ):
        if item is not None:
            errors += _resource_item(f"{path}.{part}", item, positive_gpu=positive_gpu)
    for i, claim in enumerate(resources.claims or []):
        errors += values.required(f"{path}.claims[{i}].name", claim.get("name"))
    return errors


def _resource_item(path: str, item: ResourceItem, *, positive_gpu: bool) -> list[FieldError]:
    errors = values.quantity(f"{path}.cpu", item.cpu)
    errors += values.quantity(f"{path}.memory", item.memory)
    errors += values.gpu_count(f"{path}.gpu", item.gpu, positive=positive_gpu)
    for key, amount in (item.custom or {}).items():
        errors += values.quantity(f"{path}.custom.{key}", amount)
    return errors


def _volume_mount(
    path: str, mount: VolumeMount, backend: str | None, pvc_names: Collection[str] | None
) -> list[FieldError]:
    errors = values.required(f"{path}.name", mount.name)
    if mount.name and pvc_names is not None and mount.name not in pvc_names:
        errors.append(
            FieldError(f"{path}.name", f'PVC "{mount.name}" {UNDECLARED_PVC}')
        )
    if mount.mount_point:
        if not mount.mount_point.startswith("/"):
            errors.append(FieldError(f"{path}.mountPoint", "must be an absolute path"))
    elif not mount.use_as_compilation_cache:
        errors.append(
            FieldError(f"{path}.mountPoint", "required unless useAsCompilationCache is true")
        )
    elif backend != CACHE_DEFAULT_BACKEND:
        errors.append(
            FieldError(
                f"{path}.mountPoint",
                f"required: only the {CACHE_DEFAULT_BACKEND} backend has a default "
                f"compilation cache path (backendFramework is {backend or 'not set'})",
            )
        )
    return errors


def _ingress(path: str, ingress: IngressSpec) -> list[FieldError]:
    if not ingress.enabled:
        return []
    if not ingress.host:
        return [FieldError(f"{path}.host", "required when ingress is enabled")]
    # The generated host is <hostPrefix><host>.<hostSuffix or "local">.
    host = f"{ingress.host_prefix or ''}{ingress.host}.{ingress.host_suffix or 'local'}"
    checked = host[2:] if host.startswith("*.") else host
    errors = [
        FieldError(f"{path}.host", f'host name "{host}": {message}')
        for message in names.is_dns1123_subdomain(checked)
    ]
    if ingress.tls is not None:
        errors += values.name(
            f"{path}.tls.secretName", ingress.tls.secret_name, names.is_dns1123_subdomain
        )
    return errors


def _epp(spec: DynamoComponentDeploymentSharedSpec, path: str) -> list[FieldError]:
    is_epp = spec.component_type == EPP
    config = spec.epp_config
    if config is None:
        return [FieldError(f"{path}.eppConfig", "required for componentType epp")] if is_epp else []
    if not is_epp:
        return [FieldError(f"{path}.eppConfig", "only allowed for componentType epp")]
    errors = _epp_config(f"{path}.eppConfig", config)
    if spec.multinode is not None:
        errors.append(FieldError(f"{path}.multinode", "epp components run on a single node"))
    if spec.replicas not in (None, 1):
        errors.append(FieldError(f"{path}.replicas", "epp components run exactly 1 replica"))
    if spec.scaling_adapter is not None and spec.scaling_adapter.enabled:
        errors.append(
            FieldError(
                f"{path}.scalingAdapter.enabled",
                "not supported for epp components, which run exactly 1 replica",
            )
        )
    return errors


def _epp_config(path: str, config: EPPConfig) -> list[FieldError]:
    if (config.config_map_ref is None) == (config.config is None):
        return [FieldError(path, "exactly one of configMapRef and config must be set")]
    if config.config_map_ref is not None:
        return values.required(f"{path}.configMapRef.name", config.config_map_ref.get("name"))
    return []
