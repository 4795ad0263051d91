"""Objects a graph needs besides its workloads: the PVCs it asks to create, the scaling
adapters of the components that opt in, and the RBAC of Kubernetes discovery (built by
`backends.discovery_rbac`); from the graph as the hub (`backends.hub_graph`)."""

from __future__ import annotations

from typing import Any

from backends import constants, naming
from backends.discovery_rbac import discovery_rbac_of
from backends.graph_metadata import stamp_metadata
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
        adapter = {
            "apiVersion": constants.DYNAMO_API_VERSION,
            "kind": "DynamoGraphDeploymentScalingAdapter",
            "metadata": _metadata(naming.component_name(graph, key), namespace, adapter_labels),
            "spec": {
                "replicas": 1 if service.replicas is None else service.replicas,
                "dgdRef": {"name": graph, "serviceName": key},
            },
        }
        adapters.append(stamp_metadata(hub, adapter))
    return adapters


def uses_discovery(graph: HubGraph, discovery_backend: str) -> bool:
    """The graph's pods discover each other through Kubernetes endpoints."""
    annotations = graph.model.metadata.get("annotations") or {}
    backend = annotations.get(constants.ANNOTATION_DISCOVERY_BACKEND, discovery_backend)
    return bool(backend == constants.DISCOVERY_KUBERNETES)


def discovery_rbac(graph: HubGraph) -> list[Json]:
    """ServiceAccount, Role and RoleBinding of the graph's pods' Kubernetes discovery."""
    return discovery_rbac_of(graph.name, graph.namespace)


def _graph_labels(graph: HubGraph) -> dict[str, str]:
    return {constants.LABEL_GRAPH_NAME: graph.name}


def _metadata(name: str, namespace: str, labels: dict[str, str]) -> Json:
    return {"name": name, "namespace": namespace, "labels": dict(labels)}
