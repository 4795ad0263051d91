"""The ReplicaSet controller: keep `spec.replicas` pods of the template, report their counts.

Creates missing pods from the template (named `<rs>-<random>`, controller-owned), deletes
surplus ones in the order the real controller prefers (unscheduled, pending, not ready,
newest first), and writes replicas / fullyLabeledReplicas / readyReplicas / availableReplicas /
observedGeneration, with availability honouring minReadySeconds.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any, ClassVar

from ..errors import ApiError
from ..selectors import LabelSelector
from ..storage import Change, ResourceKey
from .clock import parse_rfc3339, rfc3339
from .loop import Context, ControlLoop, Key
from .objects import (
    condition,
    controller_ref,
    meta,
    pod_active,
    pod_from_template,
    pod_ready,
    terminating,
)
from .pod_creation import CreateAttempts, replica_failure
from .writer import PODS, REPLICA_SETS

Json = dict[str, Any]


def available_since(pod: Json, min_ready_seconds: int, now: datetime) -> tuple[bool, float | None]:
    """Whether a pod counts as available, and if not yet, in how many seconds it will."""
    if not pod_ready(pod):
        return False, None
    if min_ready_seconds <= 0:
        return True, None
    ready = condition((pod.get("status") or {}).get("conditions"), "Ready") or {}
    since = parse_rfc3339(ready.get("lastTransitionTime"))
    if since is None:
        return False, None
    left = min_ready_seconds - (now - since).total_seconds()
    return (True, None) if left <= 0 else (False, left)


def deletion_order(pods: list[Json]) -> list[Json]:
    """Pods in the order to delete them (controller.ActivePods): unscheduled before scheduled,
    pending before running, unready before ready, more restarts first, newest first."""
    def rank(pod: Json) -> tuple[int, int, int, int]:
        status = pod.get("status") or {}
        bound = 1 if (pod.get("spec") or {}).get("nodeName") else 0
        phase = {"Pending": 0, "Unknown": 1, "Running": 2}.get(status.get("phase", "Pending"), 0)
        restarts = sum(int(c.get("restartCount") or 0)
                       for c in status.get("containerStatuses") or ())
        return (bound, phase, 1 if pod_ready(pod) else 0, -restarts)

    newest_first = sorted(pods, key=lambda p: str(meta(p).get("creationTimestamp", "")),
                          reverse=True)
    return sorted(newest_first, key=rank)  # stable: ties stay newest first


class ReplicaSetController(ControlLoop):
    """Keeps each ReplicaSet's pods at spec.replicas."""

    component = "replicaset-controller"
    #: The kind kept (the ReplicationController controller is this one on another kind).
    resource: ClassVar[ResourceKey] = REPLICA_SETS
    kind: ClassVar[str] = "ReplicaSet"

    def selector(self, spec: Json) -> LabelSelector:
        return LabelSelector.from_label_selector(spec.get("selector") or {})

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self.creates = CreateAttempts(self.writer, self.delays)

    def initial_keys(self) -> Iterable[Key]:
        return [(o["metadata"]["namespace"], o["metadata"]["name"])
                for o in self.writer.list_objects(self.resource)]

    def keys_for(self, change: Change) -> Iterable[Key]:
        if change.resource == self.resource:
            return [(change.obj["metadata"]["namespace"], change.obj["metadata"]["name"])]
        if change.resource == PODS:
            ref = controller_ref(change.obj)
            if ref is not None and ref.get("kind") == self.kind:
                return [(change.obj["metadata"]["namespace"], ref.get("name", ""))]
        return ()

    def reconcile(self, key: Key) -> float | None:
        namespace, name = key
        rs = self.writer.get(self.resource, namespace, name)
        if rs is None:
            return None
        spec = rs.get("spec") or {}
        pods = self.writer.owned(PODS, rs)
        active = [p for p in pods if pod_active(p)]
        refusal: ApiError | None = None
        if not terminating(rs):
            want = int(spec.get("replicas", 1))
            diff = want - len(active)
            if diff > 0:
                refusal = self._create_pods(rs, diff)
            elif diff < 0:
                for pod in deletion_order(active)[:-diff]:
                    if self.writer.delete(PODS, pod):
                        self.events.normal(rs, "SuccessfulDelete",
                                           f"Deleted pod: {pod['metadata']['name']}")
                pods = self.writer.owned(PODS, rs)
                active = [p for p in pods if pod_active(p)]
        wake = self._write_status(rs, active, refusal)
        retry = self.creates.retry_after(rs)
        return retry if wake is None else wake if retry is None else min(wake, retry)

    def _create_pods(self, rs: Json, count: int) -> ApiError | None:
        """Create `count` pods; stop at the first refusal and return it."""
        spec = rs["spec"]
        for _ in range(count):
            body = pod_from_template(spec.get("template") or {}, namespace=rs["metadata"][
                "namespace"], owner=rs, generate_name=f"{rs['metadata']['name']}-")
            created, refusal = self.creates.create(rs, body)
            if refusal is not None:
                self.events.warning(rs, "FailedCreate", f"Error creating: {refusal.message}")
                return refusal
            if created is not None:
                self.events.normal(rs, "SuccessfulCreate",
                                   f"Created pod: {created['metadata']['name']}")
        return None

    def _write_status(self, rs: Json, active: list[Json],
                      refusal: ApiError | None) -> float | None:
        spec = rs.get("spec") or {}
        selector = self.selector(spec)
        template_labels = ((spec.get("template") or {}).get("metadata") or {}).get(
            "labels") or {}
        min_ready = int(spec.get("minReadySeconds") or 0)
        now = datetime.now(UTC)
        ready = available = 0
        fully_labeled = 0
        wake: float | None = None
        for pod in active:
            labels = pod["metadata"].get("labels") or {}
            if selector.matches(labels) and all(labels.get(k) == v
                                                 for k, v in template_labels.items()):
                fully_labeled += 1
            if pod_ready(pod):
                ready += 1
            ok, left = available_since(pod, min_ready, now)
            if ok:
                available += 1
            elif left is not None:
                wake = left if wake is None else min(wake, left)
        old = rs.get("status") or {}
        status: Json = {"replicas": len(active)}
        for field_name, value in (("fullyLabeledReplicas", fully_labeled),
                                  ("readyReplicas", ready), ("availableReplicas", available)):
            if value:
                status[field_name] = value
        status["observedGeneration"] = rs["metadata"].get("generation", 1)
        conditions = replica_failure(copy.deepcopy(old.get("conditions") or []), refusal,
                                     rfc3339())
        if conditions:
            status["conditions"] = conditions
        self.writer.update_status(self.resource, rs, status)
        return wake
