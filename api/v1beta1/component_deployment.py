"""DynamoComponentDeployment (dcd), v1beta1: one component on its own or for a graph."""

from __future__ import annotations

from attrs import define, field

from api.kube import Condition, ObjectMeta
from api.markers import doc
from api.v1beta1.common import GROUP_VERSION
from api.v1beta1.component import DynamoComponentDeploymentSpec
from api.v1beta1.replica_status import ComponentReplicaStatus


@define(kw_only=True)
class DynamoComponentDeploymentStatus:
    """Observed state of a DynamoComponentDeployment."""

    observed_generation: int | None = field(
        default=None,
        metadata=doc("The metadata.generation this status was computed from.", format="int64"),
    )
    conditions: list[Condition] | None = field(
        default=None, metadata=doc("Latest observations (Available, DynamoComponentReady).")
    )
    component: ComponentReplicaStatus | None = field(
        default=None, metadata=doc("Replica counts of the workload running the component.")
    )


@define(kw_only=True)
class DynamoComponentDeployment:
    """A single Dynamo component and the workload, Services and pods that run it."""

    api_version: str = field(default=GROUP_VERSION, metadata=doc("Versioned schema."))
    kind: str = field(default="DynamoComponentDeployment", metadata=doc("Kind of this object."))
    metadata: ObjectMeta = field(factory=dict, metadata=doc(""))
    spec: DynamoComponentDeploymentSpec = field(
        factory=DynamoComponentDeploymentSpec, metadata=doc("Desired state of the component.")
    )
    status: DynamoComponentDeploymentStatus | None = field(
        default=None, metadata=doc("Observed state of the component.")
    )
