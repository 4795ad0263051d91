"""Copies a scheduled worker pod's node topology labels onto the pod (the original's
topology label controller), for `spec.experimental.kvTransferPolicy`.

The pod template says where to look (`backends.kv_transfer_policy`): the annotation
`nvidia.com/topology-label-key` names one node label, copied under the same key;
`nvidia.com/topology-cluster-topology-name` names a Grove ClusterTopology, each of whose
levels is copied from its node label into `nvidia.com/dynamo-topology.<level>`. A pod's
labels are not known before it is bound to a node, and a kubelet copies none of its node's:
so once the pod has a node, this controller reads the node (a GET, not a cache of every node)
and merge-patches the missing labels. The pod's Downward API volume then shows them to the
runtime as files. A label the node does not carry is not copied: the pod gets a Warning event
`TopologyLabelMissing` instead, and its topology stays unknown to the router.

Only the pods of a graph's component (labelled with the graph and the component) that carry a
source annotation, are scheduled and miss a label are worked on; a pod is looked at when it is
created (or listed at start-up), and when an update makes it need a copy (it got a node, or its
source changed). The pods come from the shared cache, which keeps these two annotations
(`machinery.pod_problems.trim_pod`).
"""

from __future__ import annotations

from typing import Any

import structlog

from backends import constants
from backends.kv_transfer_policy import (
    ANNOTATION_CLUSTER_TOPOLOGY,
    ANNOTATION_LABEL_KEY,
    TOPOLOGY_LABEL_PREFIX,
    topology_label,
)
from controller.errors import ApiError, NotFound, TerminalError
from controller.handlers import Predicate
from controller.manager import Manager
from controller.reconcile import Request, Result
from controller.resource import Resource
from reconcilers.machinery.context import OperatorContext
from reconcilers.machinery.resources import CLUSTER_TOPOLOGIES, NODES, PODS

Json = dict[str, Any]
log = structlog.get_logger("reconcilers.topology_label")

#: The controller's name, as controller-runtime names a controller of Pods; the event source.
NAME = "pod"
COMPONENT = "topology-label"
LABEL_MISSING = "TopologyLabelMissing"
SOURCES = (ANNOTATION_LABEL_KEY, ANNOTATION_CLUSTER_TOPOLOGY)


def needs_copy(pod: Json) -> bool:
    """A graph's scheduled pod with a topology source and a label still to copy (for a
    ClusterTopology source: no topology label yet; which levels exactly, the topology says)."""
    meta = pod.get("metadata") or {}
    labels = meta.get("labels") or {}
    if not labels.get(constants.LABEL_GRAPH_NAME) or not labels.get(constants.LABEL_COMPONENT):
        return False
    annotations = meta.get("annotations") or {}
    label_key = annotations.get(ANNOTATION_LABEL_KEY)
    if not (label_key or annotations.get(ANNOTATION_CLUSTER_TOPOLOGY)):
        return False
    if not (pod.get("spec") or {}).get("nodeName"):
        return False
    if label_key:
        return label_key not in labels
    return not any(str(k).startswith(TOPOLOGY_LABEL_PREFIX) for k in labels)


def became_needed(old: Json, new: Json) -> bool:
    """An update after which the pod needs a copy it did not need, or a new node or source."""
    if not needs_copy(new):
        return False
    if not (old.get("spec") or {}).get("nodeName"):
        return True
    old_annotations = (old.get("metadata") or {}).get("annotations") or {}
    new_annotations = (new.get("metadata") or {}).get("annotations") or {}
    if any(old_annotations.get(k) != new_annotations.get(k) for k in SOURCES):
        return True
    return not needs_copy(old)


class TopologyLabelReconciler:
    """Copies one pod's missing topology labels from its node per call."""

    def __init__(self, ctx: OperatorContext) -> None:
        self.ctx = ctx
        self.recorder = ctx.recorder(COMPONENT)

    async def reconcile(self, request: Request) -> Result | None:
        pod = await self.ctx.cache.get_or_none(PODS, request.namespace, request.name)
        if pod is None or not needs_copy(pod):
            return None
        targets = await self._targets(pod)
        if not targets:
            return None
        node_name = str(pod["spec"]["nodeName"])
        node = await _read(self.ctx, NODES, node_name, "node")
        node_labels = (node.get("metadata") or {}).get("labels") or {}
        copied: dict[str, str] = {}
        for source, target in targets:
            if source in node_labels:
                copied[target] = str(node_labels[source])
                continue
            await self.recorder.warning(pod, LABEL_MISSING, (
                f'node "{node_name}" has no label "{source}": the pod\'s topology label '
                f'"{target}" cannot be set, and its topology metadata stays unavailable'))
        if not copied:
            return None
        try:
            await self.ctx.client.patch(PODS, request.namespace, request.name,
                                         {"metadata": {"labels": copied}})
        except NotFound:
            return None  # deleted meanwhile
        log.info("copied node topology labels to the pod", node=node_name,
                 labels=sorted(copied))
        return None

    async def _targets(self, pod: Json) -> list[tuple[str, str]]:
        """(node label, pod label) pairs still missing on the pod."""
        meta = pod["metadata"]
        labels = meta.get("labels") or {}
        annotations = meta.get("annotations") or {}
        targets = []
        label_key = annotations.get(ANNOTATION_LABEL_KEY)
        if label_key and label_key not in labels:
            targets.append((str(label_key), str(label_key)))
        name = annotations.get(ANNOTATION_CLUSTER_TOPOLOGY)
        if name:
            topology = await _read(self.ctx, CLUSTER_TOPOLOGIES, str(name), "ClusterTopology")
            for level in (topology.get("spec") or {}).get("levels") or []:
                target = topology_label(str(level.get("domain", "")))
                if target not in labels:
                    targets.append((str(level.get("key", "")), target))
        return targets


async def _read(ctx: OperatorContext, resource: Resource, name: str, what: str) -> Json:
    """A cluster-scoped object the copy needs. What only its creation or a grant can fix (it
    does not exist; the operator may not read it, as a namespace-restricted one may not read
    nodes) waits for the pod's next change, without a retry loop."""
    try:
        return await ctx.client.get(resource, None, name)
    except NotFound:
        raise TerminalError(f'{what} "{name}" does not exist') from None
    except ApiError as error:
        if error.code == 403:
            raise TerminalError(f'the operator may not read {what} "{name}": '
                                f"{error.message}") from None
        raise


def register(manager: Manager, ctx: OperatorContext) -> None:
    """Add the topology label controller: woken by a pod that needs a copy when it is seen
    (created, or listed as the operator starts) or when an update makes it need one; no
    other pod event reaches its queue."""
    manager.add_controller(NAME, TopologyLabelReconciler(ctx).reconcile, for_=PODS,
                           max_concurrent_reconciles=ctx.max_concurrent_reconciles(NAME),
                           for_predicate=Predicate(create=needs_copy, update=became_needed,
                                                   delete=False))
