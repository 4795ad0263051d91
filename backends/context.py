"""The inputs of pod generation besides the component spec itself."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from backends import constants
from backends.component_spec import ComponentSpec
from backends.multinode import LWS, MultinodeDeployer
from backends.settings import OperatorSettings

__all__ = ["PodContext", "discovery_backend"]


@dataclass(frozen=True, kw_only=True)
class PodContext:
    """Where a component's pods run and what surrounds them."""

    #: Kubernetes namespace of the pods.
    namespace: str
    #: Name of the parent DynamoGraphDeployment ("" for a DCD of its own).
    graph_name: str
    #: The component's Dynamo namespace (DYN_NAMESPACE).
    dynamo_namespace: str
    #: Name multinode host names derive from: the service key (Grove) or the DCD name.
    host_name: str
    #: backendFramework of the graph or DCD, if set.
    backend_framework: str | None = None
    deployer: MultinodeDeployer = LWS
    settings: OperatorSettings = field(default_factory=OperatorSettings)
    #: Image pull secrets of the pods' namespace by registry host (see `pull_secrets`).
    pull_secrets: Mapping[str, Sequence[str]] = field(default_factory=dict)


def discovery_backend(component: ComponentSpec, settings: OperatorSettings) -> str:
    """The component's discovery backend: its annotation when present (even empty), else the
    operator's."""
    return discovery_backend_of(component.inputs.annotations, settings)


def discovery_backend_of(annotations: Mapping[str, str] | None,
                         settings: OperatorSettings) -> str:
    """The discovery backend of a component with these own annotations (`v1alpha1`'s
    spec.annotations): the annotation when present (even empty), else the operator's."""
    annotations = annotations or {}
    if constants.ANNOTATION_DISCOVERY_BACKEND in annotations:
        return annotations[constants.ANNOTATION_DISCOVERY_BACKEND]
    return settings.discovery_backend
