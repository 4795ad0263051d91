"""Replica counts of one service, as reported in DGD and DCD status."""

from __future__ import annotations

from attrs import define, field

from api.markers import doc

COMPONENT_KINDS = ("PodClique", "PodCliqueScalingGroup", "Deployment", "LeaderWorkerSet")


@define(kw_only=True)
class ServiceReplicaStatus:
    """Replica counts of one service, read from the workload that runs it."""

    component_kind: str | None = field(
        default=None,
        metadata=doc(
            "Kind of the workload behind the service: PodClique, PodCliqueScalingGroup, "
            "Deployment or LeaderWorkerSet.",
            enum=COMPONENT_KINDS,
        ),
    )
    component_name: str | None = field(
        default=None, metadata=doc("Name of the workload behind the service.")
    )
    component_names: list[str] | None = field(
        default=None,
        metadata=doc(
            "Names of the workloads behind the service: one normally, the old and the new "
            "during a rolling update."
        ),
    )
    replicas: int | None = field(
        default=None,
        metadata=doc("Replicas that exist and are not terminating.", minimum=0),
    )
    updated_replicas: int | None = field(
        default=None,
        metadata=doc("Replicas already at the desired revision.", minimum=0),
    )
    ready_replicas: int | None = field(
        default=None,
        metadata=doc(
            "Ready replicas; reported for PodClique, Deployment and LeaderWorkerSet, left out "
            "for PodCliqueScalingGroup.",
            minimum=0,
        ),
    )
    available_replicas: int | None = field(
        default=None,
        metadata=doc(
            "Available replicas (ready for at least minReadySeconds, or with every PodClique "
            "of a scaling group available); reported for Deployment and "
            "PodCliqueScalingGroup, left out otherwise.",
            minimum=0,
        ),
    )
