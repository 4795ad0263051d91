"""Rules for the v1alpha1 DynamoGraphDeploymentRequest: its older request shape and its
profilingConfig, which v1beta1 cannot hold.

The intent (model, backend, overrides...) is checked on the v1beta1 form for both versions
(`api.validation.request_intent`, joined by `api.validation.request_versions`); what is
checked here again (model, the override's name and namespace) says the same thing in the
same words, so the join says it once. Neither profilingConfig nor backend is required: a
request without them is profiled from its intent, with the backend chosen by the profiler.
"""

from __future__ import annotations

import attrs

from api import names
from api.convert import dump
from api.errors import FieldError
from api.markers import json_name
from api.v1alpha1 import (
    DGDR_BACKENDS,
    DGDR_FROZEN_STATES,
    LEGACY_FIELDS,
    DynamoGraphDeploymentRequest,
    DynamoGraphDeploymentRequestSpec,
    ProfilingConfigSpec,
)
from api.validation import values

GPU_DISCOVERY_NEEDS_CLUSTER_SCOPE = (
    "needs a cluster-wide operator, which may read nodes; with a namespace-restricted "
    "operator leave it off and give spec.profilingConfig.config.hardware "
    "(min_num_gpus_per_engine, max_num_gpus_per_engine, num_gpus_per_node) instead"
)


def validate_graph_deployment_request(
    dgdr: DynamoGraphDeploymentRequest, *, namespace_restricted: bool = False
) -> list[FieldError]:
    """Every error in a request, as for a create. Fields of the older shape are errors that
    say where the value moved."""
    spec = dgdr.spec
    errors = _legacy_fields(spec)
    errors += values.required("spec.model", spec.model)
    errors += values.one_of("spec.backend", spec.backend, DGDR_BACKENDS)
    if spec.profiling_config is not None and profiles_by_config(spec.profiling_config):
        errors += _profiling_config("spec.profilingConfig", spec.profiling_config)
    if spec.enable_gpu_discovery and namespace_restricted:
        errors.append(FieldError("spec.enableGpuDiscovery", GPU_DISCOVERY_NEEDS_CLUSTER_SCOPE))
    overrides = spec.deployment_overrides
    if overrides is not None:
        path = "spec.deploymentOverrides"
        errors += values.name(f"{path}.name", overrides.name, names.is_dns1123_subdomain)
        errors += values.name(f"{path}.namespace", overrides.namespace, names.is_dns1123_label)
    return errors


def validate_graph_deployment_request_update(
    old: DynamoGraphDeploymentRequest,
    new: DynamoGraphDeploymentRequest,
    *,
    namespace_restricted: bool = False,
) -> list[FieldError]:
    """Errors of an update: those of `new`, and any spec change once profiling has started."""
    errors = validate_graph_deployment_request(new, namespace_restricted=namespace_restricted)
    state = old.status.state if old.status is not None else None
    if state in DGDR_FROZEN_STATES and dump(old.spec) != dump(new.spec):
        errors.append(
            FieldError(
                "spec",
                f"is immutable once profiling has started (state {state}); delete the "
                "request and create a new one to change it",
            )
        )
    return errors


def graph_deployment_request_warnings(dgdr: DynamoGraphDeploymentRequest) -> list[FieldError]:
    """Settings that have no effect."""
    overrides = dgdr.spec.deployment_overrides
    if overrides is not None and not dgdr.spec.auto_apply:
        return [FieldError("spec.deploymentOverrides", "ignored because autoApply is not true")]
    return []


def profiles_by_config(config: ProfilingConfigSpec) -> bool:
    """Whether a profilingConfig says more than the profiler image: the v1alpha1 way of
    profiling (its config, ConfigMap, output PVC, resources or tolerations). A request with no
    more than an image is the v1alpha1 view of an intent-based request, profiled from its
    v1beta1 fields; so is one without a profilingConfig."""
    return any(getattr(config, a.name) is not None for a in attrs.fields(ProfilingConfigSpec)
               if a.name != "profiler_image")


def _legacy_fields(spec: DynamoGraphDeploymentRequestSpec) -> list[FieldError]:
    errors = []
    for attribute in attrs.fields(DynamoGraphDeploymentRequestSpec):
        name = json_name(attribute)
        if name in LEGACY_FIELDS and getattr(spec, attribute.name) is not None:
            errors.append(FieldError(f"spec.{name}", LEGACY_FIELDS[name]))
    return errors


def _profiling_config(path: str, config: ProfilingConfigSpec) -> list[FieldError]:
    errors = values.required(f"{path}.profilerImage", config.profiler_image)
    if not config.config:
        errors.append(FieldError(f"{path}.config", "required and must not be empty"))
    if config.config_map_ref is not None:
        errors += values.required(f"{path}.configMapRef.name", config.config_map_ref.name)
        errors += values.name(
            f"{path}.configMapRef.name", config.config_map_ref.name, names.is_dns1123_subdomain
        )
    errors += values.name(f"{path}.outputPVC", config.output_pvc, names.is_dns1123_subdomain)
    if isinstance(config.config, dict):
        errors += _profile_config(f"{path}.config", config.config)
    for part in ("requests", "limits"):
        amounts = (config.resources or {}).get(part) or {}
        if isinstance(amounts, dict):
            for resource, amount in amounts.items():
                errors += values.quantity(f"{path}.resources.{part}.{resource}", amount)
    return errors


#: Sections of the profiler's config that are mappings, and the SLA targets (milliseconds).
_PROFILE_SECTIONS = ("sla", "hardware", "sweep", "deployment", "engine", "planner")
_SLA_TARGETS = ("ttft", "itl", "isl", "osl")


def _profile_config(path: str, config: dict[str, object]) -> list[FieldError]:
    """The parts of the free-form profiler config whose shape the profiler relies on: its
    sections are mappings and the SLA targets positive numbers."""
    errors = []
    for section in _PROFILE_SECTIONS:
        value = config.get(section)
        if value is not None and not isinstance(value, dict):
            errors.append(FieldError(f"{path}.{section}", "must be a mapping"))
    sla = config.get("sla")
    if isinstance(sla, dict):
        for target in _SLA_TARGETS:
            value = sla.get(target)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                errors.append(FieldError(f"{path}.sla.{target}", "must be a number"))
            elif not 0 < value < 1e9:
                errors.append(FieldError(f"{path}.sla.{target}",
                                         "must be a positive number below 1e9"))
    return errors
