"""The identities that planner and EPP pods run as in a graph's namespace.

Planner pods run as `planner-serviceaccount` and EPP pods as `epp-serviceaccount`. Each account
comes with a RoleBinding: to the operator's planner (or EPP) ClusterRole when one is
configured, otherwise to a Role of the namespace granting what that
component needs, as the original operator's chart grants it in namespace-restricted mode.

These objects are shared by every graph of the namespace, so they carry no owner reference:
deleting one graph must not take the permissions away from the others.
"""

from __future__ import annotations

from typing import Any

from backends import constants

Json = dict[str, Any]

__all__ = ["EPP_ROLE", "PLANNER_ROLE", "epp_rbac", "planner_rbac"]

PLANNER_ROLE = "planner-role"
EPP_ROLE = "epp-role"
_RBAC = "rbac.authorization.k8s.io/v1"
_READ = ("get", "list", "watch")


def _rule(group: str, resources: tuple[str, ...], verbs: tuple[str, ...]) -> Json:
    return {"apiGroups": [group], "resources": list(resources), "verbs": list(verbs)}


def _planner_rules() -> list[Json]:
    """Reading and scaling graphs, finding workers, tagging worker pods."""
    return [
        _rule("nvidia.com", ("dynamocomponentdeployments", "dynamographdeployments"),
              ("get", "list", "create", "update", "patch")),
        _rule("nvidia.com", ("dynamographdeploymentscalingadapters/scale",), ("patch",)),
        _rule("discovery.k8s.io", ("endpointslices",), _READ),
        _rule("nvidia.com", ("dynamoworkermetadatas",),
              ("get", "list", "watch", "create", "update", "patch", "delete")),
        _rule("", ("pods",), ("get", "list", "patch")),
    ]


def _epp_rules() -> list[Json]:
    """Reading its InferencePool, the pool's pods and the workers' metadata."""
    return [
        _rule(constants.INFERENCE_POOL_GROUP, ("inferencepools", "inferencepools/status"), _READ),
        _rule("", ("pods",), _READ),
        _rule("discovery.k8s.io", ("endpointslices",), _READ),
        _rule("nvidia.com", ("dynamoworkermetadatas",), _READ),
    ]


def _labels(account: str) -> dict[str, str]:
    return {
        "app.kubernetes.io/managed-by": constants.MANAGED_BY,
        "app.kubernetes.io/component": "rbac",
        "app.kubernetes.io/name": account,
    }


def _objects(namespace: str, account: str, role: str, rules: list[Json] | None,
             cluster_role: str) -> list[Json]:
    """The account, its Role when it has no ClusterRole, and the binding `<account>-binding`."""
    def meta(name: str) -> Json:
        return {"name": name, "namespace": namespace, "labels": _labels(account)}

    objects: list[Json] = [{"apiVersion": "v1", "kind": "ServiceAccount",
                            "metadata": meta(account)}]
    if cluster_role:
        ref = {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": cluster_role}
    else:
        objects.append({"apiVersion": _RBAC, "kind": "Role", "metadata": meta(role),
                        "rules": rules or []})
        ref = {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": role}
    objects.append({
        "apiVersion": _RBAC, "kind": "RoleBinding", "metadata": meta(f"{account}-binding"),
        "roleRef": ref,
        "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": namespace}],
    })
    return objects


def planner_rbac(namespace: str, cluster_role: str = "") -> list[Json]:
    """`planner-serviceaccount` and its RoleBinding `planner-serviceaccount-binding`: to
    `cluster_role` when given, else to the Role `planner-role` (also returned)."""
    return _objects(namespace, constants.PLANNER_SERVICE_ACCOUNT, PLANNER_ROLE,
                    _planner_rules(), cluster_role)


def epp_rbac(namespace: str, cluster_role: str = "") -> list[Json]:
    """`epp-serviceaccount` and its RoleBinding `epp-serviceaccount-binding`: to
    `cluster_role` when given (cluster-wide mode), else to the Role `epp-role` (also
    returned)."""
    return _objects(namespace, constants.EPP_SERVICE_ACCOUNT, EPP_ROLE, _epp_rules(),
                    cluster_role)
