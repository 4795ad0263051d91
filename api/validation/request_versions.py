"""One check of a DynamoGraphDeploymentRequest in either served version, for the admission
webhook and the controller alike.

The object is converted to both versions (`api.conversion`): the intent rules run on the
v1beta1 form (`request_intent`), the rules of what only v1alpha1 can hold (its profilingConfig
and older shape) on the v1alpha1 form (`request`). Each error then names the field in the
version the object was written in: v1alpha1 paths of a v1beta1 object through
`api.conversion.field_paths`, v1beta1 paths of a v1alpha1 object through the table below (the
fields v1alpha1 has a place for; the others keep their v1beta1 path and say so).
"""

from __future__ import annotations

from dataclasses import dataclass

from api.conversion import HUB, SPOKE, ConversionFailure, convert
from api.conversion.field_paths import hub_path
from api.convert import load
from api.errors import ConversionError, FieldError
from api.kube import Json
from api.v1alpha1 import DynamoGraphDeploymentRequest as SpokeRequest
from api.v1beta1.graph_deployment_request import DynamoGraphDeploymentRequest as HubRequest
from api.validation.request import (
    graph_deployment_request_warnings,
    profiles_by_config,
    validate_graph_deployment_request,
)
from api.validation.request_intent import (
    validate_request_image,
    validate_request_intent,
    validate_request_intent_update,
)

__all__ = ["RequestCheck", "check_request", "legacy_profiling"]

#: v1beta1 spec paths -> where v1alpha1 holds them (prefixes, whole segments).
_TO_SPOKE: tuple[tuple[str, str], ...] = (
    ("spec.image", "spec.profilingConfig.profilerImage"),
    ("spec.features.mocker.enabled", "spec.useMocker"),
    ("spec.overrides.dgd.metadata.name", "spec.deploymentOverrides.name"),
    ("spec.overrides.dgd.metadata.namespace", "spec.deploymentOverrides.namespace"),
    ("spec.overrides.dgd.metadata.labels", "spec.deploymentOverrides.labels"),
    ("spec.overrides.dgd.metadata.annotations", "spec.deploymentOverrides.annotations"),
    ("spec.model", "spec.model"),
    ("spec.backend", "spec.backend"),
    ("spec.autoApply", "spec.autoApply"),
    ("spec", "spec"),
)


@dataclass(frozen=True)
class RequestCheck:
    """The errors and warnings of a request, in the words of its version, and its typed
    v1beta1 form (None when it does not load)."""

    errors: list[FieldError]
    warnings: list[FieldError]
    hub: HubRequest | None = None


def legacy_profiling(spoke: SpokeRequest) -> bool:
    """The request profiles by the v1alpha1 profilingConfig rather than by its intent."""
    config = spoke.spec.profiling_config
    return config is not None and profiles_by_config(config)


def check_request(obj: Json, old: Json | None = None, *, namespace_restricted: bool = False,
                  new: bool = True, written_as: str | None = None) -> RequestCheck:
    """Every error of a create (`old` None) or an update of a request in either version.
    `new=False`: the create rules of an object already admitted (the controller's check),
    without those the original applies only when a request is created (its image's tag).
    `written_as` (HUB or SPOKE): the version whose field names the errors use, when not
    `obj`'s own (the controller reads a request stored as v1beta1 that was written as
    v1alpha1)."""
    try:
        hub_json, spoke_json = convert(obj, HUB), convert(obj, SPOKE)
        old_hub = convert(old, HUB) if old is not None else None
    except ConversionFailure as err:
        return RequestCheck([FieldError("", str(err))], [])
    written_as_hub = (written_as or obj.get("apiVersion")) == HUB
    try:
        hub = load(HubRequest, _spec_only(hub_json))
        spoke = load(SpokeRequest, _spec_only(spoke_json))
    except ConversionError as err:
        return RequestCheck(err.errors, [])
    hub_errors = (validate_request_intent(hub) if old_hub is None else
                  validate_request_intent_update(_old(old_hub), hub))
    if new and old_hub is None and not legacy_profiling(spoke):
        hub_errors += validate_request_image(hub)
    if namespace_restricted and not legacy_profiling(spoke) and not _hardware_given(hub):
        hub_errors.append(FieldError("spec.hardware", (
            "GPU hardware info is required: a namespace-restricted operator cannot discover "
            "it from the nodes; set gpuSku, vramMb or numGpusPerNode")))
    spoke_errors = validate_graph_deployment_request(
        spoke, namespace_restricted=namespace_restricted)
    spoke_warnings = graph_deployment_request_warnings(spoke)
    if written_as_hub:
        errors = hub_errors + _in_hub(spoke_errors, hub_json, spoke_json)
        notes = _in_hub(spoke_warnings, hub_json, spoke_json)
    else:
        errors = [_in_spoke(e) for e in hub_errors] + spoke_errors
        notes = spoke_warnings
    return RequestCheck(_unique(errors), _unique(notes), hub)


def _spec_only(obj: Json) -> Json:
    return {k: v for k, v in obj.items() if k != "status"}


def _old(old_hub: Json) -> HubRequest:
    """The old object with its status (its phase freezes the spec); a status that does not
    load is the operator's problem, not the user's."""
    try:
        return load(HubRequest, old_hub)
    except ConversionError:
        return load(HubRequest, _spec_only(old_hub))


def _hardware_given(hub: HubRequest) -> bool:
    hardware = hub.spec.hardware
    return hardware is not None and any(v is not None for v in (
        hardware.gpu_sku, hardware.vram_mb, hardware.num_gpus_per_node))


def _in_hub(errors: list[FieldError], hub: Json, spoke: Json) -> list[FieldError]:
    out = []
    for error in errors:
        where = hub_path(error.path, hub, spoke)
        message = error.message
        if where.spoke_only:
            message = f"{where.spoke_only} (a v1alpha1 field v1beta1 has no place for): " \
                      f"{message}"
        out.append(FieldError(where.path, message))
    return out


def _in_spoke(error: FieldError) -> FieldError:
    for prefix, target in _TO_SPOKE:
        tail = _tail(error.path, prefix)
        if tail is None:
            continue
        if prefix == "spec" and tail:
            return FieldError(error.path, f"(a v1beta1 field, kept for v1alpha1 in the "
                              f"request's conversion annotation): {error.message}")
        return FieldError(target + tail, error.message)
    return error


def _tail(path: str, prefix: str) -> str | None:
    if not path.startswith(prefix):
        return None
    tail = path[len(prefix):]
    return tail if tail == "" or tail[0] in ".[" else None


def _unique(errors: list[FieldError]) -> list[FieldError]:
    seen: set[tuple[str, str]] = set()
    out = []
    for error in errors:
        key = (error.path, error.message)
        if key not in seen:
            seen.add(key)
            out.append(error)
    return out

