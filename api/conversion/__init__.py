"""Conversion between nvidia.com/v1alpha1 and v1beta1 (the hub), as pure functions on JSON.

`convert(obj, "v1beta1")` (or "v1alpha1") converts any of the five kinds; the functions
`<kind>_to_hub` / `<kind>_from_hub` do one kind one way. Conversion is lossless: what the
target version cannot represent is kept in two private annotations per kind (one for the spec,
one for the status; `nvidia.com/dgd-spec` and `nvidia.com/dgd-status` for a graph, `dcd-`,
`dgdr-`, `dgdsa-` and `dm-` for the others) and restored on the way back, as long as the live
fields it belongs to are unchanged. Only this package and its tests know those annotations.

The rules per kind and the conversion decisions are described in the modules:
`component` and `pod_template` (the component spec), `graph_deployment`,
`component_deployment`, `request`, `scaling_adapter`, `model`; `rules` is the engine and
`objects` the metadata and payload handling.
"""

from __future__ import annotations

from api.conversion.component_deployment import COMPONENT_DEPLOYMENT
from api.conversion.dispatch import CONVERSIONS, VERSIONS, convert, private_annotations
from api.conversion.errors import ConversionFailure
from api.conversion.graph_deployment import GRAPH_DEPLOYMENT
from api.conversion.model import MODEL
from api.conversion.objects import HUB, SPOKE, convert_object
from api.conversion.request import GRAPH_DEPLOYMENT_REQUEST
from api.conversion.scaling_adapter import SCALING_ADAPTER
from api.kube import Json

__all__ = [
    "CONVERSIONS",
    "HUB",
    "SPOKE",
    "VERSIONS",
    "ConversionFailure",
    "component_deployment_from_hub",
    "component_deployment_to_hub",
    "convert",
    "graph_deployment_from_hub",
    "graph_deployment_request_from_hub",
    "graph_deployment_request_to_hub",
    "graph_deployment_to_hub",
    "model_from_hub",
    "model_to_hub",
    "private_annotations",
    "scaling_adapter_from_hub",
    "scaling_adapter_to_hub",
]


def graph_deployment_to_hub(obj: Json) -> Json:
    """A v1alpha1 DynamoGraphDeployment in v1beta1."""
    return convert_object(obj, GRAPH_DEPLOYMENT, to_hub=True)


def graph_deployment_from_hub(obj: Json) -> Json:
    """A v1beta1 DynamoGraphDeployment in v1alpha1."""
    return convert_object(obj, GRAPH_DEPLOYMENT, to_hub=False)


def component_deployment_to_hub(obj: Json) -> Json:
    """A v1alpha1 DynamoComponentDeployment in v1beta1."""
    return convert_object(obj, COMPONENT_DEPLOYMENT, to_hub=True)


def component_deployment_from_hub(obj: Json) -> Json:
    """A v1beta1 DynamoComponentDeployment in v1alpha1."""
    return convert_object(obj, COMPONENT_DEPLOYMENT, to_hub=False)


def graph_deployment_request_to_hub(obj: Json) -> Json:
    """A v1alpha1 DynamoGraphDeploymentRequest in v1beta1."""
    return convert_object(obj, GRAPH_DEPLOYMENT_REQUEST, to_hub=True)


def graph_deployment_request_from_hub(obj: Json) -> Json:
    """A v1beta1 DynamoGraphDeploymentRequest in v1alpha1."""
    return convert_object(obj, GRAPH_DEPLOYMENT_REQUEST, to_hub=False)


def scaling_adapter_to_hub(obj: Json) -> Json:
    """A v1alpha1 DynamoGraphDeploymentScalingAdapter in v1beta1."""
    return convert_object(obj, SCALING_ADAPTER, to_hub=True)


def scaling_adapter_from_hub(obj: Json) -> Json:
    """A v1beta1 DynamoGraphDeploymentScalingAdapter in v1alpha1."""
    return convert_object(obj, SCALING_ADAPTER, to_hub=False)


def model_to_hub(obj: Json) -> Json:
    """A v1alpha1 DynamoModel in v1beta1."""
    return convert_object(obj, MODEL, to_hub=True)


def model_from_hub(obj: Json) -> Json:
    """A v1beta1 DynamoModel in v1alpha1."""
    return convert_object(obj, MODEL, to_hub=False)
