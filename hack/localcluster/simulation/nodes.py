"""The simulated nodes' kubelets registering and reporting, and the node lifecycle controller.

Each configured node is registered (and re-registered if deleted) with its status and a
Lease in kube-node-lease. A node a test marks down goes to Ready=Unknown with the unreachable
taints, its pods are marked not ready, and after `Delays.pod_eviction` they are evicted
(deleted; they stay Terminating until the node comes back, as with a dead kubelet).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from ..storage import Change
from .clock import rfc3339, rfc3339_micro
from .config import NodeSpec
from .events import EventRecorder
from .loop import Context, ControlLoop, Key
from .node_objects import UNREACHABLE_TAINT, new_node, node_status
from .objects import set_condition, terminating
from .writer import LEASES, NODES, PODS, Writer

Json = dict[str, Any]


class NodeController(ControlLoop):
    """Registers simulated nodes and keeps their status, leases and health."""

    manager = "kubelet"
    component = "kubelet"

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self.specs: dict[str, tuple[int, NodeSpec]] = {
            spec.name: (i, spec) for i, spec in enumerate(ctx.config.nodes)}
        self.lifecycle = Writer(ctx.ops, "node-controller")
        self.lifecycle_events = EventRecorder(self.lifecycle, "node-controller")
        self._down_since: dict[str, float] = {}
        self._lease_renewed: dict[str, float] = {}

    def initial_keys(self) -> Iterable[Key]:
        return [(name,) for name in self.specs]

    def keys_for(self, change: Change) -> Iterable[Key]:
        if change.resource == NODES:
            name = change.obj["metadata"]["name"]
            if name in self.specs:
                yield (name,)

    def reconcile(self, key: Key) -> float | None:
        (name,) = key
        index, spec = self.specs[name]
        node = self.writer.get(NODES, "", name)
        if node is None:
            node = self.writer.create(NODES, "", new_node(spec, index))
            if node is None:
                return 1.0
            self.lifecycle_events.normal(node, "RegisteredNode", f"Node {name} event: Registered"
                                         f" Node {name} in Controller")
        down = name in self.ctx.nodes_down
        node = self._sync_taints(node, down)
        status = node_status(spec, index, ready=not down, now=rfc3339(),
                             old=node.get("status"))
        self.writer.update_status(NODES, node, status)
        waits = [self._sync_lease(node, down)]
        if down:
            waits.append(self._sync_down_pods(name))
        else:
            self._down_since.pop(name, None)
        pending = [w for w in waits if w is not None]
        return min(pending) if pending else None

    # --- health --------------------------------------------------------------------------

    def _sync_taints(self, node: Json, down: bool) -> Json:
        taints = [t for t in (node.get("spec") or {}).get("taints") or ()
                  if t.get("key") != UNREACHABLE_TAINT]
        if down:
            old = {t.get("effect"): t for t in (node.get("spec") or {}).get("taints") or ()
                   if t.get("key") == UNREACHABLE_TAINT}
            taints.append(old.get("NoSchedule") or {"key": UNREACHABLE_TAINT,
                                                    "effect": "NoSchedule"})
            taints.append(old.get("NoExecute") or {"key": UNREACHABLE_TAINT,
                                                   "effect": "NoExecute",
                                                   "timeAdded": rfc3339()})
        current = (node.get("spec") or {}).get("taints") or []
        if taints == current:
            return node
        body = copy.deepcopy(node)
        if taints:
            body["spec"]["taints"] = taints
        else:
            body["spec"].pop("taints", None)
        return self.lifecycle.update(NODES, body) or node

    def _sync_down_pods(self, name: str) -> float | None:
        """Mark the dead node's pods not ready; evict them once the eviction delay passed."""
        now = self.ctx.clock.now()
        since = self._down_since.setdefault(name, now)
        evict = now - since >= self.delays.pod_eviction
        for pod in self.writer.pods_on(name):
            status = copy.deepcopy(pod.get("status") or {})
            conditions = status.get("conditions") or []
            if any(c.get("type") == "Ready" and c.get("status") != "False" for c in conditions):
                set_condition(conditions, "Ready", "False", rfc3339(), probe_time=True)
                status["conditions"] = conditions
                self.lifecycle.update_status(PODS, pod, status)
            if evict and not terminating(pod) and status.get("phase") not in (
                    "Succeeded", "Failed"):
                self.lifecycle_events.normal(pod, "TaintManagerEviction",
                                   f"Marking for deletion Pod {pod['metadata']['namespace']}/"
                                   f"{pod['metadata']['name']}")
                self.lifecycle.delete(PODS, pod)
        return None if evict else since + self.delays.pod_eviction - now

    # --- leases --------------------------------------------------------------------------

    def _sync_lease(self, node: Json, down: bool) -> float | None:
        name = node["metadata"]["name"]
        period = self.delays.lease_renew
        now = self.ctx.clock.now()
        lease = self.writer.get(LEASES, "kube-node-lease", name)
        if lease is None:
            self.writer.create(LEASES, "kube-node-lease", {
                "metadata": {"name": name, "namespace": "kube-node-lease",
                             "ownerReferences": [{"apiVersion": "v1", "kind": "Node",
                                                  "name": name,
                                                  "uid": node["metadata"]["uid"]}]},
                "spec": {"holderIdentity": name, "leaseDurationSeconds": 40,
                         "renewTime": rfc3339_micro()}})
            self._lease_renewed[name] = now
        elif not down and period > 0 and now - self._lease_renewed.get(name, 0.0) >= period:
            body = copy.deepcopy(lease)
            body["spec"]["renewTime"] = rfc3339_micro()
            self.writer.update(LEASES, body)
            self._lease_renewed[name] = now
        if down or period <= 0:
            return None
        return max(0.0, self._lease_renewed.get(name, now) + period - now)
