"""DynamoComponentDeployment (dcd): one component, run on its own or on behalf of a graph."""

from __future__ import annotations

from attrs import define, field

from api.kube import Condition, ObjectMeta
from api.markers import doc
from api.v1alpha1.component import DynamoComponentDeploymentSpec
from api.v1alpha1.graph_deployment import GROUP_VERSION
from api.v1alpha1.replica_status import ServiceReplicaStatus


@define(kw_only=True)
class DynamoComponentDeploymentStatus:
    """Observed state of a DynamoComponentDeployment."""

    observed_generation: int | None = field(
        default=None,
        metadata=doc("The metadata.generation this status was computed from.", format="int64"),
    )
    conditions: list[Condition] | None = field(
        default=None, metadata=doc("Latest observations, one per type (Available, Valid).")
    )
    pod_selector: dict[str, str] | None = field(
        default=None, metadata=doc("Labels that select the component's pods.")
    )
    service: ServiceReplicaStatus | None = field(
        default=None, metadata=doc("Replica counts of the workload running the component.")
    )


@define(kw_only=True)
class DynamoComponentDeployment:
    """A single Dynamo component and the Kubernetes workload, Services and Ingress that run
    it."""

    api_version: str = field(
        default=GROUP_VERSION, metadata=doc("Versioned schema of this object.")
    )
    kind: str = field(default="DynamoComponentDeployment", metadata=doc("Kind of this object."))
    # No description: the API server allows nothing on metadata but its name rules.
    metadata: ObjectMeta = field(factory=dict, metadata=doc(""))
    spec: DynamoComponentDeploymentSpec = field(
        factory=DynamoComponentDeploymentSpec,
        metadata=doc("Desired state of the component."),
    )
    status: DynamoComponentDeploymentStatus | None = field(
        default=None, metadata=doc("Observed state of the component.")
    )
