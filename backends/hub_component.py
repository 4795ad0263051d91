"""A DynamoComponentDeployment as the builders on `v1beta1` take it: the `v1beta1` model (the
hub) and the inputs only `v1alpha1` can state of its one component
(`api.conversion.render_inputs`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from api.conversion import HUB, convert
from api.conversion.render_inputs import ComponentInputs, render_inputs
from api.convert import load
from api.v1beta1 import DynamoComponentDeployment
from backends import labels
from backends.component_spec import ComponentSpec
from backends.origin_gates import FRONTEND_SIDECAR_LOSSLESS

Json = dict[str, Any]

__all__ = ["HubComponent", "hub_component"]


@dataclass(frozen=True)
class HubComponent:
    """One DCD: its `v1beta1` model and its component's `v1alpha1`-only inputs."""

    model: DynamoComponentDeployment
    inputs: ComponentInputs

    @property
    def name(self) -> str:
        """metadata.name."""
        return str(self.model.metadata.get("name", ""))

    @property
    def namespace(self) -> str:
        """metadata.namespace."""
        return str(self.model.metadata.get("namespace", ""))

    @property
    def service(self) -> str:
        """The component's name (`v1alpha1`'s serviceName, else metadata.name)."""
        return self.model.spec.name or self.name

    @property
    def component(self) -> ComponentSpec:
        """Its one component, as the pod builders take it."""
        return ComponentSpec(self.model.spec, self.inputs)

    def graph_name(self) -> str:
        """The graph the DCD belongs to (`backends.labels.graph_name`)."""
        return labels.graph_name(self.inputs.labels, self.model.metadata)


def hub_component(obj: Json) -> HubComponent:
    """The pair of a DCD given as JSON: as stored (the hub), or written as `v1alpha1` (a
    manifest, a test bed's object), taken to the hub first. The input is not changed, and its
    status is not read; ConversionFailure as `convert` raises it."""
    stored = obj if obj.get("apiVersion") == HUB else convert(obj, HUB)
    spec_only = {k: v for k, v in stored.items() if k != "status"}
    model = load(DynamoComponentDeployment, spec_only)
    name = model.spec.name or str(model.metadata.get("name", ""))
    # A DCD made before the gate reads its inputs as it did (`render_inputs`); its origin is
    # read from them either way (in its annotations, or its pod template's).
    inputs = render_inputs(spec_only, sidecar_remainder=False).component(name)
    if FRONTEND_SIDECAR_LOSSLESS.enabled_for(ComponentSpec(model.spec, inputs)):
        inputs = render_inputs(spec_only).component(name)
    return HubComponent(model, inputs)
