"""The NamespaceLifecycle admission plugin (plugin/pkg/admission/namespace/lifecycle).

On create, a namespaced object needs a namespace that exists (404 NotFound otherwise) and is not
being deleted (403 Forbidden with a `NamespaceTerminating` cause, naming the object as the
request named it, before generateName). The namespaces the cluster cannot live without
(default, kube-system, kube-public) may not be deleted (403 Forbidden).
"""

from __future__ import annotations

from typing import Any

from ..errors import ApiError, not_found
from ..registry import ResourceType
from ..storage import Storage

__all__ = ["IMMORTAL_NAMESPACES", "admit_create", "admit_delete"]

Json = dict[str, Any]

#: Namespaces a delete is refused for.
IMMORTAL_NAMESPACES = ("default", "kube-system", "kube-public")


def admit_create(storage: Storage, rt: ResourceType, namespace: str, name: str = "") -> None:
    """Refuse a create into a missing or terminating namespace; `name` is the requested name."""
    if not rt.namespaced:
        return
    ns = storage.get(("", "namespaces"), "", namespace)
    if ns is None:
        raise not_found("", "namespaces", namespace)
    if ns["metadata"].get("deletionTimestamp"):
        subject = f'{rt.group_resource} "{name}"' if name else rt.group_resource
        details: Json = {"name": name} if name else {}
        if rt.group:
            details["group"] = rt.group
        raise ApiError(
            403, "Forbidden",
            f'{subject} is forbidden: unable to create new content in namespace'
            f' {namespace} because it is being terminated',
            {**details, "kind": rt.plural, "causes": [{
                "reason": "NamespaceTerminating",
                "message": f"namespace {namespace} is being terminated",
                "field": "metadata.namespace"}]},
        )


def admit_delete(rt: ResourceType, name: str) -> None:
    """Refuse the deletion of an immortal namespace."""
    if rt.kind == "Namespace" and name in IMMORTAL_NAMESPACES:
        raise ApiError(403, "Forbidden", f'namespaces "{name}" is forbidden: this namespace'
                       " may not be deleted", {"name": name, "kind": "namespaces"})
