"""Rules for DynamoComponentDeployment."""

from __future__ import annotations

from api.errors import FieldError
from api.v1alpha1 import BACKEND_FRAMEWORKS, DynamoComponentDeployment
from api.validation import values
from api.validation.component import component_warnings, validate_component


def validate_component_deployment(dcd: DynamoComponentDeployment) -> list[FieldError]:
    """Every error in a standalone component, as for a create."""
    spec = dcd.spec
    errors = values.one_of("spec.backendFramework", spec.backend_framework, BACKEND_FRAMEWORKS)
    # A DCD has no PVC list of its own, so its mounts are not checked against one.
    return errors + validate_component(spec, "spec", backend=spec.backend_framework, pvc_names=None)


def validate_component_deployment_update(
    old: DynamoComponentDeployment, new: DynamoComponentDeployment
) -> list[FieldError]:
    """Errors of an update: those of `new`, plus a changed backend."""
    errors = validate_component_deployment(new)
    if old.spec.backend_framework != new.spec.backend_framework:
        errors.append(FieldError("spec.backendFramework", "is immutable"))
    return errors


def component_deployment_warnings(dcd: DynamoComponentDeployment) -> list[FieldError]:
    """Deprecated fields in use."""
    return component_warnings(dcd.spec, "spec")
