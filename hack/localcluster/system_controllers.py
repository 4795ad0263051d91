"""The control loops inside kube-apiserver and kube-controller-manager that every cluster has.

- CRD establishment: a new CRD's resources are served and its status says Established; a
  deleted CRD's objects are removed before it goes away. The local APIServices follow what is
  served (`api_services`).
- Garbage collector: dependents whose owners are all gone are deleted (background), foreground
  deletion waits for dependents, orphan deletion strips owner references.
- Namespace lifecycle: a terminating namespace is emptied, then removed.

They react to committed changes (a storage listener feeds one queue) and write through
`Operations`, so their writes produce watch events like any client's.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
from typing import Any

import structlog

from . import crd_approval, crds
from .api_services import ApiServiceRegistration
from .errors import ApiError
from .operations import Operations, WriteOptions, now_rfc3339
from .registry import ResourceType
from .storage import DELETED, Change

Json = dict[str, Any]
log = structlog.get_logger("localcluster")

CRD_RESOURCE = ("apiextensions.k8s.io", "customresourcedefinitions")
NAMESPACE_RESOURCE = ("", "namespaces")
CRD_CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"
_GC = WriteOptions(manager="kube-controller-manager")
_CRD_MANAGER = WriteOptions(manager="kube-apiserver")


class SystemControllers:
    """Runs the CRD, garbage-collection and namespace loops as one owned task."""

    def __init__(self, ops: Operations) -> None:
        self.ops = ops
        self._queue: asyncio.Queue[Change] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self._terminating_namespaces: set[str] = set()
        self.api_services = ApiServiceRegistration(ops)
        self._registered_generation = -1
        ops.storage.add_listener(self._queue.put_nowait)

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(), name="system-ctrl")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def settle(self) -> None:
        """Wait until every queued change has been handled (tests use it)."""
        await self._queue.join()

    async def _run(self) -> None:
        while True:
            change = await self._queue.get()
            try:
                self.handle(change)
            except Exception:  # a bug here must not stop the cluster
                log.exception("system controller failed", resource=change.resource)
            finally:
                self._queue.task_done()

    def restore(self) -> None:
        """After a restart from disk: serve stored CRDs and resume pending work."""
        for crd in self.ops.storage.list_objects(CRD_RESOURCE):
            self._crd_changed(crd)
        for ns in self.ops.storage.list_objects(NAMESPACE_RESOURCE):
            if ns["metadata"].get("deletionTimestamp"):
                self._terminating_namespaces.add(ns["metadata"]["name"])
                self._sweep_namespace(ns["metadata"]["name"])
        self._sync_api_services()

    def _sync_api_services(self) -> None:
        """Register the served group versions as APIServices when the registry changed."""
        if self.ops.registry.generation != self._registered_generation:
            self._registered_generation = self.ops.registry.generation
            self.api_services.sync()

    # --- dispatch --------------------------------------------------------------------------

    def handle(self, change: Change) -> None:
        obj = change.obj
        meta = obj["metadata"]
        if change.resource == CRD_RESOURCE:
            if change.type == DELETED:
                self.ops.registry.remove_crd(meta["name"])
            else:
                self._crd_changed(obj)
            self._sync_api_services()
        if change.type == DELETED:
            self._owner_gone(meta["uid"])
            self._custom_object_gone(change.resource)
            self._wake_waiting_owners(meta.get("ownerReferences"))
        else:
            old_refs = (change.old or {}).get("metadata", {}).get("ownerReferences")
            if old_refs and old_refs != meta.get("ownerReferences"):
                self._wake_waiting_owners(old_refs)
            if meta.get("deletionTimestamp"):
                self._deleting(change.resource, obj)
            if meta.get("ownerReferences") and change.type == "ADDED":
                self._check_dangling(change.resource, obj)
        if change.resource == NAMESPACE_RESOURCE and change.type == "ADDED":
            self._populate_namespace(meta["name"])
        if change.resource == NAMESPACE_RESOURCE and change.type != DELETED and meta.get(
                "deletionTimestamp"):
            self._terminating_namespaces.add(meta["name"])
        namespace = meta.get("namespace") or (
            meta["name"] if change.resource == NAMESPACE_RESOURCE else "")
        if namespace in self._terminating_namespaces:
            self._sweep_namespace(namespace)

    def _populate_namespace(self, namespace: str) -> None:
        """The service-account controller's part: every namespace has a `default` account."""
        rt = self.ops.registry.get("", "v1", "serviceaccounts")
        if rt is None or self.ops.storage.get(rt.stored_as, namespace, "default") is not None:
            return
        with contextlib.suppress(ApiError):
            self.ops.create(rt, namespace, {"metadata": {"name": "default"}},
                            WriteOptions(manager="kube-controller-manager"))

    # --- CRDs ------------------------------------------------------------------------------

    def _crd_changed(self, crd: Json) -> None:
        name = crd["metadata"]["name"]
        if crd["metadata"].get("deletionTimestamp"):
            self._clean_up_crd(crd)
            return
        try:
            types = crds.served_types(crd)
        except (KeyError, StopIteration, TypeError):
            log.warning("CRD cannot be served", crd=name)
            return
        self.ops.registry.set_crd(name, types)
        self._write_crd_status(crd)

    def _write_crd_status(self, crd: Json) -> None:
        spec = crd["spec"]
        names = dict(spec["names"])
        status = copy.deepcopy(crd.get("status") or {})
        conditions = {c["type"]: c for c in status.get("conditions") or []}
        now = now_rfc3339()
        wanted = [
            ("NamesAccepted", "NoConflicts", "no conflicts found"),
            ("Established", "InitialNamesAccepted", "the initial names have been accepted"),
        ]
        new_conditions = []
        for ctype, reason, message in wanted:
            old = conditions.get(ctype)
            if old and old.get("status") == "True":
                new_conditions.append(old)
            else:
                new_conditions.append({"type": ctype, "status": "True",
                                       "lastTransitionTime": now, "reason": reason,
                                       "message": message})
        approval = crd_approval.condition(crd)
        if approval is not None:  # the apiapproval controller's
            old = conditions.get(approval["type"])
            same = old is not None and old.get("status") == approval["status"]
            approval["lastTransitionTime"] = old.get("lastTransitionTime", now) if (
                old is not None and same) else now
            new_conditions.append({k: approval[k] for k in (
                "type", "status", "lastTransitionTime", "reason", "message")})
        stored = list(status.get("storedVersions") or [])
        storage = next(v["name"] for v in spec["versions"] if v.get("storage"))
        if storage not in stored:
            stored.append(storage)
        new_status = {"conditions": new_conditions, "acceptedNames": names,
                      "storedVersions": stored}
        if new_status == crd.get("status"):
            return
        rt = self._crd_type()
        body = copy.deepcopy(crd)
        body["status"] = new_status
        with contextlib.suppress(ApiError):
            self.ops.update(rt, "", crd["metadata"]["name"], body, _CRD_MANAGER,
                            subresource="status")

    def _clean_up_crd(self, crd: Json) -> None:
        finalizers = crd["metadata"].get("finalizers") or []
        if CRD_CLEANUP_FINALIZER not in finalizers:
            return
        resource = (crd["spec"]["group"], crd["spec"]["names"]["plural"])
        remaining = self.ops.storage.list_objects(resource)
        for obj in remaining:
            if not obj["metadata"].get("deletionTimestamp"):
                self._delete(resource, obj, "Background")
        if self.ops.storage.count(resource) == 0:
            self._remove_finalizer(CRD_RESOURCE, crd, CRD_CLEANUP_FINALIZER)

    def _custom_object_gone(self, resource: tuple[str, str]) -> None:
        """A deleting CRD waits for its last object (e.g. one held by a finalizer)."""
        group, plural = resource
        if not group or resource == CRD_RESOURCE:
            return
        crd = self.ops.storage.get(CRD_RESOURCE, "", f"{plural}.{group}")
        if crd is not None and crd["metadata"].get("deletionTimestamp"):
            self._clean_up_crd(crd)

    def _crd_type(self) -> ResourceType:
        rt = self.ops.registry.get("apiextensions.k8s.io", "v1", "customresourcedefinitions")
        assert rt is not None
        return rt

    # --- garbage collection ----------------------------------------------------------------

    def _owner_gone(self, uid: str) -> None:
        for resource, dependent in self.ops.storage.dependents(uid):
            self._check_dangling(resource, dependent)

    def _check_dangling(self, resource: tuple[str, str], obj: Json) -> None:
        """Delete a dependent whose owners are all absent; drop refs to absent ones otherwise."""
        refs = obj["metadata"].get("ownerReferences") or []
        namespace = obj["metadata"].get("namespace", "")
        alive = []
        for ref in refs:
            found = self.ops.storage.by_uid(ref.get("uid", ""))
            if found is not None:
                owner_ns = found[1]["metadata"].get("namespace", "")
                if not owner_ns or owner_ns == namespace:
                    alive.append(ref)
        if alive == refs:
            return
        if not alive:
            if not obj["metadata"].get("deletionTimestamp"):
                self._delete(resource, obj, "Background")
            return
        self._set_owner_refs(resource, obj, alive)

    def _wake_waiting_owners(self, refs: list[Json] | None) -> None:
        """A dependent went away (or dropped its owner): owners in foreground deletion
        check again whether anything still blocks them."""
        for ref in refs or ():
            found = self.ops.storage.by_uid(ref.get("uid", ""))
            if found is not None and "foregroundDeletion" in (
                    found[1]["metadata"].get("finalizers") or ()):
                self._deleting(found[0], found[1])

    def _deleting(self, resource: tuple[str, str], obj: Json) -> None:
        finalizers = obj["metadata"].get("finalizers") or []
        uid = obj["metadata"]["uid"]
        if "orphan" in finalizers:
            for dep_resource, dep in self.ops.storage.dependents(uid):
                refs = [r for r in dep["metadata"].get("ownerReferences") or []
                        if r.get("uid") != uid]
                self._set_owner_refs(dep_resource, dep, refs)
            self._remove_finalizer(resource, obj, "orphan")
        elif "foregroundDeletion" in finalizers:
            blocking = 0
            for dep_resource, dep in self.ops.storage.dependents(uid):
                ref = next(r for r in dep["metadata"].get("ownerReferences") or []
                           if r.get("uid") == uid)
                if ref.get("blockOwnerDeletion"):
                    blocking += 1
                if not dep["metadata"].get("deletionTimestamp"):
                    # As the real collector: a dependent with dependents of its own goes in the
                    # foreground; one without is simply deleted.
                    has_own = any(True for _ in self.ops.storage.dependents(
                        dep["metadata"]["uid"]))
                    self._delete(dep_resource, dep, "Foreground" if has_own else "Background")
            if blocking == 0:
                self._remove_finalizer(resource, obj, "foregroundDeletion")

    # --- namespaces ------------------------------------------------------------------------

    def _sweep_namespace(self, namespace: str) -> None:
        ns = self.ops.storage.get(NAMESPACE_RESOURCE, "", namespace)
        if ns is None:
            self._terminating_namespaces.discard(namespace)
            return
        left = 0
        for resource, obj in list(self.ops.storage.objects_in_namespace(namespace)):
            left += 1
            if not obj["metadata"].get("deletionTimestamp"):
                self._delete(resource, obj, "Background")
        if left:
            return
        spec_finalizers = (ns.get("spec") or {}).get("finalizers") or []
        if "kubernetes" in spec_finalizers:
            body = copy.deepcopy(ns)
            body["spec"]["finalizers"] = [f for f in spec_finalizers if f != "kubernetes"]
            rt = self.ops.registry.get("", "v1", "namespaces")
            assert rt is not None
            with contextlib.suppress(ApiError):
                self.ops.finalize_namespace(rt, body)

    # --- writes ----------------------------------------------------------------------------

    def _type_of(self, resource: tuple[str, str]) -> ResourceType | None:
        """The storage version's type: the server's own writes change stored objects as they
        are, without converting them (a CRD's conversion webhook is for API requests)."""
        versions = self.ops.registry.versions_of(*resource)
        return next((v for v in versions if v.version == v.storage_version),
                    versions[0] if versions else None)

    def _delete(self, resource: tuple[str, str], obj: Json, policy: str) -> None:
        rt = self._type_of(resource)
        if rt is None:
            return
        meta = obj["metadata"]
        with contextlib.suppress(ApiError):
            self.ops.delete(rt, meta.get("namespace", ""), meta["name"], {
                "propagationPolicy": policy, "preconditions": {"uid": meta["uid"]}})

    def _set_owner_refs(self, resource: tuple[str, str], obj: Json, refs: list[Json]) -> None:
        rt = self._type_of(resource)
        if rt is None:
            return
        body = copy.deepcopy(obj)
        if refs:
            body["metadata"]["ownerReferences"] = refs
        else:
            body["metadata"].pop("ownerReferences", None)
        with contextlib.suppress(ApiError):
            self.ops.update(rt, body["metadata"].get("namespace", ""), body["metadata"]["name"],
                            {**body, "apiVersion": rt.api_version}, _GC)

    def _remove_finalizer(self, resource: tuple[str, str], obj: Json, finalizer: str) -> None:
        rt = self._type_of(resource)
        if rt is None:
            return
        body = copy.deepcopy(obj)
        body["metadata"]["finalizers"] = [
            f for f in body["metadata"].get("finalizers") or [] if f != finalizer]
        with contextlib.suppress(ApiError):
            self.ops.update(rt, body["metadata"].get("namespace", ""), body["metadata"]["name"],
                            {**body, "apiVersion": rt.api_version}, _GC)
