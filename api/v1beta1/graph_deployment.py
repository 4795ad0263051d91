"""DynamoGraphDeployment (dgd), v1beta1: a graph of Dynamo components deployed as one unit.

Components are a list keyed by `name` (at most 25, names unique case-insensitively, at most one
of type epp); these rules are declared here as CEL rules and checked by validation.
"""

from __future__ import annotations

from typing import ClassVar

from attrs import define, field

from api.kube import Condition, EnvVar, ObjectMeta, Time
from api.markers import CelRule, doc
from api.v1beta1.common import (
    BACKEND_FRAMEWORKS,
    GROUP_VERSION,
    TOPOLOGY_DOMAIN_PATTERN,
    Number,
    ProviderOverride,
    Restart,
    ScalingAdapter,
    SpecTopologyConstraint,
)
from api.v1beta1.component import DynamoComponentDeploymentSharedSpec
from api.v1beta1.replica_status import ComponentReplicaStatus

MAX_COMPONENTS = 25
KV_TRANSFER_ENFORCEMENTS = ("required", "preferred")
#: A node label key: an optional DNS subdomain prefix and "/", then a name.
LABEL_KEY_PATTERN = (r"^(([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)"
                     r"(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*/)?"
                     r"([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)$")
DGD_STATES = ("initializing", "pending", "successful", "failed")
RESTART_PHASES = ("Pending", "Restarting", "Completed", "Failed", "Superseded")
ROLLING_UPDATE_PHASES = ("Pending", "InProgress", "Completed", "Failed")
PLACEMENT_STATES = ("Reported", "Partial", "Unsupported", "Unknown")


@define(kw_only=True)
class KvTransferPolicy:
    """Topology-aware routing of KV-cache transfers between prefill and decode workers;
    exactly one of labelKey and clusterTopologyName."""

    cel_rules: ClassVar[tuple[CelRule, ...]] = (
        CelRule(rule="has(self.labelKey) != has(self.clusterTopologyName)",
                message="exactly one of labelKey or clusterTopologyName is required"),
        CelRule(rule="!has(self.enforcement) || self.enforcement != 'preferred' || "
                     "has(self.preferredWeight)",
                message="preferredWeight is required when enforcement is preferred"),
        CelRule(rule="!has(self.preferredWeight) || "
                     "(has(self.enforcement) && self.enforcement == 'preferred')",
                message="preferredWeight may only be set when enforcement is preferred"),
    )

    cluster_topology_name: str | None = field(
        default=None, metadata=doc("A Grove ClusterTopology whose levels are projected.",
                                   min_length=1)
    )
    label_key: str | None = field(
        default=None, metadata=doc("Node label key whose value names a worker's domain.",
                                   min_length=1, max_length=317, pattern=LABEL_KEY_PATTERN)
    )
    domain: str = field(metadata=doc("Logical name of the topology level to enforce.",
                                     pattern=TOPOLOGY_DOMAIN_PATTERN))
    enforcement: str | None = field(
        default=None,
        metadata=doc("required or preferred.", enum=KV_TRANSFER_ENFORCEMENTS, default="required"),
    )
    preferred_weight: Number | None = field(
        default=None, metadata=doc("Strength of the preference (0 to 1); preferred only.",
                                   minimum=0, maximum=1)
    )


@define(kw_only=True)
class ComponentGroupComponentSpec:
    """One component of a component group."""

    name: str = field(metadata=doc("Name of a component of the graph.", min_length=1))


@define(kw_only=True)
class ComponentGroupSpec:
    """A preview scale unit of several components, rendered as one Grove scaling group."""

    name: str = field(metadata=doc("Name of the group, unique in the list.", min_length=1))
    replicas: int = field(metadata=doc("Replicas of the group.", minimum=1))
    scaling_adapter: ScalingAdapter | None = field(
        default=None, metadata=doc("Present: a scaling adapter owns the replicas.")
    )
    components: list[ComponentGroupComponentSpec] = field(
        metadata=doc("Components of the group.", max_items=16)
    )


@define(kw_only=True)
class DynamoGraphDeploymentExperimentalSpec:
    """Graph-level preview features."""

    kv_transfer_policy: KvTransferPolicy | None = field(
        default=None, metadata=doc("Topology-aware KV-cache transfer routing.")
    )
    component_groups: list[ComponentGroupSpec] | None = field(
        default=None, metadata=doc("Multi-component scale units.", max_items=16)
    )


@define(kw_only=True)
class DynamoGraphDeploymentSpec:
    """Desired state of a DynamoGraphDeployment."""

    cel_rules: ClassVar[tuple[CelRule, ...]] = (
        CelRule(
            rule="!has(self.components) || "
            "self.components.filter(c, has(c.type) && c.type == 'epp').size() <= 1",
            message="at most one component may have type epp",
        ),
        CelRule(
            rule="!has(self.components) || self.components.all(c1, !has(c1.name) || "
            "self.components.filter(c2, has(c2.name) && "
            "c2.name.lowerAscii() == c1.name.lowerAscii()).size() == 1)",
            message="component names must be unique case-insensitively",
        ),
    )

    provider_override: ProviderOverride | None = field(
        default=None, metadata=doc("Provider settings of the root resource (Grove).")
    )
    annotations: dict[str, str] | None = field(
        default=None, metadata=doc("Annotations propagated to every child resource.")
    )
    labels: dict[str, str] | None = field(
        default=None, metadata=doc("Labels propagated to every child resource.")
    )
    priority_class_name: str | None = field(
        default=None, metadata=doc("PriorityClass of the Grove PodCliqueSets.")
    )
    components: list[DynamoComponentDeploymentSharedSpec] | None = field(
        default=None,
        metadata=doc(
            "The components of the graph, keyed by name.",
            max_items=MAX_COMPONENTS,
            list_map_keys=("name",),
        ),
    )
    env: list[EnvVar] | None = field(
        default=None, metadata=doc("Environment prepended to every component's main container.")
    )
    backend_framework: str | None = field(
        default=None,
        metadata=doc("Inference backend: sglang, vllm or trtllm.", enum=BACKEND_FRAMEWORKS),
    )
    restart: Restart | None = field(
        default=None, metadata=doc("Requests a restart of the graph's pods.")
    )
    topology_constraint: SpecTopologyConstraint | None = field(
        default=None, metadata=doc("Graph-level topology constraint inherited by components.")
    )
    experimental: DynamoGraphDeploymentExperimentalSpec | None = field(
        default=None, metadata=doc("Graph-level preview features.")
    )


@define(kw_only=True)
class RestartStatus:
    """Progress of the latest restart request."""

    observed_id: str | None = field(
        default=None, metadata=doc("The spec.restart.id being processed.", json="observedID")
    )
    phase: str | None = field(
        default=None,
        metadata=doc("Pending, Restarting, Completed, Failed or Superseded.", enum=RESTART_PHASES),
    )
    in_progress: list[str] | None = field(
        default=None, metadata=doc("Components being restarted now.")
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
    """Progress of an operator-managed rolling update."""

    phase: str | None = field(
        default=None, metadata=doc("Pending, InProgress, Completed or Failed.")
    )
    start_time: Time | None = field(default=None, metadata=doc("When the update began."))
    end_time: Time | None = field(default=None, metadata=doc("When the update ended."))
    updated_components: list[str] | None = field(
        default=None, metadata=doc("Components that completed the update.")
    )


@define(kw_only=True)
class ComponentCheckpointStatus:
    """Checkpoint of one component."""

    checkpoint_name: str | None = field(
        default=None, metadata=doc("Name of the active PodSnapshot.")
    )
    checkpoint_id: str | None = field(
        default=None,
        metadata=doc("Deprecated legacy artifact ID.", json="checkpointID", deprecated=True),
    )
    identity_hash: str | None = field(
        default=None, metadata=doc("Deprecated legacy identity hash.", deprecated=True)
    )
    ready: bool | None = field(
        default=None, metadata=doc("The checkpoint is ready for pods to restore.")
    )


@define(kw_only=True)
class PlacementStatus:
    """Scheduler placement score of the graph (not populated yet)."""

    score: Number | None = field(
        default=None, metadata=doc("Worst placement score, 0 to 1, higher is better.")
    )
    state: str | None = field(
        default=None,
        metadata=doc("Reported, Partial, Unsupported or Unknown.", enum=PLACEMENT_STATES),
    )


@define(kw_only=True)
class DynamoGraphDeploymentStatus:
    """Observed state of a DynamoGraphDeployment."""

    observed_generation: int | None = field(
        default=None,
        metadata=doc("The metadata.generation this status was computed from.", format="int64"),
    )
    state: str | None = field(
        default=None,
        metadata=doc("Summary of the lifecycle.", default="initializing"),
    )
    conditions: list[Condition] | None = field(
        default=None, metadata=doc("Latest observations, one per type.")
    )
    components: dict[str, ComponentReplicaStatus] | None = field(
        default=None, metadata=doc("Replica counts per component, keyed by component name.")
    )
    restart: RestartStatus | None = field(
        default=None, metadata=doc("Progress of the latest restart request.")
    )
    checkpoints: dict[str, ComponentCheckpointStatus] | None = field(
        default=None, metadata=doc("Checkpoint per component, keyed by component name.")
    )
    rolling_update: RollingUpdateStatus | None = field(
        default=None, metadata=doc("Progress of an operator-managed rolling update.")
    )
    placement: PlacementStatus | None = field(
        default=None, metadata=doc("Scheduler placement score and reporting state.")
    )
    gpus: GraphGpuStatus | None = field(
        default=None, metadata=doc("GPUs the graph's pods take, requested and running.")
    )


@define(kw_only=True)
class DynamoGraphDeployment:
    """A graph of Dynamo components (frontend, workers, planner, EPP...) deployed and updated
    as one unit."""

    api_version: str = field(default=GROUP_VERSION, metadata=doc("Versioned schema."))
    kind: str = field(default="DynamoGraphDeployment", metadata=doc("Kind of this object."))
    metadata: ObjectMeta = field(factory=dict, metadata=doc(""))
    spec: DynamoGraphDeploymentSpec = field(
        factory=DynamoGraphDeploymentSpec, metadata=doc("Desired state of the graph.")
    )
    status: DynamoGraphDeploymentStatus | None = field(
        default=None, metadata=doc("Observed state of the graph.")
    )
