"""The Planner's identity in a graph namespace (cluster-wide mode): the ServiceAccount
`planner-serviceaccount` and a RoleBinding granting it the operator's planner ClusterRole.

Both are shared by every graph of the namespace, so they carry no owner reference: deleting one
graph must not take the Planner's permissions away from the others.
"""

from __future__ import annotations

from typing import Any

from backends import constants

Json = dict[str, Any]

__all__ = ["planner_role_binding", "planner_service_account"]


def _labels(account: str) -> dict[str, str]:
    return {
        "app.kubernetes.io/managed-by": constants.MANAGED_BY,
        "app.kubernetes.io/component": "rbac",
        "app.kubernetes.io/name": account,
    }


def planner_service_account(namespace: str) -> Json:
    """ServiceAccount `planner-serviceaccount` that planner pods run as."""
    account = constants.PLANNER_SERVICE_ACCOUNT
    return {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": account, "namespace": namespace, "labels": _labels(account)},
    }


def planner_role_binding(namespace: str, cluster_role: str) -> Json:
    """RoleBinding `planner-serviceaccount-binding` of the planner account to `cluster_role`."""
    account = constants.PLANNER_SERVICE_ACCOUNT
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {
            "name": f"{account}-binding",
            "namespace": namespace,
            "labels": _labels(account),
        },
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": cluster_role,
        },
        "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": namespace}],
    }
