"""DynamoGraphDeploymentScalingAdapter (dgdsa), v1beta1: the scale subresource of one graph
component, referenced by `dgdRef.componentName` (v1alpha1 says `serviceName`)."""

from __future__ import annotations

from attrs import define, field

from api.kube import Condition, ObjectMeta, Time
from api.markers import doc
from api.v1beta1.common import GROUP_VERSION


@define(kw_only=True)
class DynamoGraphDeploymentComponentRef:
    """One component of a DynamoGraphDeployment in the adapter's namespace."""

    name: str = field(metadata=doc("Name of the DynamoGraphDeployment.", min_length=1))
    component_name: str = field(
        metadata=doc("Name of the component in the graph's spec.components.", min_length=1)
    )


@define(kw_only=True)
class DynamoGraphDeploymentScalingAdapterSpec:
    """Desired state of a DynamoGraphDeploymentScalingAdapter."""

    replicas: int = field(metadata=doc("Desired replicas of the component.", minimum=0))
    dgd_ref: DynamoGraphDeploymentComponentRef = field(
        metadata=doc("The graph and component to scale.")
    )


@define(kw_only=True)
class DynamoGraphDeploymentScalingAdapterStatus:
    """Observed state of a DynamoGraphDeploymentScalingAdapter. The reference has replicas,
    selector and lastScaleTime; observedGeneration and conditions are this operator's, as in
    v1alpha1."""

    observed_generation: int | None = field(
        default=None,
        metadata=doc("The metadata.generation this status was computed from.", format="int64"),
    )
    replicas: int | None = field(
        default=None, metadata=doc("Replicas last applied to the component.")
    )
    selector: str | None = field(
        default=None, metadata=doc("Label selector of the component's pods, for HPA.")
    )
    last_scale_time: Time | None = field(
        default=None, metadata=doc("When the adapter last changed the replicas.")
    )
    conditions: list[Condition] | None = field(
        default=None, metadata=doc("Latest observations, one per type (Ready).")
    )


@define(kw_only=True)
class DynamoGraphDeploymentScalingAdapter:
    """Scales one component of a DynamoGraphDeployment through the scale subresource."""

    api_version: str = field(default=GROUP_VERSION, metadata=doc("Versioned schema."))
    kind: str = field(
        default="DynamoGraphDeploymentScalingAdapter", metadata=doc("Kind of this object.")
    )
    metadata: ObjectMeta = field(factory=dict, metadata=doc(""))
    spec: DynamoGraphDeploymentScalingAdapterSpec = field(
        metadata=doc("Desired state of the adapter.")
    )
    status: DynamoGraphDeploymentScalingAdapterStatus | None = field(
        default=None, metadata=doc("Observed state of the adapter.")
    )
