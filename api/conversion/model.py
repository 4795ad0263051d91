"""DynamoModel: the same shape in both versions; every field converts natively."""

from __future__ import annotations

from api.conversion.objects import KindConversion
from api.conversion.rules import same

__all__ = ["MODEL"]

MODEL = KindConversion(
    kind="DynamoModel",
    spec_annotation="nvidia.com/dm-spec",
    status_annotation="nvidia.com/dm-status",
    spec_rules=same("modelName", "baseModelName", "modelType", "source"),
    status_rules=same(
        "observedGeneration", "endpoints", "readyEndpoints", "totalEndpoints", "conditions"
    ),
)
