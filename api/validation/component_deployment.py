"""Rules for DynamoComponentDeployment."""

from __future__ import annotations

from api.errors import FieldError
from api.v1alpha1 import BACKEND_FRAMEWORKS, DynamoComponentDeployment
from api.validation import values
from api.validation.component import (
    USED_DYNAMO_NAMESPACE,
    component_warnings,
    dynamo_namespace_warnings,
    validate_component,
)
from api.validation.gpu_memory import gpu_memory_update_errors


def validate_component_deployment(dcd: DynamoComponentDeployment) -> list[FieldError]:
    """Every error in a standalone component, as for a create."""
    spec = dcd.spec
    errors = values.one_of("spec.backendFramework", spec.backend_framework, BACKEND_FRAMEWORKS)
    # A DCD has no PVC list of its own, so its mounts are not checked against one.
    return errors + validate_component(spec, "spec", backend=spec.backend_framework, pvc_names=None)


def validate_component_deployment_update(
    old: DynamoComponentDeployment, new: DynamoComponentDeployment
) -> list[FieldError]:
    """Errors of an update: those of `new`, plus a changed backend or inter-pod GMS layout."""
    errors = validate_component_deployment(new)
    if old.spec.backend_framework != new.spec.backend_framework:
        errors.append(FieldError("spec.backendFramework", "is immutable"))
    errors += gpu_memory_update_errors(old.spec, new.spec, "spec", "DynamoComponentDeployment")
    return errors


def component_deployment_warnings(dcd: DynamoComponentDeployment) -> list[FieldError]:
    """Deprecated fields in use. A graph writes `dynamoNamespace` into the DCDs it makes, so
    those are not warned about it: nobody could clear a warning about the operator's own
    write."""
    warnings = component_warnings(dcd.spec, "spec")
    if not made_by_a_graph(dcd):
        warnings += dynamo_namespace_warnings(dcd.spec, "spec", USED_DYNAMO_NAMESPACE)
    return warnings


def made_by_a_graph(dcd: DynamoComponentDeployment) -> bool:
    """The DCD's controller is a DynamoGraphDeployment."""
    return any(ref.get("kind") == "DynamoGraphDeployment" and ref.get("controller")
               for ref in dcd.metadata.get("ownerReferences") or [] if isinstance(ref, dict))
