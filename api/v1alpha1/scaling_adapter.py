"""DynamoGraphDeploymentScalingAdapter (dgdsa): the scale subresource of one graph service.

HPA, KEDA, the Planner or `kubectl scale` write `spec.replicas`; the adapter controller is the
only writer of the service's replicas in the graph, so autoscalers never race each other there.
"""

from __future__ import annotations

from attrs import define, field

from api.kube import Condition, ObjectMeta, Time
from api.markers import doc
from api.v1alpha1.graph_deployment import GROUP_VERSION


@define(kw_only=True)
class DynamoGraphDeploymentServiceRef:
    """One service of a DynamoGraphDeployment in the adapter's namespace."""

    name: str = field(metadata=doc("Name of the DynamoGraphDeployment.", min_length=1))
    service_name: str = field(
        metadata=doc("Key of the service in the graph's spec.services.", min_length=1)
    )


@define(kw_only=True)
class DynamoGraphDeploymentScalingAdapterSpec:
    """Desired state of a DynamoGraphDeploymentScalingAdapter."""

    replicas: int = field(
        metadata=doc(
            "Desired replicas of the target service, set by an autoscaler or by hand.",
            minimum=0,
        )
    )
    dgd_ref: DynamoGraphDeploymentServiceRef = field(
        metadata=doc("The graph and service to scale.")
    )


@define(kw_only=True)
class DynamoGraphDeploymentScalingAdapterStatus:
    """Observed state of a DynamoGraphDeploymentScalingAdapter."""

    observed_generation: int | None = field(
        default=None,
        metadata=doc("The metadata.generation this status was computed from.", format="int64"),
    )
    replicas: int | None = field(
        default=None,
        metadata=doc(
            "Replicas last applied to the service in the graph; the scale subresource reports "
            "it as the current count."
        ),
    )
    selector: str | None = field(
        default=None,
        metadata=doc("Label selector of the service's pods, as a string, for HPA."),
    )
    last_scale_time: Time | None = field(
        default=None, metadata=doc("When the adapter last changed the service's replicas.")
    )
    conditions: list[Condition] | None = field(
        default=None,
        metadata=doc(
            "Latest observations, one per type (Ready): whether the target graph and service "
            "exist and the service runs the replicas asked for."
        ),
    )


@define(kw_only=True)
class DynamoGraphDeploymentScalingAdapter:
    """Scales one service of a DynamoGraphDeployment through the standard scale subresource, so
    that HPA, KEDA, the Planner or kubectl scale can drive it. It is the only writer of that
    service's replicas."""

    api_version: str = field(
        default=GROUP_VERSION, metadata=doc("Versioned schema of this object.")
    )
    kind: str = field(
        default="DynamoGraphDeploymentScalingAdapter", metadata=doc("Kind of this object.")
    )
    # No description: the API server allows nothing on metadata but its name rules.
    metadata: ObjectMeta = field(factory=dict, metadata=doc(""))
    spec: DynamoGraphDeploymentScalingAdapterSpec = field(
        metadata=doc("Desired state of the adapter.")
    )
    status: DynamoGraphDeploymentScalingAdapterStatus | None = field(
        default=None, metadata=doc("Observed state of the adapter.")
    )
