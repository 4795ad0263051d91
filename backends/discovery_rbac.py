"""The identity a graph's pods discover each other with, through Kubernetes.

With the Kubernetes discovery backend every Dynamo pod of a graph runs as the ServiceAccount
`<graph>-k8s-service-discovery`, bound by `<account>-binding` to the Role `<account>-role`,
which grants what the Dynamo runtime's discovery needs in the namespace, as the original's
Role does: reading Endpoints, Pods and EndpointSlices (which pods are ready), and writing the
pod's own DynamoWorkerMetadata while reading everyone else's (what each pod serves).

The three objects carry the original's labels (`app.kubernetes.io/name` is the account's name,
cut to a label value's 63 characters with a hash suffix when longer) plus the graph's name;
the caller owns them by the graph (or by a DCD of its own).
"""

from __future__ import annotations

import hashlib
from typing import Any

from backends import constants, naming

Json = dict[str, Any]

__all__ = ["discovery_rbac_of", "discovery_rules", "label_value"]

_RBAC = "rbac.authorization.k8s.io"
_READ = ("get", "list", "watch")
#: What a pod does with DynamoWorkerMetadata: its own is applied, updated and removed.
_WORKER_METADATA = ("create", "get", "list", "watch", "update", "patch", "delete")
_LABEL_MAX = 63
_HASH_CHARS = 8


def discovery_rules() -> list[Json]:
    """The rules of the discovery Role, in the original's order (fresh lists each call)."""
    return [
        {"apiGroups": [""], "resources": ["endpoints", "pods"], "verbs": list(_READ)},
        {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"],
         "verbs": list(_READ)},
        {"apiGroups": ["nvidia.com"], "resources": ["dynamoworkermetadatas"],
         "verbs": list(_WORKER_METADATA)},
    ]


def label_value(name: str) -> str:
    """`name` as a label value: unchanged up to 63 characters, else its head, '-' and the
    first 8 hex digits of its sha256 (deterministic, so every object gets the same value)."""
    if len(name) <= _LABEL_MAX:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:_HASH_CHARS]
    return f"{name[:_LABEL_MAX - _HASH_CHARS - 1]}-{digest}"


def discovery_rbac_of(graph: str, namespace: str) -> list[Json]:
    """ServiceAccount, Role and RoleBinding of the pods whose parent graph is `graph` (for a
    DCD of its own: the DCD's name)."""
    account = naming.discovery_service_account(graph)
    role = f"{account}-role"
    labels = {
        "app.kubernetes.io/managed-by": constants.MANAGED_BY,
        "app.kubernetes.io/component": "rbac",
        "app.kubernetes.io/name": label_value(account),
        constants.LABEL_GRAPH_NAME: graph,
    }

    def meta(name: str) -> Json:
        return {"name": name, "namespace": namespace, "labels": dict(labels)}

    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta(account)},
        {"apiVersion": f"{_RBAC}/v1", "kind": "Role", "metadata": meta(role),
         "rules": discovery_rules()},
        {"apiVersion": f"{_RBAC}/v1", "kind": "RoleBinding", "metadata": meta(f"{account}-binding"),
         "roleRef": {"apiGroup": _RBAC, "kind": "Role", "name": role},
         "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": namespace}]},
    ]
