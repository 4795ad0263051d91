"""DynamoComponentDeployment: the component rules plus backendFramework and serviceName <->
name. A DCD without serviceName converts to one without name (v1beta1's defaulting fills it
from metadata.name). Status: service <-> component; podSelector is v1alpha1 only (saved)."""

from __future__ import annotations

from api.conversion.component import COMPONENT_DEPLOYMENT_SPEC_RULES, component_status_rule
from api.conversion.objects import KindConversion
from api.conversion.rules import same

__all__ = ["COMPONENT_DEPLOYMENT"]

COMPONENT_DEPLOYMENT = KindConversion(
    kind="DynamoComponentDeployment",
    spec_annotation="nvidia.com/dcd-spec",
    status_annotation="nvidia.com/dcd-status",
    spec_rules=COMPONENT_DEPLOYMENT_SPEC_RULES,
    status_rules=[*same("observedGeneration", "conditions"), component_status_rule()],
)
