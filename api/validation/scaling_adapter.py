"""Rules for DynamoGraphDeploymentScalingAdapter."""

from __future__ import annotations

from api import names
from api.errors import FieldError
from api.v1alpha1 import DynamoGraphDeploymentScalingAdapter
from api.validation import kube_values, values


def validate_scaling_adapter(adapter: DynamoGraphDeploymentScalingAdapter) -> list[FieldError]:
    """Every error in an adapter."""
    spec = adapter.spec
    errors = values.at_least("spec.replicas", spec.replicas, 0)
    errors += kube_values.int32("spec.replicas", spec.replicas)
    errors += values.required("spec.dgdRef.name", spec.dgd_ref.name)
    errors += values.name("spec.dgdRef.name", spec.dgd_ref.name, names.is_dns1123_subdomain)
    errors += values.required("spec.dgdRef.serviceName", spec.dgd_ref.service_name)
    return errors
