"""DynamoGraphDeployment (dgd): a graph of Dynamo components deployed together."""

from __future__ import annotations

from typing import ClassVar

from attrs import define, field

from api.kube import Condition, EnvVar, ObjectMeta, Quantity, Time
from api.markers import CelRule, doc
from api.v1alpha1.component import BACKEND_FRAMEWORKS, DynamoComponentDeploymentSharedSpec
from api.v1alpha1.replica_status import ServiceReplicaStatus

GROUP_VERSION = "nvidia.com/v1alpha1"
RESTART_STRATEGIES = ("Sequential", "Parallel")
RESTART_PHASES = ("Pending", "Restarting", "Completed", "Failed", "Superseded")
VOLUME_ACCESS_MODES = ("ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod")


@define(kw_only=True)
class PVC:
    """A PersistentVolumeClaim that components of the graph can mount by name."""

    cel_rules: ClassVar[tuple[CelRule, ...]] = (
        CelRule(
            rule="!has(self.create) || !self.create || "
            "(has(self.size) && has(self.storageClass) && has(self.volumeAccessMode))",
            message="When create is true, size, storageClass, and volumeAccessMode are required",
        ),
    )

    create: bool | None = field(
        default=None, metadata=doc("Create the claim instead of using an existing one.")
    )
    name: str = field(metadata=doc("Name of the claim; volumeMounts refer to it."))
    storage_class: str | None = field(
        default=None, metadata=doc("Storage class of a created claim; needed when create is true.")
    )
    size: Quantity | None = field(
        default=None, metadata=doc("Requested size of a created claim; needed when create is true.")
    )
    volume_access_mode: str | None = field(
        default=None,
        metadata=doc(
            "Access mode of a created claim (ReadWriteOnce, ReadOnlyMany, ReadWriteMany or "
            "ReadWriteOncePod); needed when create is true."
        ),
    )


@define(kw_only=True)
class RestartStrategy:
    """How the services of a graph are restarted."""

    type: str | None = field(
        default=None,
        metadata=doc(
            "Sequential restarts one service after another; Parallel restarts all at once.",
            enum=RESTART_STRATEGIES,
            default="Sequential",
        ),
    )
    order: list[str] | None = field(
        default=None,
        metadata=doc(
            "Order of a sequential restart, listing every service once. Alphabetical when "
            "left out; not allowed with Parallel."
        ),
    )


@define(kw_only=True)
class Restart:
    """A request to restart the pods of the graph."""

    id: str = field(
        metadata=doc(
            "Any string; changing it starts a new restart of the graph, following the strategy.",
            min_length=1,
        )
    )
    strategy: RestartStrategy | None = field(
        default=None, metadata=doc("Order in which the services are restarted.")
    )


@define(kw_only=True)
class DynamoGraphDeploymentSpec:
    """Desired state of a DynamoGraphDeployment."""

    pvcs: list[PVC] | None = field(
        default=None,
        metadata=doc(
            "Persistent volume claims the components can mount; names must be unique.",
            max_items=100,
        ),
    )
    services: dict[str, DynamoComponentDeploymentSharedSpec] | None = field(
        default=None,
        metadata=doc(
            "The components of the graph, by service name.",
            max_properties=25,
        ),
    )
    envs: list[EnvVar] | None = field(
        default=None,
        metadata=doc(
            "Environment variables for every service; a service's own envs win on conflicts."
        ),
    )
    backend_framework: str | None = field(
        default=None,
        metadata=doc("Inference backend: sglang, vllm or trtllm.", enum=BACKEND_FRAMEWORKS),
    )
    restart: Restart | None = field(
        default=None, metadata=doc("Requests a rolling restart of the graph's pods.")
    )
    # Added after v0.8.
    annotations: dict[str, str] | None = field(
        default=None, metadata=doc("Annotations propagated to every child resource.")
    )
    labels: dict[str, str] | None = field(
        default=None, metadata=doc("Labels propagated to every child resource.")
    )


@define(kw_only=True)
class RestartStatus:
    """Progress of the latest restart request."""

    observed_id: str | None = field(
        default=None,
        metadata=doc("The spec.restart.id being (or last) processed.", json="observedID"),
    )
    phase: str | None = field(
        default=None,
        metadata=doc("Pending, Restarting, Completed, Failed or Superseded."),
    )
    in_progress: list[str] | None = field(
        default=None, metadata=doc("Services being restarted now.")
    )


@define(kw_only=True)
class GraphGpuStatus:
    """The GPUs a graph's pods take (this operator's own status; the original has none)."""

    requested: int | None = field(
        default=None,
        metadata=doc("GPUs the graph's pods request at their desired replicas (multinode "
                     "pods per node).", format="int64"),
    )
    running: int | None = field(
        default=None, metadata=doc("GPUs of the graph's ready replicas.", format="int64")
    )


@define(kw_only=True)
class RollingUpdateStatus:
    """Progress of an operator-managed rolling update (added after v0.8)."""

    phase: str | None = field(
        default=None, metadata=doc("Pending, InProgress, Completed or Failed.")
    )
    start_time: Time | None = field(default=None, metadata=doc("When the update began."))
    end_time: Time | None = field(
        default=None, metadata=doc("When the update ended, successfully or not.")
    )
    updated_components: list[str] | None = field(
        default=None, metadata=doc("Services that completed the update.")
    )


@define(kw_only=True)
class DynamoGraphDeploymentStatus:
    """Observed state of a DynamoGraphDeployment."""

    observed_generation: int | None = field(
        default=None,
        metadata=doc("The metadata.generation this status was computed from.", format="int64"),
    )
    state: str | None = field(
        default=None, metadata=doc("Summary of the lifecycle: pending, successful or failed.")
    )
    conditions: list[Condition] | None = field(
        default=None, metadata=doc("Latest observations, one per type (Ready).")
    )
    services: dict[str, ServiceReplicaStatus] | None = field(
        default=None, metadata=doc("Replica counts per service, keyed like spec.services.")
    )
    restart: RestartStatus | None = field(
        default=None, metadata=doc("Progress of the latest restart request.")
    )
    rolling_update: RollingUpdateStatus | None = field(
        default=None, metadata=doc("Progress of an operator-managed rolling update.")
    )
    gpus: GraphGpuStatus | None = field(
        default=None, metadata=doc("GPUs the graph's pods take, requested and running.")
    )


@define(kw_only=True)
class DynamoGraphDeployment:
    """A graph of Dynamo components (frontend, workers, planner...) deployed and updated as one
    unit."""

    api_version: str = field(
        default=GROUP_VERSION, metadata=doc("Versioned schema of this object.")
    )
    kind: str = field(default="DynamoGraphDeployment", metadata=doc("Kind of this object."))
    # No description: the API server allows nothing on metadata but its name rules.
    metadata: ObjectMeta = field(factory=dict, metadata=doc(""))
    spec: DynamoGraphDeploymentSpec = field(
        factory=DynamoGraphDeploymentSpec,
        metadata=doc("Desired state of the graph."),
    )
    status: DynamoGraphDeploymentStatus | None = field(
        default=None, metadata=doc("Observed state of the graph.")
    )
