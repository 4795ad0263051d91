"""The scheduler's DynamicResources plugin: a pod's ResourceClaims, per node and at binding.

`ClaimPlan.for_pod` is PreEnqueue and PreFilter: None while a claim the pod names does not
exist yet, is being deleted or is generated for another pod (the real plugin keeps such a pod
out of scheduling without a FailedScheduling event, until a claim event). `misfit` is Filter,
in the plugin's words: an allocated claim whose node selector excludes the node ("resourceclaim
not available on the node"), or unallocated claims whose requests the node's free devices
cannot all satisfy ("cannot allocate all claims"). `commit` is PreBind: the scheduler's
finalizer, then `status.allocation` and `status.reservedFor` written on each claim.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from .dra_devices import FINALIZER, DeviceId, allocate, allocated_devices, available_on
from .writer import DEVICE_CLASSES, RESOURCE_CLAIMS, RESOURCE_SLICES, Writer

Json = dict[str, Any]

NOT_AVAILABLE = "resourceclaim not available on the node"
CANNOT_ALLOCATE = "cannot allocate all claims"


@dataclass
class ClaimPlan:
    """The claims of one pod, what is free, and the allocation found per node."""

    claims: list[Json]
    slices: list[Json] = field(default_factory=list)
    classes: dict[str, Json] = field(default_factory=dict)
    used: set[DeviceId] = field(default_factory=set)
    found: dict[str, list[Json]] = field(default_factory=dict)

    @classmethod
    def for_pod(cls, pod: Json, writer: Writer) -> ClaimPlan | None:
        spec_claims = (pod.get("spec") or {}).get("resourceClaims") or ()
        if not spec_claims:
            return cls([])
        if writer.served(RESOURCE_CLAIMS) is None:
            return None
        namespace = pod["metadata"]["namespace"]
        generated = {s.get("name"): s.get("resourceClaimName") for s in (
            pod.get("status") or {}).get("resourceClaimStatuses") or ()}
        claims = []
        for pod_claim in spec_claims:
            name = pod_claim.get("resourceClaimName") or generated.get(pod_claim.get("name"))
            claim = writer.get(RESOURCE_CLAIMS, namespace, str(name)) if name else None
            if claim is None or claim["metadata"].get("deletionTimestamp"):
                return None
            if not pod_claim.get("resourceClaimName") and not any(
                    r.get("uid") == pod["metadata"]["uid"]
                    for r in claim["metadata"].get("ownerReferences") or ()):
                return None
            claims.append(claim)
        plan = cls(claims)
        if any(not (c.get("status") or {}).get("allocation") for c in claims):
            plan.slices = writer.list_objects(RESOURCE_SLICES)
            plan.classes = {c["metadata"]["name"]: c
                            for c in writer.list_objects(DEVICE_CLASSES)}
            plan.used = allocated_devices(writer.list_objects(RESOURCE_CLAIMS))
        return plan

    def misfit(self, node: str) -> list[str]:
        """Filter: why the claims cannot be used on `node` (empty when they can)."""
        pending = []
        for claim in self.claims:
            if (claim.get("status") or {}).get("allocation"):
                if not available_on(claim, node):
                    return [NOT_AVAILABLE]
            else:
                pending.append(claim)
        if not pending:
            return []
        found = allocate(pending, node, self.slices, self.classes, self.used)
        if found is None:
            return [CANNOT_ALLOCATE]
        self.found[node] = found
        return []

    def commit(self, pod: Json, node: str, writer: Writer) -> bool:
        """PreBind: allocate and reserve every claim for the pod; False if a write failed."""
        found = iter(self.found.get(node, ()))
        consumer = {"resource": "pods", "name": pod["metadata"]["name"],
                    "uid": pod["metadata"]["uid"]}
        for claim in self.claims:
            status = copy.deepcopy(claim.get("status") or {})
            if not status.get("allocation"):
                if FINALIZER not in (claim["metadata"].get("finalizers") or ()):
                    body = copy.deepcopy(claim)
                    body["metadata"]["finalizers"] = [
                        *(claim["metadata"].get("finalizers") or ()), FINALIZER]
                    updated = writer.update(RESOURCE_CLAIMS, body)
                    if updated is None:
                        return False
                    claim = updated
                status["allocation"] = next(found)
            reserved = status.setdefault("reservedFor", [])
            if not any(r.get("uid") == consumer["uid"] for r in reserved):
                reserved.append(consumer)
            if writer.update_status(RESOURCE_CLAIMS, claim, status) is None:
                return False
        return True
