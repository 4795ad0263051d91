"""Validation rules of the five kinds, as pure functions returning `FieldError`s.

What the CRD schema cannot say (cross-field rules, references between fields, changes from the
old object) lives here, for a validating webhook and for reconcilers, which record the errors in
a condition instead of retrying. An empty list means valid. `validate(obj, old)` picks the right
rules for any kind; `warnings(obj)` reports the deprecated fields in use, saying what each
still does.
"""

from __future__ import annotations

from typing import Any

from api.errors import FieldError
from api.v1alpha1 import (
    DynamoComponentDeployment,
    DynamoGraphDeployment,
    DynamoGraphDeploymentRequest,
    DynamoGraphDeploymentScalingAdapter,
    DynamoModel,
)
from api.validation.component import component_warnings, validate_component
from api.validation.component_deployment import (
    component_deployment_warnings,
    validate_component_deployment,
    validate_component_deployment_update,
)
from api.validation.graph_deployment import (
    graph_deployment_warnings,
    validate_graph_deployment,
    validate_graph_deployment_update,
)
from api.validation.model import validate_model, validate_model_update
from api.validation.request import (
    graph_deployment_request_warnings,
    validate_graph_deployment_request,
    validate_graph_deployment_request_update,
)
from api.validation.scaling_adapter import validate_scaling_adapter

__all__ = [
    "FieldError",
    "component_warnings",
    "validate",
    "validate_component",
    "validate_component_deployment",
    "validate_component_deployment_update",
    "validate_graph_deployment",
    "validate_graph_deployment_request",
    "validate_graph_deployment_request_update",
    "validate_graph_deployment_update",
    "validate_model",
    "validate_model_update",
    "validate_scaling_adapter",
    "warnings",
]


def validate(
    obj: Any,
    old: Any = None,
    *,
    replicas_authorized: bool = False,
    namespace_restricted: bool = False,
) -> list[FieldError]:
    """Errors of a create (`old` is None) or an update of any of the five kinds.

    `replicas_authorized`: the requester (operator or Planner) may change replicas owned by a
    scaling adapter. `namespace_restricted`: the operator watches one namespace and cannot read
    nodes, so DGDR GPU discovery is refused.
    """
    if old is not None and type(old) is not type(obj):
        raise TypeError(f"cannot compare {type(old).__name__} with {type(obj).__name__}")
    if isinstance(obj, DynamoGraphDeployment):
        if old is None:
            return validate_graph_deployment(obj)
        return validate_graph_deployment_update(old, obj, replicas_authorized=replicas_authorized)
    if isinstance(obj, DynamoComponentDeployment):
        if old is None:
            return validate_component_deployment(obj)
        return validate_component_deployment_update(old, obj)
    if isinstance(obj, DynamoGraphDeploymentRequest):
        if old is None:
            return validate_graph_deployment_request(obj, namespace_restricted=namespace_restricted)
        return validate_graph_deployment_request_update(
            old, obj, namespace_restricted=namespace_restricted
        )
    if isinstance(obj, DynamoModel):
        return validate_model(obj) if old is None else validate_model_update(old, obj)
    if isinstance(obj, DynamoGraphDeploymentScalingAdapter):
        return validate_scaling_adapter(obj)
    raise TypeError(f"no validation rules for {type(obj).__name__}")


def warnings(obj: Any) -> list[FieldError]:
    """Deprecated or ineffective fields: accepted, kept, but worth telling the user about."""
    if isinstance(obj, DynamoGraphDeployment):
        return graph_deployment_warnings(obj)
    if isinstance(obj, DynamoComponentDeployment):
        return component_deployment_warnings(obj)
    if isinstance(obj, DynamoGraphDeploymentRequest):
        return graph_deployment_request_warnings(obj)
    return []
