"""What a request held as the hub (`v1beta1`) says that only `v1alpha1` can: the inputs of the
profilingConfig way of profiling.

A request written in `v1alpha1` may hold fields `v1beta1` has no place for, and they decide
how it is profiled: the rest of `profilingConfig` (config, configMapRef, outputPVC, resources,
tolerations), `enableGpuDiscovery`, `deploymentOverrides.workersImage`, and the older shape's
`modelName`, `sla`, `gpu` and `online`. Conversion keeps them in the request's spec payload
(`nvidia.com/dgdr-spec`); only this package reads it, so the DGDR controller and its legacy
builders (`backends.profiling_job`) get them here, as `RequestInputs`, next to the `v1beta1`
model they read everything else from.

The values are exactly those of the request's `v1alpha1` view (`convert(obj, "v1alpha1")`,
`tests/api/test_request_inputs.py`), taken by conversion's own rules
(`api.conversion.request`): a projected group (profilingConfig with useMocker, backend,
deploymentOverrides) is the saved one while it still converts to the live `v1beta1` fields,
else what those fields give (an edit in `v1beta1` wins); a field no rule names is given back
as saved. A request written in `v1beta1` has no payload: its profilingConfig then holds no
more than its image, and it is profiled from its intent.
"""

from __future__ import annotations

from typing import Any

import attrs

from api.conversion.objects import HUB, read_payload
from api.conversion.request import GRAPH_DEPLOYMENT_REQUEST
from api.conversion.rules import convert_fields
from api.convert import load
from api.kube import Json, copy_json
from api.v1alpha1 import DynamoGraphDeploymentRequestSpec
from api.v1alpha1.graph_deployment_request import (
    DeploymentOverridesSpec,
    GPUSpec,
    ProfilingConfigSpec,
    SLASpec,
)

__all__ = ["RequestInputs", "request_inputs"]


@attrs.frozen
class RequestInputs:
    """A request's spec fields as its `v1alpha1` view holds them, where `v1beta1` has no
    place for them or gives them otherwise (the `v1alpha1` models' values)."""

    #: `backend` as `v1alpha1` reads it: `v1beta1`'s, unless that is `auto` (none).
    backend: str | None = None
    use_mocker: bool | None = None
    enable_gpu_discovery: bool | None = None
    profiling_config: ProfilingConfigSpec | None = None
    deployment_overrides: DeploymentOverridesSpec | None = None
    #: The older request shape (rejected by validation, kept so it can be reported).
    model_name: str | None = None
    sla: SLASpec | None = None
    gpu: GPUSpec | None = None
    online: bool | None = None


_FIELDS = tuple(f.name for f in attrs.fields(RequestInputs))


def request_inputs(obj: Json) -> RequestInputs:
    """The `v1alpha1` inputs of a request held as the hub. Only reads `obj`. ValueError for
    another kind or version; `api.errors.ConversionError` (a ValueError) when the
    `v1alpha1` spec does not fit its model (the view then does not load either)."""
    if obj.get("apiVersion") != HUB or obj.get("kind") != GRAPH_DEPLOYMENT_REQUEST.kind:
        raise ValueError(f"request inputs are read from a request in {HUB}, not "
                         f"{obj.get('apiVersion')} {obj.get('kind')}")
    spec = _read(obj.get("spec"))
    meta = _read(obj.get("metadata"))
    annotations = _read(meta.get("annotations"))
    saved = read_payload(annotations.get(GRAPH_DEPLOYMENT_REQUEST.spec_annotation)) or {}
    # The spec's rules are few and small: all of them, as conversion runs them on the spec.
    fields, _ = convert_fields(spec, GRAPH_DEPLOYMENT_REQUEST.spec_rules, to_hub=False,
                               restored=saved)
    loaded = load(DynamoGraphDeploymentRequestSpec, copy_json(fields))
    return RequestInputs(**{name: getattr(loaded, name) for name in _FIELDS})


def _read(value: Any) -> Json:
    return value if isinstance(value, dict) else {}
