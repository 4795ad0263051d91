"""Names of the generated objects and the Dynamo namespace of a component.

All names derive from the graph name and the service key; only the service part is
lowercased, so `Frontend` in graph `vllm-agg` gives `vllm-agg-frontend`.
"""

from __future__ import annotations

import hashlib

from backends import constants

__all__ = [
    "component_name",
    "discovery_service_account",
    "dynamo_namespace",
    "leader_role",
    "model_hash",
    "model_service_name",
    "model_service_name_for_hash",
    "worker_role",
]


def component_name(graph: str, service: str) -> str:
    """Name of a service's DCD, scaling adapter and (Grove path) Service and Ingress."""
    return f"{graph}-{service.lower()}"


def dynamo_namespace(namespace: str, graph: str, *, global_namespace: bool) -> str:
    """The Dynamo namespace of a graph's component: the shared global one on request, else one
    per graph, so that frontends never see the models of other graphs."""
    if global_namespace:
        return constants.GLOBAL_DYNAMO_NAMESPACE
    # Dots are legal in object names but not in Dynamo namespaces.
    return f"{namespace}-{graph.replace('.', '-')}"


def model_hash(model: str) -> str:
    """Eight hex digits identifying a base model in label values (names may contain '/')."""
    return hashlib.sha256(model.encode()).hexdigest()[:8]


def model_service_name(model: str) -> str:
    """Name of the headless Service through which a base model's endpoints are discovered."""
    return model_service_name_for_hash(model_hash(model))


def model_service_name_for_hash(digest: str) -> str:
    return f"dynamo-model-{digest}"


def discovery_service_account(graph: str) -> str:
    """ServiceAccount of a graph's pods when Dynamo discovers endpoints through Kubernetes."""
    return f"{graph}-k8s-service-discovery"


def leader_role(name: str) -> str:
    """Role (and Grove clique) name of the leader nodes of a multinode component."""
    return f"{name}-ldr"


def worker_role(name: str) -> str:
    """Role (and Grove clique) name of the worker nodes of a multinode component."""
    return f"{name}-wkr"
