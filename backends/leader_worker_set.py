"""LeaderWorkerSets of a multinode DCD (the DCD path without Grove): groups of a leader pod and
nodeCount-1 worker pods (each from its role's template when the component has them:
`backends.role_templates`), in one of two layouts.

**Native** (every DCD from now on, as the original operator renders it today): one
LeaderWorkerSet `<dcd>-0` whose `spec.replicas` is the DCD's replicas, so LWS itself replaces
the groups on a template change, by its `rolloutStrategy`: the component's rolling-update
annotations when it sets them (counts or percentages of the replicas; a pair that comes to
zero and zero becomes one surge, as LWS refuses it), else LWS's own default, maxUnavailable 1
and maxSurge 0: one group at a time, R-1 of R serving throughout. The name is the original's:
it adopts the first LeaderWorkerSet of the legacy layout. No PodGroup of ours: under Volcano
the pods keep `schedulerName: volcano`, and gang scheduling is LWS's own (its Volcano provider
makes a PodGroup per group and revision, where the LWS controller is configured for it); the
original's native layout makes no PodGroup either.

**Legacy** (`LwsLayout.LEGACY`): what operators before this one wrote, one LeaderWorkerSet per
replica `<dcd>-<i>` with `replicas: 1` and the label `instance-id=<i>` (on its pods too), and,
with Volcano, a PodGroup `<dcd>-<i>` its pods name. Each of those rolls its one group alone,
so a template change restarted every group at once. A DCD found running it keeps it, rendered
byte for byte as before, while its pod templates do not change (scaling adds or removes indexed
LeaderWorkerSets, restarting nothing): an operator upgrade restarts no pod. The first template
change, which restarts every legacy group anyway, moves it to the native layout: `<dcd>-0` is
updated in place (replicas R, the new templates, no instance-id), and the other indexed
LeaderWorkerSets and the PodGroups are pruned. The original instead migrates at once on
upgrade (adopting `<dcd>-0`, deleting the rest), restarting groups 1..R-1 with no change at
all. Which layout a DCD runs is told from the live objects (`reconcilers.component.lws_layout`);
this module only renders.
"""

from __future__ import annotations

import enum
import math
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

__all__ = ["LwsLayout", "leader_worker_sets", "native_name"]


class LwsLayout(enum.Enum):
    """How a multinode DCD's groups are laid out in LeaderWorkerSets (see the module)."""

    NATIVE = "native"
    LEGACY = "legacy"


def native_name(dcd: str) -> str:
    """The one LeaderWorkerSet of the native layout: `<dcd>-0`, the legacy layout's first."""
    return f"{dcd}-0"


def leader_worker_sets(
    dcd: HubComponent,
    ctx: PodContext,
    *,
    service_account: str = "default",
    layout: LwsLayout = LwsLayout.NATIVE,
) -> list[Json]:
    """The DCD's LeaderWorkerSets (and, in the legacy layout under Volcano, PodGroups)."""
    if layout is LwsLayout.LEGACY:
        return _legacy(dcd, ctx, service_account)
    nodes = node_count(dcd.model.spec)
    replicas = 1 if dcd.model.spec.replicas is None else dcd.model.spec.replicas
    name = native_name(dcd.name)
    leader = _template(dcd, ctx, Role("leader", name, 1, nodes), service_account)
    worker = _template(dcd, ctx, Role("worker", name, nodes - 1, nodes), service_account)
    return [_leader_worker_set(dcd, object_metadata(dcd, name), replicas, nodes, leader, worker,
                               _rollout_strategy(dcd.inputs.annotations, replicas))]


def _legacy(dcd: HubComponent, ctx: PodContext, service_account: str) -> list[Json]:
    """For each replica i: LeaderWorkerSet `<dcd>-<i>` and, with Volcano, PodGroup `<dcd>-<i>`."""
    nodes = node_count(dcd.model.spec)
    replicas = 1 if dcd.model.spec.replicas is None else dcd.model.spec.replicas
    strategy = _rollout_strategy(dcd.inputs.annotations, None)
    objects: list[Json] = []
    for index in range(replicas):
        name = f"{dcd.name}-{index}"
        if ctx.settings.volcano_enabled:
            objects.append(_pod_group(dcd, name, index, nodes))
        meta = object_metadata(dcd, name)
        meta["labels"] = {**meta.get("labels", {}), constants.LABEL_INSTANCE_ID: str(index)}
        leader = _template(dcd, ctx, Role("leader", name, 1, nodes), service_account, index)
        worker = _template(dcd, ctx, Role("worker", name, nodes - 1, nodes), service_account,
                           index)
        objects.append(_leader_worker_set(dcd, meta, 1, nodes, leader, worker, strategy))
    return objects


def _leader_worker_set(dcd: HubComponent, meta: Json, replicas: int, nodes: int, leader: Json,
                       worker: Json, strategy: Json) -> Json:
    return {
        "apiVersion": constants.LWS_API_VERSION,
        "kind": "LeaderWorkerSet",
        "metadata": meta,
        "spec": {
            "replicas": replicas,
            "startupPolicy": "LeaderCreated",
            "leaderWorkerTemplate": {
                "size": nodes,
                "leaderTemplate": leader,
                "workerTemplate": worker,
            },
            **strategy,
        },
    }


def _rollout_strategy(annotations: Mapping[str, str] | None, replicas: int | None) -> Json:
    """The LeaderWorkerSet's own rolling budgets from the same annotations as a Deployment's,
    when the component sets either (without them, LWS's defaults). `replicas`: those of the
    native LeaderWorkerSet, which LWS scales the budgets by (None: the legacy layout's, kept
    as it was written)."""
    annotations = annotations or {}
    keys = (constants.ANNOTATION_MAX_SURGE, constants.ANNOTATION_MAX_UNAVAILABLE)
    if not any(k in annotations for k in keys):
        return {}
    rolling = deployment_strategy(annotations).get("rollingUpdate")
    if rolling is None:  # Recreate: LWS has no such strategy (the graph says so in an event)
        return {}
    rolling = dict(rolling)
    if replicas and (_scaled(rolling["maxSurge"], replicas, up=True) == 0
                     and _scaled(rolling["maxUnavailable"], replicas, up=False) == 0):
        # LWS refuses budgets that come to zero and zero; a Deployment then surges by one.
        rolling["maxSurge"] = 1
    return {"rolloutStrategy": {"type": "RollingUpdate", "rollingUpdateConfiguration": rolling}}


def _scaled(value: int | str, replicas: int, *, up: bool) -> int:
    """A count, or a percentage of `replicas` rounded up (surge) or down (unavailable)."""
    if isinstance(value, int):
        return value
    fraction = int(value.rstrip("%")) * replicas / 100
    return math.ceil(fraction) if up else math.floor(fraction)


def _template(
    dcd: HubComponent,
    ctx: PodContext,
    role: Role,
    service_account: str,
    index: int | None = None,
) -> Json:
    """A role's pod template; `index`: the legacy layout's replica, on the pods as instance-id
    and, under Volcano, naming that replica's PodGroup."""
    dcd = replace(dcd, inputs=role_inputs(dcd.model.spec, dcd.inputs, role.kind))
    pod = generate_pod_spec(dcd.component, role, ctx)
    pod.setdefault("serviceAccountName", service_account)
    if ctx.settings.volcano_enabled:
        pod["schedulerName"] = "volcano"
    pod_labels = {
        **labels.dcd_pod_identity(dcd, ctx.dynamo_namespace),
        **labels.dcd_pod_labels(dcd, role.name),
    }
    del pod_labels[constants.LABEL_SELECTOR]
    pod_labels.update(labels.dcd_object_labels(dcd))
    pod_labels[constants.LABEL_ROLE] = role.kind
    annotations = labels.dcd_pod_annotations(dcd)
    if index is not None:
        pod_labels[constants.LABEL_INSTANCE_ID] = str(index)
        if ctx.settings.volcano_enabled:
            annotations[constants.ANNOTATION_GROUP_NAME] = role.name
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
