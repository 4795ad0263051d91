"""Collection paths and small object builders the case modules share."""

from __future__ import annotations

from typing import Any

Json = dict[str, Any]

CM = "/api/v1/namespaces/${ns}/configmaps"
SECRETS = "/api/v1/namespaces/${ns}/secrets"
SA = "/api/v1/namespaces/${ns}/serviceaccounts"
SERVICES = "/api/v1/namespaces/${ns}/services"
DEPLOY = "/apis/apps/v1/namespaces/${ns}/deployments"
NAMESPACES = "/api/v1/namespaces"
ROLES = "/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/roles"
BINDINGS = "/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
GROUP = "differential.example.com"
GADGETS = f"/apis/{GROUP}/v1/namespaces/${{ns}}/gadgets"


def cm(name: str, data: dict[str, str] | None = None, **meta: Any) -> Json:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, **meta}, "data": data or {"k": "v"}}


def secret(name: str, data: dict[str, str] | None = None, type: str = "Opaque",
           **meta: Any) -> Json:
    return {"apiVersion": "v1", "kind": "Secret", "type": type,
            "metadata": {"name": name, **meta}, "data": data or {"k": "dg=="}}


def deployment(name: str, replicas: int = 1, labels: dict[str, str] | None = None,
               containers: list[Json] | None = None, **spec: Any) -> Json:
    labels = labels or {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels}, "spec": {
                         "containers": containers if containers is not None else [
                             {"name": "c", "image": "example.invalid/c:1"}]}},
                     **spec}}


def gadget(gname: str, **spec: Any) -> Json:
    return {"apiVersion": f"{GROUP}/v1", "kind": "Gadget", "metadata": {"name": gname},
            "spec": spec}


def owner_ref(kind: str, name: str, uid: str, **extra: Any) -> Json:
    return {"apiVersion": "v1", "kind": kind, "name": name, "uid": uid, **extra}
