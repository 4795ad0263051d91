"""DynamoComponentDeployment: the component rules plus backendFramework and serviceName <->
name. v1beta1 requires the name: a DCD without serviceName converts to one named by its
metadata.name, as in the original, and back to one without serviceName while the name is
still that (a marker in the spec payload). Status: service <-> component; podSelector is
v1alpha1 only (saved)."""

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
    defaulted_name=("serviceName", "name"),
)
