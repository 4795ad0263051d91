"""Replica counts of one component, as reported in v1beta1 DGD and DCD status."""

from __future__ import annotations

from attrs import define, field

from api.markers import doc

COMPONENT_KINDS = ("PodClique", "PodCliqueScalingGroup", "Deployment", "LeaderWorkerSet")


@define(kw_only=True)
class ComponentReplicaStatus:
    """Replica counts and runtime identity of one component, read from its workload."""

    component_kind: str | None = field(
        default=None,
        metadata=doc("Kind of the workload behind the component.", enum=COMPONENT_KINDS),
    )
    component_names: list[str] | None = field(
        default=None,
        metadata=doc("Names of the workloads; old and new ones during a rolling update."),
    )
    runtime_namespace: str | None = field(
        default=None, metadata=doc("Effective Dynamo runtime namespace of the component.")
    )
    served_model_name: str | None = field(
        default=None, metadata=doc("Primary model identity of the rendered serving pod.")
    )
    runtime_component_name: str | None = field(
        default=None, metadata=doc("Dynamo component identity from the pod's --endpoint.")
    )
    gpu_power_limit_watts: int | None = field(
        default=None, metadata=doc("Per-GPU power limit configured.", minimum=1)
    )
    gpus_per_engine: int | None = field(
        default=None, metadata=doc("GPUs of one inference engine.", minimum=0, format="int64")
    )
    gpus_per_replica: int | None = field(
        default=None,
        metadata=doc("GPUs added by one more replica.", minimum=0, format="int64"),
    )
    replicas: int | None = field(
        default=None, metadata=doc("Replicas that exist and are not terminating.", minimum=0)
    )
    updated_replicas: int | None = field(
        default=None, metadata=doc("Replicas at the desired revision.", minimum=0)
    )
    ready_replicas: int | None = field(default=None, metadata=doc("Ready replicas.", minimum=0))
    available_replicas: int | None = field(
        default=None, metadata=doc("Available replicas.", minimum=0)
    )
    scheduled_replicas: int | None = field(
        default=None,
        metadata=doc("Replicas scheduled by the backend, in component-replica units.", minimum=0),
    )
