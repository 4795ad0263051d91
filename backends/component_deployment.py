"""DynamoComponentDeployments of a graph (the DCD path): one per service, carrying the
service's spec plus what the graph decides for it (name, labels, Dynamo namespace, backend,
graph-wide env, default ingress)."""

from __future__ import annotations

from typing import Any

from api.convert import dump, load
from api.kube import copy_json
from api.v1alpha1 import (
    DynamoComponentDeployment,
    DynamoComponentDeploymentSharedSpec,
    DynamoComponentDeploymentSpec,
    DynamoGraphDeployment,
    ExtraPodSpec,
    IngressSpec,
    IngressTLSSpec,
)
from backends import constants, labels, naming
from backends.deployment_config import apply_deployment_config
from backends.merge import merge_env
from backends.settings import OperatorSettings

Json = dict[str, Any]

__all__ = ["component_deployment", "component_deployments", "default_ingress"]


def component_deployments(
    dgd: DynamoGraphDeployment, settings: OperatorSettings
) -> list[DynamoComponentDeployment]:
    """The DCDs of every service of a graph, in service-key order."""
    return [component_deployment(dgd, key, settings) for key in sorted(dgd.spec.services or {})]


def component_deployment(
    dgd: DynamoGraphDeployment, service: str, settings: OperatorSettings
) -> DynamoComponentDeployment:
    """The DCD of one service of a graph."""
    graph = str(dgd.metadata.get("name", ""))
    namespace = str(dgd.metadata.get("namespace", ""))
    shared = (dgd.spec.services or {})[service]  # read only: `load(dump(...))` copies it
    dyn_ns = naming.dynamo_namespace(
        namespace, graph, global_namespace=bool(shared.global_dynamo_namespace)
    )
    spec = load(DynamoComponentDeploymentSpec, dump(shared))
    spec.backend_framework = dgd.spec.backend_framework
    spec.service_name = service
    spec.dynamo_namespace = dyn_ns
    component_labels = {
        **(shared.labels or {}),
        **labels.component_identity(graph, service, dyn_ns),
    }
    spec.labels = component_labels
    spec.annotations = _annotations(shared, dgd.metadata.get("annotations") or {}) or None
    if dgd.spec.envs or shared.envs:
        spec.envs = sorted(
            merge_env(copy_json(dgd.spec.envs or []), shared.envs or []),
            key=lambda e: str(e.get("name", "")),
        )
    if shared.component_type == constants.PLANNER:
        extra = spec.extra_pod_spec or ExtraPodSpec()
        extra.pod_spec["serviceAccountName"] = constants.PLANNER_SERVICE_ACCOUNT
        spec.extra_pod_spec = extra
    if shared.component_type == constants.FRONTEND and shared.ingress is None:
        spec.ingress = default_ingress(graph, settings)
    apply_deployment_config(spec, service)

    metadata: Json = {
        "name": naming.component_name(graph, service),
        "namespace": namespace,
        "labels": dict(component_labels),
    }
    return DynamoComponentDeployment(metadata=metadata, spec=spec)


def default_ingress(graph: str, settings: OperatorSettings) -> IngressSpec | None:
    """The ingress a frontend gets when it configures none: enabled when the operator has an
    ingress class or an Istio gateway, for host `<graph>`."""
    gateway = settings.virtual_service_gateway
    ingress_class = settings.ingress_controller_class_name
    if not gateway and not ingress_class:
        return None
    secret = settings.ingress_controller_tls_secret_name
    return IngressSpec(
        enabled=True,
        host=graph,
        use_virtual_service=bool(gateway) or None,
        virtual_service_gateway=gateway or None,
        ingress_controller_class_name=ingress_class or None,
        tls=IngressTLSSpec(secret_name=secret) if secret else None,
        host_suffix=settings.ingress_host_suffix or None,
    )


def _annotations(
    shared: DynamoComponentDeploymentSharedSpec, graph_annotations: dict[str, str]
) -> dict[str, str]:
    own = dict(shared.annotations or {})
    for key in constants.INHERITED_GRAPH_ANNOTATIONS:
        if key in graph_annotations and key not in own:
            own[key] = graph_annotations[key]
    return own
