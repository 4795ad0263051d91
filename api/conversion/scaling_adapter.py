"""DynamoGraphDeploymentScalingAdapter: the same fields except dgdRef.serviceName (v1alpha1)
<-> dgdRef.componentName (v1beta1). Nothing needs a payload for objects the schema allows."""

from __future__ import annotations

from api.conversion.objects import KindConversion
from api.conversion.rules import nested, rename, same

__all__ = ["SCALING_ADAPTER"]

SCALING_ADAPTER = KindConversion(
    kind="DynamoGraphDeploymentScalingAdapter",
    spec_annotation="nvidia.com/dgdsa-spec",
    status_annotation="nvidia.com/dgdsa-status",
    spec_rules=[
        *same("replicas"),
        nested("dgdRef", "dgdRef", [*same("name"), rename("serviceName", "componentName")]),
    ],
    status_rules=same("observedGeneration", "replicas", "selector", "lastScaleTime", "conditions"),
)
