"""A tripwire for API changes: every field of every converted object, in both versions, is
either converted by a rule or acknowledged here as existing in one version only (saved in, or
restored from, the payload). A field added to a model without a conversion decision fails
here; so does a rule naming a field that no longer exists."""

from __future__ import annotations

from collections.abc import Sequence

import attrs
import pytest

import api.v1alpha1 as alpha
import api.v1beta1 as beta
from api.conversion import CONVERSIONS
from api.conversion.component import REPLICA_STATUS_RULES, SHARED_SPEC_RULES
from api.conversion.rules import Rule
from api.markers import json_name

# (model class, rules, side of the rules, fields only this version has)
UNITS: list[tuple[type, Sequence[Rule], str, set[str]]] = [
    (
        alpha.DynamoComponentDeploymentSharedSpec,
        SHARED_SPEC_RULES,
        "spoke",
        # serviceName: in a graph the map key is the name (saved when it differs).
        {"serviceName", "dynamoNamespace", "autoscaling", "ingress"},
    ),
    (
        beta.DynamoComponentDeploymentSharedSpec,
        SHARED_SPEC_RULES,
        "hub",
        # name: the services map key.
        {
            "name",
            "providerOverride",
            "runtimeVersionOverride",
            "minAvailable",
            "roles",
            "dynamoSidecar",
        },
    ),
    (
        alpha.DynamoComponentDeploymentSpec,
        CONVERSIONS["DynamoComponentDeployment"].spec_rules,
        "spoke",
        {"dynamoNamespace", "autoscaling", "ingress"},
    ),
    (
        beta.DynamoComponentDeploymentSpec,
        CONVERSIONS["DynamoComponentDeployment"].spec_rules,
        "hub",
        {"providerOverride", "runtimeVersionOverride", "minAvailable", "roles", "dynamoSidecar"},
    ),
    (alpha.ServiceReplicaStatus, REPLICA_STATUS_RULES, "spoke", set()),
    (
        beta.ComponentReplicaStatus,
        REPLICA_STATUS_RULES,
        "hub",
        {
            "runtimeNamespace",
            "servedModelName",
            "runtimeComponentName",
            "gpuPowerLimitWatts",
            "gpusPerEngine",
            "gpusPerReplica",
            "scheduledReplicas",
        },
    ),
    (
        alpha.DynamoGraphDeploymentSpec,
        CONVERSIONS["DynamoGraphDeployment"].spec_rules,
        "spoke",
        {"pvcs"},
    ),
    (
        beta.DynamoGraphDeploymentSpec,
        CONVERSIONS["DynamoGraphDeployment"].spec_rules,
        "hub",
        {"priorityClassName", "topologyConstraint", "providerOverride", "experimental"},
    ),
    (
        alpha.DynamoGraphDeploymentStatus,
        CONVERSIONS["DynamoGraphDeployment"].status_rules,
        "spoke",
        set(),
    ),
    (
        beta.DynamoGraphDeploymentStatus,
        CONVERSIONS["DynamoGraphDeployment"].status_rules,
        "hub",
        {"checkpoints", "placement"},
    ),
    (
        alpha.DynamoComponentDeploymentStatus,
        CONVERSIONS["DynamoComponentDeployment"].status_rules,
        "spoke",
        {"podSelector"},
    ),
    (
        beta.DynamoComponentDeploymentStatus,
        CONVERSIONS["DynamoComponentDeployment"].status_rules,
        "hub",
        set(),
    ),
    (
        alpha.DynamoGraphDeploymentRequestSpec,
        CONVERSIONS["DynamoGraphDeploymentRequest"].spec_rules,
        "spoke",
        {"enableGpuDiscovery", "modelName", "sla", "gpu", "online"},
    ),
    (
        beta.DynamoGraphDeploymentRequestSpec,
        CONVERSIONS["DynamoGraphDeploymentRequest"].spec_rules,
        "hub",
        {"runtimeVersionOverride", "searchStrategy", "workload", "sla", "hardware", "modelCache"},
    ),
    (
        alpha.DynamoGraphDeploymentRequestStatus,
        CONVERSIONS["DynamoGraphDeploymentRequest"].status_rules,
        "spoke",
        {"backend"},
    ),
    (
        beta.DynamoGraphDeploymentRequestStatus,
        CONVERSIONS["DynamoGraphDeploymentRequest"].status_rules,
        "hub",
        {"profilingPhase", "profilingJobName", "deploymentInfo"},
    ),
    *[
        (
            cls,
            conversion.spec_rules if "Spec" in cls.__name__ else conversion.status_rules,
            side,
            set(),
        )
        for kind in ("DynamoGraphDeploymentScalingAdapter", "DynamoModel")
        for conversion in [CONVERSIONS[kind]]
        for side, module in (("spoke", alpha), ("hub", beta))
        for cls in (getattr(module, f"{kind}Spec"), getattr(module, f"{kind}Status"))
    ],
]


def _fields(cls: type) -> set[str]:
    return {json_name(a) for a in attrs.fields(cls)}


def _covered(rules: Sequence[Rule], side: str) -> set[str]:
    return {key for rule in rules for key in (rule.spoke if side == "spoke" else rule.hub)}


@pytest.mark.parametrize(
    ("cls", "rules", "side", "one_version_only"),
    UNITS,
    ids=[f"{side}-{cls.__name__}" for cls, _, side, _ in UNITS],
)
def test_every_field_has_a_conversion_decision(
    cls: type, rules: Sequence[Rule], side: str, one_version_only: set[str]
) -> None:
    fields = _fields(cls)
    covered = _covered(rules, side)
    assert covered <= fields, f"rules name fields {cls.__name__} no longer has"
    assert not covered & one_version_only, "a field is both converted and one-version-only"
    assert fields == covered | one_version_only
