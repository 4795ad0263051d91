"""OwnerReferencesPermissionEnforcement: kube-apiserver's admission plugin (off by default
there, on in OpenShift and other distributions) that lets a writer set ownerReferences only on
an object it may delete, and `blockOwnerDeletion` only towards an owner whose `finalizers`
subresource it may update.

Enabled with `ClusterConfig(enable_admission_plugins=("OwnerReferencesPermissionEnforcement",))`
or `--enable-admission-plugins OwnerReferencesPermissionEnforcement`; it asks the RBAC
authorizer, so it only refuses anything in the RBAC mode.
"""

from __future__ import annotations

from typing import Any

from ..registry import Registry, ResourceType
from ..users import UserInfo
from .attributes import RequestAttributes
from .authorizer import Authorizer, forbidden

Json = dict[str, Any]
NAME = "OwnerReferencesPermissionEnforcement"
#: (group, resource, subresource) writes the plugin never checks: a pod's status.
_SKIPPED = {("", "pods", "status")}


def check_owner_references(authorizer: Authorizer, registry: Registry, user: UserInfo,
                           rt: ResourceType, operation: str, namespace: str, name: str,
                           subresource: str, obj: Json | None, old: Json | None) -> None:
    """Raise the plugin's 403 when the write sets ownerReferences the user may not set."""
    if obj is None or operation not in ("CREATE", "UPDATE"):
        return
    if (rt.group, rt.plural, subresource) in _SKIPPED:
        return
    new_refs = list(obj.get("metadata", {}).get("ownerReferences") or [])
    old_refs = None if old is None else list(
        old.get("metadata", {}).get("ownerReferences") or [])
    if (not new_refs) if old_refs is None else new_refs == old_refs:
        return
    shown = str(obj.get("metadata", {}).get("name") or name)
    if operation != "CREATE":
        decision = authorizer.authorize(user, RequestAttributes(
            "delete", True, api_group=rt.group, api_version=rt.version, namespace=namespace,
            resource=rt.plural, subresource=subresource, name=name))
        if not decision.allowed:
            raise forbidden(rt.group, rt.plural, shown, "cannot set an ownerRef on a resource"
                            f" you can't delete: {decision.reason}, <nil>")
    was_blocking = {str(r.get("uid", "")) for r in old_refs or [] if r.get("blockOwnerDeletion")}
    for ref in new_refs:
        if not ref.get("blockOwnerDeletion") or str(ref.get("uid", "")) in was_blocking:
            continue
        api_version, kind = str(ref.get("apiVersion", "")), str(ref.get("kind", ""))
        group, _, version = api_version.rpartition("/")
        owner = registry.by_kind(group, version, kind)
        if owner is None:
            raise forbidden(rt.group, rt.plural, shown, "cannot set blockOwnerDeletion in this"
                            " case because cannot find RESTMapping for APIVersion"
                            f" {api_version} Kind {kind}: no matches for kind \"{kind}\" in"
                            f" version \"{api_version}\"")
        decision = authorizer.authorize(user, RequestAttributes(
            "update", True, api_group=owner.group, api_version=owner.version,
            namespace=namespace if owner.namespaced else "", resource=owner.plural,
            subresource="finalizers", name=str(ref.get("name", ""))))
        if not decision.allowed:
            raise forbidden(rt.group, rt.plural, shown, "cannot set blockOwnerDeletion if an"
                            " ownerReference refers to a resource you can't set finalizers on:"
                            f" {decision.reason}, <nil>")


__all__ = ["NAME", "check_owner_references"]
