"""Deletes the engine group of an inter-pod failover pod that ended (the original's failover
cascade controller, for `experimental.failover.mode: InterPod`).

Engine pods of inter-pod failover run with `restartPolicy: Never` and the label
`nvidia.com/dynamo-failover-engine-group-member: "true"` (`backends.inter_pod_gms`): an engine
restarted in place would rejoin a distributed group half torn down. So when one of them
reaches a terminal phase (Failed or Succeeded), every engine pod of its group is deleted with
a grace period of 0: the pods of the same scaling group (`grove.io/podcliquescalinggroup`),
group replica (`grove.io/podcliquescalinggroup-replica-index`) and pod index in their clique
(`grove.io/podclique-pod-index`), that is the same primary or shadow across the ranks. Grove
then makes the group again from scratch. The pod that ended gets a Warning event
`FailoverCascade`. A pod without those Grove labels is left alone.

Pods are looked at when they appear (or are listed at start-up) and when an update takes one
to a terminal phase; one already being deleted is left to its deletion.
"""

from __future__ import annotations

from typing import Any

import structlog

from backends.inter_pod_gms import FAILOVER_GROUP_LABEL
from controller.errors import NotFound
from controller.handlers import Predicate
from controller.manager import Manager
from controller.reconcile import Request, Result
from reconcilers.machinery.context import OperatorContext
from reconcilers.machinery.resources import PODS

Json = dict[str, Any]
log = structlog.get_logger("reconcilers.failover_cascade")

#: The controller's name, as the original names it; the event source.
NAME = "gms-failover-cascade"
CASCADE = "FailoverCascade"
TERMINAL = ("Failed", "Succeeded")
#: The Grove labels that together name an engine group.
GROUP_LABELS = ("grove.io/podcliquescalinggroup", "grove.io/podcliquescalinggroup-replica-index",
                "grove.io/podclique-pod-index")


def _member(pod: Json) -> bool:
    labels = (pod.get("metadata") or {}).get("labels") or {}
    return labels.get(FAILOVER_GROUP_LABEL) == "true"


def _phase(pod: Json) -> str:
    return str((pod.get("status") or {}).get("phase") or "")


def ended(pod: Json) -> bool:
    """A failover engine pod in a terminal phase, not being deleted."""
    return (_member(pod) and _phase(pod) in TERMINAL
            and not (pod.get("metadata") or {}).get("deletionTimestamp"))


def became_terminal(old: Json, new: Json) -> bool:
    """An update taking a failover engine pod to a terminal phase."""
    return ended(new) and _phase(old) not in TERMINAL


def group_of(pod: Json) -> dict[str, str] | None:
    """The labels selecting the pod's engine group; None without the Grove labels."""
    labels = (pod.get("metadata") or {}).get("labels") or {}
    group = {key: str(labels.get(key) or "") for key in GROUP_LABELS}
    if not all(group.values()):
        return None
    return {FAILOVER_GROUP_LABEL: "true", **group}


class FailoverCascadeReconciler:
    """Deletes the engine group of one ended failover pod per call."""

    def __init__(self, ctx: OperatorContext) -> None:
        self.ctx = ctx
        self.recorder = ctx.recorder(NAME)

    async def reconcile(self, request: Request) -> Result | None:
        pod = await self.ctx.cache.get_or_none(PODS, request.namespace, request.name)
        if pod is None or not ended(pod):
            return None
        group = group_of(pod)
        if group is None:
            log.info("failover pod without Grove labels: no cascade", pod=request.name)
            return None
        members = await self.ctx.cache.list(PODS, request.namespace, labels=group)
        deleted = []
        for member in members:
            name = member["metadata"]["name"]
            if member["metadata"].get("deletionTimestamp"):
                continue
            try:
                await self.ctx.client.delete(PODS, request.namespace, name,
                                             grace_period_seconds=0)
            except NotFound:
                continue
            deleted.append(name)
        log.info("cascade-deleted engine group", trigger=request.name, pods=sorted(deleted),
                 **{k.rsplit("/", 1)[-1]: v for k, v in group.items() if k in GROUP_LABELS})
        pcsg, replica, index = (group[k] for k in GROUP_LABELS)
        await self.recorder.warning(pod, CASCADE, (
            f"Pod {request.name} terminated (phase={_phase(pod)}); cascade-deleted engine "
            f"group (pcsg={pcsg}, replica={replica}, index={index})"))
        return None


def register(manager: Manager, ctx: OperatorContext) -> None:
    """Add the failover cascade controller: woken by a failover engine pod that is seen
    ended (an operator starting lists it so) or that an update ends; no other pod event
    reaches its queue."""
    manager.add_controller(NAME, FailoverCascadeReconciler(ctx).reconcile, for_=PODS,
                           max_concurrent_reconciles=ctx.max_concurrent_reconciles(NAME),
                           for_predicate=Predicate(create=ended, update=became_terminal,
                                                   delete=False))
