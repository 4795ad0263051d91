"""Objects a graph needs besides its workloads: the PVCs it asks to create, the scaling
adapters of the components that opt in, and the RBAC of Kubernetes endpoint discovery; from
the graph as the hub (`backends.hub_graph`)."""

from __future__ import annotations

from typing import Any

from backends import constants, naming
from backends.hub_graph import HubGraph

Json = dict[str, Any]

__all__ = ["discovery_rbac", "discovery_rbac_of", "persistent_volume_claims", "scaling_adapters",
           "uses_discovery"]


def persistent_volume_claims(graph: HubGraph) -> list[Json]:
    """The PVCs of `spec.pvcs` (`v1alpha1` only) marked `create: true` (others must already
    exist)."""
    namespace = graph.namespace
    claims = []
    for pvc in graph.inputs.pvcs:
        if not pvc.create or not pvc.name:
            continue
        spec: Json = {"resources": {"requests": {"storage": str(pvc.size)}}}
        if pvc.volume_access_mode:
            spec["accessModes"] = [pvc.volume_access_mode]
        if pvc.storage_class:
            spec["storageClassName"] = pvc.storage_class
        claims.append(
            {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": _metadata(pvc.name, namespace, _graph_labels(graph)),
                "spec": spec,
            }
        )
    return claims


def scaling_adapters(hub: HubGraph) -> list[Json]:
    """A DynamoGraphDeploymentScalingAdapter per component with `scalingAdapter` (v1alpha1's
    `enabled: true`), seeded with the component's replicas; in name order."""
    graph, namespace = hub.name, hub.namespace
    adapters = []
    components = [c for c in hub.model.spec.components or [] if c.name is not None]
    for service in sorted(components, key=lambda c: str(c.name)):
        if service.scaling_adapter is None:
            continue
        key = str(service.name)
        adapter_labels = {constants.LABEL_GRAPH_NAME: graph, constants.LABEL_COMPONENT: key}
        adapters.append(
            {
                "apiVersion": constants.DYNAMO_API_VERSION,
                "kind": "DynamoGraphDeploymentScalingAdapter",
                "metadata": _metadata(
                    naming.component_name(graph, key), namespace, adapter_labels
                ),
                "spec": {
                    "replicas": 1 if service.replicas is None else service.replicas,
                    "dgdRef": {"name": graph, "serviceName": key},
                },
            }
        )
    return adapters


def uses_discovery(graph: HubGraph, discovery_backend: str) -> bool:
    """The graph's pods discover each other through Kubernetes endpoints."""
    annotations = graph.model.metadata.get("annotations") or {}
    backend = annotations.get(constants.ANNOTATION_DISCOVERY_BACKEND, discovery_backend)
    return bool(backend == constants.DISCOVERY_KUBERNETES)


def discovery_rbac(graph: HubGraph) -> list[Json]:
    """ServiceAccount, Role and RoleBinding letting the graph's pods read endpoints."""
    return discovery_rbac_of(graph.name, graph.namespace)


def discovery_rbac_of(graph: str, namespace: str) -> list[Json]:
    """The discovery RBAC of the pods whose parent graph is `graph` (for a DCD of its own:
    the DCD's name)."""
    account = naming.discovery_service_account(graph)
    rbac_labels = {
        "app.kubernetes.io/managed-by": constants.MANAGED_BY,
        "app.kubernetes.io/component": "rbac",
        "app.kubernetes.io/name": account,
        constants.LABEL_GRAPH_NAME: graph,
    }
    role = f"{account}-role"
    return [
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": _metadata(account, namespace, rbac_labels),
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": _metadata(role, namespace, rbac_labels),
            "rules": [
                {"apiGroups": [""], "resources": ["endpoints"], "verbs": _read_verbs()},
                {
                    "apiGroups": ["discovery.k8s.io"],
                    "resources": ["endpointslices"],
                    "verbs": _read_verbs(),
                },
            ],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": _metadata(f"{account}-binding", namespace, rbac_labels),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": role},
            "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": namespace}],
        },
    ]


def _read_verbs() -> list[str]:
    # A fresh list per rule: generated objects never share parts.
    return ["get", "list", "watch"]


def _graph_labels(graph: HubGraph) -> dict[str, str]:
    return {constants.LABEL_GRAPH_NAME: graph.name}


def _metadata(name: str, namespace: str, labels: dict[str, str]) -> Json:
    return {"name": name, "namespace": namespace, "labels": dict(labels)}
