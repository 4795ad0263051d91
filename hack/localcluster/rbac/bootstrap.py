"""The default RBAC policy a cluster starts with, and ClusterRole aggregation.

Bootstrap (created when absent, as kube-apiserver's bootstrap-roles post-start hook does):
`cluster-admin` (everything) bound to the group `system:masters` and, as kubeadm binds it, to
`kubeadm:cluster-admins` (the admin kubeconfig's group); `system:discovery`,
`system:basic-user` and `system:public-info-viewer` bound to `system:authenticated` (the last
also to `system:unauthenticated`).

Aggregation (the clusterrole-aggregation controller): a ClusterRole with an `aggregationRule`
gets as rules the rules of every other ClusterRole its selectors match, in name order, without
repeats; it is recomputed after every change of a ClusterRole.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ..operations import Operations, WriteOptions
from ..selectors.label_selector import LabelSelector
from ..storage import Change
from .authorizer import CLUSTER_ROLE_BINDINGS, CLUSTER_ROLES, GROUP

Json = dict[str, Any]
_META = {"labels": {"kubernetes.io/bootstrapping": "rbac-defaults"},
         "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"}}
_HEALTH = ["/livez", "/readyz", "/healthz", "/version", "/version/"]

CLUSTER_ROLES_DEFAULT: dict[str, list[Json]] = {
    "cluster-admin": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
                      {"nonResourceURLs": ["*"], "verbs": ["*"]}],
    "system:discovery": [{"nonResourceURLs": [*_HEALTH, "/openapi", "/openapi/*", "/api",
                                              "/api/*", "/apis", "/apis/*"],
                          "verbs": ["get"]}],
    "system:basic-user": [
        {"apiGroups": ["authorization.k8s.io"],
         "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
         "verbs": ["create"]},
        {"apiGroups": ["authentication.k8s.io"], "resources": ["selfsubjectreviews"],
         "verbs": ["create"]}],
    "system:public-info-viewer": [{"nonResourceURLs": _HEALTH, "verbs": ["get"]}],
}
#: binding name -> (cluster role, groups)
CLUSTER_ROLE_BINDINGS_DEFAULT: dict[str, tuple[str, tuple[str, ...]]] = {
    "cluster-admin": ("cluster-admin", ("system:masters",)),
    "kubeadm:cluster-admins": ("cluster-admin", ("kubeadm:cluster-admins",)),
    "system:discovery": ("system:discovery", ("system:authenticated",)),
    "system:basic-user": ("system:basic-user", ("system:authenticated",)),
    "system:public-info-viewer": ("system:public-info-viewer",
                                  ("system:authenticated", "system:unauthenticated")),
}
_MANAGER = WriteOptions(manager="kube-apiserver")


def bootstrap(ops: Operations) -> None:
    """Create the default ClusterRoles and ClusterRoleBindings that are missing."""
    roles = ops.registry.get(GROUP, "v1", "clusterroles")
    bindings = ops.registry.get(GROUP, "v1", "clusterrolebindings")
    assert roles is not None and bindings is not None
    for name, rules in CLUSTER_ROLES_DEFAULT.items():
        if ops.storage.get(CLUSTER_ROLES, "", name) is None:
            ops.create(roles, "", {"apiVersion": f"{GROUP}/v1", "kind": "ClusterRole",
                                   "metadata": {"name": name, **_META}, "rules": rules},
                       _MANAGER)
    for name, (role, groups) in CLUSTER_ROLE_BINDINGS_DEFAULT.items():
        if ops.storage.get(CLUSTER_ROLE_BINDINGS, "", name) is None:
            ops.create(bindings, "", {
                "apiVersion": f"{GROUP}/v1", "kind": "ClusterRoleBinding",
                "metadata": {"name": name, **_META},
                "roleRef": {"apiGroup": GROUP, "kind": "ClusterRole", "name": role},
                "subjects": [{"apiGroup": GROUP, "kind": "Group", "name": g} for g in groups]},
                _MANAGER)


class Aggregation:
    """Keeps the rules of aggregated ClusterRoles up to date (call `start` in the loop)."""

    def __init__(self, ops: Operations) -> None:
        self.ops = ops
        self._scheduled = False
        self._loop: asyncio.AbstractEventLoop | None = None

    def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self.ops.storage.add_listener(self._changed)
        self.aggregate()

    def _changed(self, change: Change) -> None:
        if change.resource != CLUSTER_ROLES or self._scheduled or self._loop is None:
            return
        self._scheduled = True
        self._loop.call_soon(self.aggregate)

    def aggregate(self) -> None:
        """Write the rules of every aggregated ClusterRole whose selection changed."""
        self._scheduled = False
        rt = self.ops.registry.get(GROUP, "v1", "clusterroles")
        assert rt is not None
        roles = sorted(self.ops.storage.list_objects(CLUSTER_ROLES),
                       key=lambda r: str(r["metadata"]["name"]))
        for role in roles:
            rule = role.get("aggregationRule")
            if not isinstance(rule, dict) or role["metadata"].get("deletionTimestamp"):
                continue
            selectors = [LabelSelector.from_label_selector(s)
                         for s in rule.get("clusterRoleSelectors") or []]
            rules: list[Json] = []
            for other in roles:
                if other is role:
                    continue
                labels = other["metadata"].get("labels") or {}
                if any(s.matches(labels) for s in selectors):
                    rules.extend(r for r in other.get("rules") or [] if r not in rules)
            if rules != (role.get("rules") or []):
                self.ops.update(rt, "", role["metadata"]["name"], {**role, "rules": rules},
                                WriteOptions(manager="clusterrole-aggregation-controller"))


__all__ = ["Aggregation", "bootstrap"]
