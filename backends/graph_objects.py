"""Objects a graph needs besides its workloads: the PVCs it asks to create, the scaling
adapters of the services that opt in, and the RBAC of Kubernetes discovery (built by
`backends.discovery_rbac`)."""

from __future__ import annotations

from typing import Any

from api.v1alpha1 import DynamoGraphDeployment
from backends import constants, naming
from backends.discovery_rbac import discovery_rbac_of

Json = dict[str, Any]

__all__ = ["discovery_rbac", "discovery_rbac_of", "persistent_volume_claims", "scaling_adapters",
           "uses_discovery"]


def persistent_volume_claims(dgd: DynamoGraphDeployment) -> list[Json]:
    """The PVCs of `spec.pvcs` marked `create: true` (others must already exist)."""
    namespace = str(dgd.metadata.get("namespace", ""))
    claims = []
    for pvc in dgd.spec.pvcs or []:
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
                "metadata": _metadata(pvc.name, namespace, _graph_labels(dgd)),
                "spec": spec,
            }
        )
    return claims


def scaling_adapters(dgd: DynamoGraphDeployment) -> list[Json]:
    """A DynamoGraphDeploymentScalingAdapter per service with `scalingAdapter.enabled`, seeded
    with the service's replicas."""
    graph = str(dgd.metadata.get("name", ""))
    namespace = str(dgd.metadata.get("namespace", ""))
    adapters = []
    for key, service in sorted((dgd.spec.services or {}).items()):
        if service.scaling_adapter is None or not service.scaling_adapter.enabled:
            continue
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


def uses_discovery(dgd: DynamoGraphDeployment, discovery_backend: str) -> bool:
    """The graph's pods discover each other through Kubernetes endpoints."""
    annotations = dgd.metadata.get("annotations") or {}
    backend = annotations.get(constants.ANNOTATION_DISCOVERY_BACKEND, discovery_backend)
    return bool(backend == constants.DISCOVERY_KUBERNETES)


def discovery_rbac(dgd: DynamoGraphDeployment) -> list[Json]:
    """ServiceAccount, Role and RoleBinding of the graph's pods' Kubernetes discovery."""
    return discovery_rbac_of(str(dgd.metadata.get("name", "")),
                             str(dgd.metadata.get("namespace", "")))


def _graph_labels(dgd: DynamoGraphDeployment) -> dict[str, str]:
    return {constants.LABEL_GRAPH_NAME: str(dgd.metadata.get("name", ""))}


def _metadata(name: str, namespace: str, labels: dict[str, str]) -> Json:
    return {"name": name, "namespace": namespace, "labels": dict(labels)}
