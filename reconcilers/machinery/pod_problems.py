"""Why a component's pods are not running: image pulls, crash loops, scheduling.

A Deployment that is "1/2 available" does not say whether the second pod waits for a GPU, cannot
pull its image or crash-loops; users had to dig through pods to find out. The DCD reconciler
reads its pods from the cache, trimmed by `trim_pod` (metadata and status; of the spec, most
of a pod's size, only the node and what its GPUs depend on), and reports the first problem it
finds as the Available condition's reason, with the story in its message.

That story is all the DCD reads of its pods, so only a pod event that changes it wakes the
DCD (`PROBLEM_CHANGES`): a pod's status moves several times on its way to running (bound,
started, ready), and probes move it again all its life, while the Deployment's own status
already tells the DCD when availability changes.

Pods are found through an index: a Deployment's pods carry `nvidia.com/selector=<dcd>`, a
LeaderWorkerSet's pods `leaderworkerset.sigs.k8s.io/name=<dcd>-<i>`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from backends import constants
from backends.gpu_demand import gpu_fields
from backends.kv_transfer_policy import ANNOTATION_CLUSTER_TOPOLOGY, ANNOTATION_LABEL_KEY
from controller.cache import Cache
from controller.handlers import Predicate
from controller.informer import compact
from controller.reconcile import Request
from reconcilers.machinery.availability import (
    CONTAINER_FAILURE_REASONS,
    IMAGE_PULL_REASONS,
    UNSCHEDULABLE,
)
from reconcilers.machinery.resources import PODS

Json = dict[str, Any]

#: Index of pods by the "namespace/name" of the component they belong to.
COMPONENT_INDEX = "dynamo-component"
LWS_NAME_LABEL = "leaderworkerset.sigs.k8s.io/name"

_KEPT_METADATA = ("name", "namespace", "uid", "resourceVersion", "labels", "ownerReferences",
                  "deletionTimestamp", "creationTimestamp")
#: The only annotations kept: the topology source the topology label controller acts on.
_KEPT_ANNOTATIONS = (ANNOTATION_LABEL_KEY, ANNOTATION_CLUSTER_TOPOLOGY)
_KEPT_STATUS = ("phase", "conditions", "podIP", "podIPs", "reason", "message", "hostIP",
                "startTime")
_KEPT_CONTAINER = ("name", "ready", "restartCount", "state", "started")
_INSTANCE_SUFFIX = re.compile(r"-\d+$")
_MAX_MESSAGE = 300


def trim_pod(pod: Json) -> Json:
    """The cached form of a Pod: metadata, node and status (container states), of the spec
    only what its GPUs depend on (`gpu_fields`); compacted (keys and short strings shared
    between cached objects)."""
    meta = pod.get("metadata") or {}
    status = pod.get("status") or {}
    trimmed_status: Json = {k: status[k] for k in _KEPT_STATUS if k in status}
    for key in ("containerStatuses", "initContainerStatuses"):
        if key in status:
            trimmed_status[key] = [{k: c[k] for k in _KEPT_CONTAINER if k in c}
                                   for c in status[key] or []]
    trimmed: Json = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": _kept_metadata(meta),
        "status": trimmed_status,
    }
    spec = pod.get("spec") or {}
    kept = gpu_fields(spec)
    if spec.get("nodeName"):
        kept["nodeName"] = spec["nodeName"]
    if kept:
        trimmed["spec"] = kept
    return compact(trimmed)


def _kept_metadata(meta: Json) -> Json:
    kept = {k: meta[k] for k in _KEPT_METADATA if k in meta}
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items()
                   if k in _KEPT_ANNOTATIONS}
    if annotations:
        kept["annotations"] = annotations
    return kept


def component_of(pod: Json) -> str | None:
    """The name of the DCD whose workload runs this pod, if it looks like one."""
    labels = pod.get("metadata", {}).get("labels") or {}
    if constants.LABEL_SELECTOR in labels:
        return str(labels[constants.LABEL_SELECTOR])
    lws = labels.get(LWS_NAME_LABEL)
    if lws and _INSTANCE_SUFFIX.search(lws):
        return _INSTANCE_SUFFIX.sub("", lws)
    return None


def _index(pod: Json) -> list[str]:
    name = component_of(pod)
    return [f"{pod['metadata'].get('namespace', '')}/{name}"] if name else []


def pods_to_components(pod: Json) -> list[Request]:
    """Watch mapper: a pod event wakes the component it belongs to."""
    name = component_of(pod)
    return [Request(pod["metadata"].get("namespace", ""), name)] if name else []


def index_pods(cache: Cache) -> None:
    """Index the cache's Pods by component (before the cache starts)."""
    cache.informer(PODS, indexers={COMPONENT_INDEX: _index})


@dataclass(frozen=True)
class PodProblem:
    """What blocks a pod: a reason of `machinery.availability` and a sentence for people."""

    reason: str
    message: str


async def first_problem(cache: Cache, namespace: str, component: str) -> PodProblem | None:
    """What blocks the first pod of the component that is stuck, or None."""
    pods = await cache.by_index(PODS, COMPONENT_INDEX, f"{namespace}/{component}")
    for pod in sorted(pods, key=lambda p: str(p["metadata"]["name"])):
        problem = reported_problem(pod)
        if problem:
            return PodProblem(problem.reason, problem.message[:_MAX_MESSAGE])
    return None


def reported_problem(pod: Json) -> PodProblem | None:
    """What `first_problem` makes of this one pod: its problem, none while it is deleted."""
    if pod["metadata"].get("deletionTimestamp"):
        return None
    return _problem(pod)


def _story_changed(old: Json, new: Json) -> bool:
    return (reported_problem(old) != reported_problem(new)
            or component_of(old) != component_of(new))


#: The pod events that can change what `first_problem` reports: a pod created with a problem,
#: an update that changes its problem or its component, any deletion.
PROBLEM_CHANGES = Predicate(create=lambda pod: reported_problem(pod) is not None,
                            update=_story_changed)


def _problem(pod: Json) -> PodProblem | None:
    name = pod["metadata"]["name"]
    status = pod.get("status") or {}
    for key in ("initContainerStatuses", "containerStatuses"):
        for container in status.get(key) or []:
            waiting = (container.get("state") or {}).get("waiting") or {}
            reason = waiting.get("reason", "")
            if reason in IMAGE_PULL_REASONS or reason in CONTAINER_FAILURE_REASONS:
                detail = waiting.get("message", "")
                text = f"pod {name} container {container.get('name')}: {reason}"
                return PodProblem(reason, f"{text}: {detail}" if detail else text)
    for condition in status.get("conditions") or []:
        if (condition.get("type") == "PodScheduled" and condition.get("status") == "False"
                and condition.get("reason") == "Unschedulable"):
            detail = condition.get("message", "")
            text = f"pod {name} is unschedulable"
            return PodProblem(UNSCHEDULABLE, f"{text}: {detail}" if detail else text)
    return None
