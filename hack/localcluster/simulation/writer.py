"""Reads from storage and writes through `Operations` on behalf of one simulated component.

Writes go through the same verbs as any client (validation, defaults, managedFields, watch
events), under the component's field manager. A conflict raises `Retry` so the control loop
requeues the key; a vanished object is not an error.
"""

from __future__ import annotations

import copy
from typing import Any

import structlog

from ..errors import ApiError
from ..operations import Operations, WriteOptions
from ..registry import ResourceType
from ..selectors import LabelSelector
from ..storage import ResourceKey

Json = dict[str, Any]
log = structlog.get_logger("localcluster.simulation")

PODS: ResourceKey = ("", "pods")
NODES: ResourceKey = ("", "nodes")
SERVICES: ResourceKey = ("", "services")
ENDPOINTS: ResourceKey = ("", "endpoints")
EVENTS: ResourceKey = ("", "events")
LEASES: ResourceKey = ("coordination.k8s.io", "leases")
ENDPOINT_SLICES: ResourceKey = ("discovery.k8s.io", "endpointslices")
DEPLOYMENTS: ResourceKey = ("apps", "deployments")
REPLICA_SETS: ResourceKey = ("apps", "replicasets")
JOBS: ResourceKey = ("batch", "jobs")
CRDS: ResourceKey = ("apiextensions.k8s.io", "customresourcedefinitions")
RESOURCE_CLAIMS: ResourceKey = ("resource.k8s.io", "resourceclaims")
RESOURCE_CLAIM_TEMPLATES: ResourceKey = ("resource.k8s.io", "resourceclaimtemplates")
RESOURCE_SLICES: ResourceKey = ("resource.k8s.io", "resourceslices")
DEVICE_CLASSES: ResourceKey = ("resource.k8s.io", "deviceclasses")


class Retry(Exception):
    """The write lost a race (409); reconcile the key again shortly."""


class Writer:
    """One component's view of the cluster: storage reads, `Operations` writes."""

    def __init__(self, ops: Operations, manager: str) -> None:
        self.ops = ops
        self.opts = WriteOptions(manager=manager, user_agent=manager)

    # --- reads ---------------------------------------------------------------------------

    def served(self, resource: ResourceKey) -> ResourceType | None:
        """The storage version's type of a resource, or None when it is not served (no CRD)."""
        versions = self.ops.registry.versions_of(*resource)
        for rt in versions:
            if rt.version == (rt.storage_version or rt.version):
                return rt
        return versions[0] if versions else None

    def get(self, resource: ResourceKey, namespace: str, name: str) -> Json | None:
        return self.ops.storage.get(resource, namespace, name)

    def list_objects(self, resource: ResourceKey, namespace: str | None = None,
             selector: LabelSelector | None = None) -> list[Json]:
        """Objects in (namespace, name) order; with a selector, only those it matches."""
        if selector is None:
            return self.ops.storage.list_objects(resource, namespace)
        return self.ops.storage.list_selected(resource, namespace, selector)

    def pods_on(self, node: str) -> list[Json]:
        """Pods bound to `node` (any phase), in (namespace, name) order."""
        return self.ops.storage.list_by_field(PODS, None, "spec.nodeName", node)

    def owned(self, resource: ResourceKey, owner: Json) -> list[Json]:
        """Objects of `resource` whose controller reference is `owner`."""
        uid = owner["metadata"]["uid"]
        out = []
        for res, obj in self.ops.storage.dependents(uid):
            if res != resource:
                continue
            if any(r.get("uid") == uid and r.get("controller")
                   for r in obj["metadata"].get("ownerReferences") or ()):
                out.append(obj)
        return out

    # --- writes --------------------------------------------------------------------------

    def _rt(self, resource: ResourceKey) -> ResourceType:
        rt = self.served(resource)
        if rt is None:
            raise Retry(f"{resource} is not served")
        return rt

    def create(self, resource: ResourceKey, namespace: str, body: Json) -> Json | None:
        created, refusal = self.create_or_refusal(resource, namespace, body)
        if refusal is not None:
            log.warning("simulated create failed", resource=resource, namespace=namespace,
                        manager=self.opts.manager, error=refusal.message)
        return created

    def create_or_refusal(self, resource: ResourceKey, namespace: str,
                          body: Json) -> tuple[Json | None, ApiError | None]:
        """Create `body`: the stored object, or the error the server refused it with (neither
        when the namespace is being deleted, which controllers stay quiet about)."""
        rt = self._rt(resource)
        body = {**body, "apiVersion": rt.api_version, "kind": rt.kind}
        try:
            return self.ops.create(rt, namespace, body, self.opts).obj, None
        except ApiError as err:
            if err.code == 409:
                raise Retry(err.message) from None
            if err.code == 403 and "being terminated" in err.message:
                return None, None
            return None, err

    def update(self, resource: ResourceKey, obj: Json) -> Json | None:
        """Replace the object (its resourceVersion guards against lost updates)."""
        return self._write(resource, obj, "")

    def update_status(self, resource: ResourceKey, obj: Json, status: Json) -> Json | None:
        """Write `status` over `obj` when it differs; returns the stored object."""
        if obj.get("status") == status:
            return obj
        body = copy.copy(obj)
        body["status"] = status
        return self._write(resource, body, "status")

    def _write(self, resource: ResourceKey, obj: Json, subresource: str) -> Json | None:
        rt = self._rt(resource)
        meta = obj["metadata"]
        try:
            return self.ops.update(rt, meta.get("namespace", ""), meta["name"],
                                   {**obj, "apiVersion": rt.api_version}, self.opts,
                                   subresource=subresource).obj
        except ApiError as err:
            if err.code == 409:
                raise Retry(err.message) from None
            if err.code == 404:
                return None
            log.warning("simulated update failed", resource=resource, name=meta["name"],
                        manager=self.opts.manager, error=err.message)
            return None

    def delete(self, resource: ResourceKey, obj: Json, *, grace: int | None = None,
               propagation: str | None = None) -> bool:
        """Delete `obj` (guarded by its uid); False when it was already gone."""
        rt = self._rt(resource)
        meta = obj["metadata"]
        options: Json = {"preconditions": {"uid": meta["uid"]}}
        if grace is not None:
            options["gracePeriodSeconds"] = grace
        if propagation is not None:
            options["propagationPolicy"] = propagation
        try:
            self.ops.delete(rt, meta.get("namespace", ""), meta["name"], options)
            return True
        except ApiError as err:
            if err.code == 409 and "Precondition" in err.message:
                return False
            if err.code == 404:
                return False
            raise Retry(err.message) from None
