"""A graph as the builders take it: the `v1beta1` model (the hub) and the inputs only
`v1alpha1` can state (`api.conversion.render_inputs`).

Every builder of a graph takes this pair (ARCHITECTURE.md, The API hub).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from api.conversion import HUB, convert
from api.conversion.render_inputs import RenderInputs, render_inputs
from api.convert import load
from api.origin_version import origin_version
from api.v1beta1 import DynamoComponentDeploymentSharedSpec, DynamoGraphDeployment
from backends.origin_gates import FRONTEND_SIDECAR_LOSSLESS

Json = dict[str, Any]

__all__ = ["HubGraph", "hub_graph"]


@dataclass(frozen=True)
class HubGraph:
    """One graph: its `v1beta1` model and its `v1alpha1`-only inputs."""

    model: DynamoGraphDeployment
    inputs: RenderInputs
    #: What the builders derive from the pair and ask for more than once per reconcile (the
    #: worker hash), kept as long as the pair: `spec_views` keeps one pair per generation of
    #: a graph, so a value here is computed once per change of the graph, not per reconcile.
    derived: dict[Any, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def name(self) -> str:
        """metadata.name."""
        return str(self.model.metadata.get("name", ""))

    @property
    def namespace(self) -> str:
        """metadata.namespace."""
        return str(self.model.metadata.get("namespace", ""))

    def components(self) -> list[tuple[str, DynamoComponentDeploymentSharedSpec]]:
        """The named components, in name order (the order of `v1alpha1`'s service keys)."""
        named = [(c.name, c) for c in self.model.spec.components or [] if c.name is not None]
        return sorted(named, key=lambda pair: pair[0])

    def component_type(self, name: str) -> str | None:
        """The component's `componentType` as `v1alpha1` states it: `v1beta1`'s `type` says
        prefill or decode where `v1alpha1` may say worker with a subComponentType, and has no
        word for a type it does not know."""
        return self.inputs.component(name).component_type


def hub_graph(obj: Json) -> HubGraph:
    """The pair of a graph given as JSON: as stored (the hub), or written as `v1alpha1` (a
    manifest, a test bed's object), which is taken to the hub first. The input is not
    changed, and its status is not read; ConversionFailure as `convert` raises it."""
    stored = obj if obj.get("apiVersion") == HUB else convert(obj, HUB)
    spec_only = {k: v for k, v in stored.items() if k != "status"}
    # A graph made before the gate reads its inputs as it did (`render_inputs`).
    origin = origin_version((stored.get("metadata") or {}).get("annotations"))
    remainder = FRONTEND_SIDECAR_LOSSLESS.enabled(origin)
    return HubGraph(load(DynamoGraphDeployment, spec_only),
                    render_inputs(spec_only, sidecar_remainder=remainder))
