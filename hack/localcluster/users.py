"""Who a request comes from: the users the local API server knows.

kube-apiserver authenticates every request to a `user.Info` (name, uid, groups, extra); the
local server does the same with client certificates of its CA (`certificate_user`: the admin
kubeconfig's) and a table of bearer tokens. `ClusterConfig.token` is a static admin token (raw
HTTP in tests and tools); tests and e2e add others (a ServiceAccount identity for the
operator, the Planner) with `LocalCluster.add_user`. Admission webhooks receive the identity as
`request.userInfo`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["ADMIN", "UserInfo", "certificate_user", "service_account"]


@dataclass(frozen=True)
class UserInfo:
    """An authenticated identity, as an AdmissionReview's `userInfo` carries it."""

    username: str
    groups: tuple[str, ...] = ("system:authenticated",)
    uid: str = ""
    extra: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"username": self.username, "groups": list(self.groups)}
        if self.uid:
            out["uid"] = self.uid
        if self.extra:
            out["extra"] = {k: list(v) for k, v in self.extra.items()}
        return out


#: What kubeadm's admin kubeconfig authenticates as (the cluster's static admin token).
ADMIN = UserInfo("kubernetes-admin", ("kubeadm:cluster-admins", "system:authenticated"))


def certificate_user(common_name: str, organizations: tuple[str, ...]) -> UserInfo:
    """The identity of a client certificate: the common name, the organizations as groups
    (the admin kubeconfig's certificate is kubernetes-admin in system:masters)."""
    return UserInfo(common_name, (*organizations, "system:authenticated"))


def service_account(namespace: str, name: str) -> UserInfo:
    """The identity of a ServiceAccount's token."""
    return UserInfo(f"system:serviceaccount:{namespace}:{name}", (
        "system:serviceaccounts", f"system:serviceaccounts:{namespace}",
        "system:authenticated"))
