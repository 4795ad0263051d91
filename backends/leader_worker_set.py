"""LeaderWorkerSets of a multinode DCD (the DCD path without Grove): one per replica, each a
leader pod and nodeCount-1 worker pods (each from its role's template when the component has
them: `backends.role_templates`), gang-scheduled by Volcano through a PodGroup. The
component's rolling-update annotations become the LeaderWorkerSet's `rolloutStrategy`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from backends import constants, labels
from backends.context import PodContext
from backends.deployment import deployment_strategy, object_metadata
from backends.hub_component import HubComponent
from backends.multinode import Role, node_count
from backends.pod_spec import generate_pod_spec
from backends.role_templates import role_inputs

Json = dict[str, Any]

__all__ = ["leader_worker_sets"]


def leader_worker_sets(
    dcd: HubComponent,
    ctx: PodContext,
    *,
    service_account: str = "default",
) -> list[Json]:
    """For each replica i: LeaderWorkerSet `<dcd>-<i>` and, with Volcano, PodGroup `<dcd>-<i>`."""
    base = dcd.name
    nodes = node_count(dcd.model.spec)
    replicas = 1 if dcd.model.spec.replicas is None else dcd.model.spec.replicas
    objects: list[Json] = []
    for index in range(replicas):
        name = f"{base}-{index}"
        if ctx.settings.volcano_enabled:
            objects.append(_pod_group(dcd, name, index, nodes))
        meta = object_metadata(dcd, name)
        meta["labels"] = {**meta.get("labels", {}), constants.LABEL_INSTANCE_ID: str(index)}
        leader = _template(dcd, ctx, Role("leader", name, 1, nodes), name, index, service_account)
        worker = _template(
            dcd, ctx, Role("worker", name, nodes - 1, nodes), name, index, service_account
        )
        objects.append(
            {
                "apiVersion": constants.LWS_API_VERSION,
                "kind": "LeaderWorkerSet",
                "metadata": meta,
                "spec": {
                    "replicas": 1,
                    "startupPolicy": "LeaderCreated",
                    "leaderWorkerTemplate": {
                        "size": nodes,
                        "leaderTemplate": leader,
                        "workerTemplate": worker,
                    },
                    **_rollout_strategy(dcd.inputs.annotations),
                },
            }
        )
    return objects


def _rollout_strategy(annotations: Mapping[str, str] | None) -> Json:
    """The LeaderWorkerSet's own rolling budgets from the same annotations as a Deployment's,
    when the component sets either (without them, LWS's defaults, as before)."""
    annotations = annotations or {}
    keys = (constants.ANNOTATION_MAX_SURGE, constants.ANNOTATION_MAX_UNAVAILABLE)
    if not any(k in annotations for k in keys):
        return {}
    rolling = deployment_strategy(annotations).get("rollingUpdate")
    if rolling is None:  # Recreate: LWS has no such strategy (the graph says so in an event)
        return {}
    return {"rolloutStrategy": {"type": "RollingUpdate",
                                "rollingUpdateConfiguration": dict(rolling)}}


def _template(
    dcd: HubComponent,
    ctx: PodContext,
    role: Role,
    name: str,
    index: int,
    service_account: str,
) -> Json:
    dcd = replace(dcd, inputs=role_inputs(dcd.model.spec, dcd.inputs, role.kind))
    pod = generate_pod_spec(dcd.component, role, ctx)
    pod.setdefault("serviceAccountName", service_account)
    if ctx.settings.volcano_enabled:
        pod["schedulerName"] = "volcano"
    pod_labels = {
        **labels.dcd_pod_identity(dcd, ctx.dynamo_namespace),
        **labels.dcd_pod_labels(dcd, name),
    }
    del pod_labels[constants.LABEL_SELECTOR]
    pod_labels.update(labels.dcd_object_labels(dcd))
    pod_labels[constants.LABEL_ROLE] = role.kind
    pod_labels[constants.LABEL_INSTANCE_ID] = str(index)
    annotations = labels.dcd_pod_annotations(dcd)
    if ctx.settings.volcano_enabled:
        annotations[constants.ANNOTATION_GROUP_NAME] = name
    metadata: Json = {"labels": pod_labels}
    if annotations:
        metadata["annotations"] = annotations
    return {"metadata": metadata, "spec": pod}


def _pod_group(dcd: HubComponent, name: str, index: int, nodes: int) -> Json:
    meta: Json = {
        "name": name,
        "namespace": dcd.namespace,
        "labels": {**labels.dcd_object_labels(dcd), constants.LABEL_INSTANCE_ID: str(index)},
    }
    return {
        "apiVersion": constants.VOLCANO_API_VERSION,
        "kind": "PodGroup",
        "metadata": meta,
        "spec": {"minMember": nodes},
    }
