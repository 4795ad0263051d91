"""Services: the one in front of each component, and one headless Service per base model
through which DynamoModel finds the pods serving it."""

from __future__ import annotations

from typing import Any

from backends import constants, naming
from backends.component_spec import ComponentSpec
from backends.errors import GenerationError

Json = dict[str, Any]

__all__ = ["component_service", "component_service_port", "model_service"]


def component_service_port(spec: ComponentSpec) -> Json:
    """The port a component serves: HTTP 8000 for frontends, the metrics port for planners,
    gRPC for endpoint pickers, and the system port 9090 for everything else."""
    name, port = _PORTS.get(
        spec.component_type or "", (constants.SYSTEM_PORT_NAME, constants.SYSTEM_PORT)
    )
    return {"name": name, "port": port, "targetPort": name, "protocol": "TCP"}


_PORTS = {
    constants.FRONTEND: (constants.FRONTEND_PORT_NAME, constants.FRONTEND_PORT),
    constants.PLANNER: (constants.METRICS_PORT_NAME, constants.PLANNER_METRICS_PORT),
    constants.EPP: (constants.EPP_GRPC_PORT_NAME, constants.EPP_GRPC_PORT),
}


def component_service(
    name: str,
    namespace: str,
    service: str,
    spec: ComponentSpec,
    dynamo_namespace: str,
    *,
    object_labels: dict[str, str],
    annotations: dict[str, str] | None = None,
    discovery: bool,
    leader_only: bool = False,
) -> Json:
    """The Service of a component. It selects the pods of the component's type in its Dynamo
    namespace (or, for a component without a type, the component's own pods); `leader_only`
    keeps multinode workers out. Under Kubernetes discovery it is labelled for Dynamo."""
    if not dynamo_namespace:
        raise GenerationError(f"component {service} has no Dynamo namespace")
    selector = {constants.LABEL_DYNAMO_NAMESPACE: dynamo_namespace}
    if spec.component_type:
        selector[constants.LABEL_COMPONENT_TYPE] = spec.component_type
    else:
        selector[constants.LABEL_COMPONENT] = service
    if leader_only:
        selector[constants.LABEL_ROLE] = "leader"
    svc_labels = dict(object_labels)
    if discovery:
        svc_labels[constants.LABEL_DISCOVERY_BACKEND] = constants.DISCOVERY_KUBERNETES
        if spec.component_type != constants.FRONTEND:
            svc_labels[constants.LABEL_DISCOVERY_ENABLED] = "true"
    meta: Json = {"name": name, "namespace": namespace, "labels": svc_labels}
    if annotations:
        meta["annotations"] = dict(annotations)
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": meta,
        "spec": {"selector": selector, "ports": [component_service_port(spec)]},
    }


def model_service(model: str, namespace: str) -> Json:
    """The headless Service of a base model; its EndpointSlices list every pod serving it."""
    digest = naming.model_hash(model)
    meta: Json = {
        "name": naming.model_service_name(model),
        "namespace": namespace,
        "labels": {
            constants.LABEL_BASE_MODEL_HASH: digest,
            constants.LABEL_MANAGED_BY: constants.MANAGED_BY,
        },
        "annotations": {constants.ANNOTATION_BASE_MODEL: model},
    }
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": meta,
        "spec": {
            "clusterIP": "None",
            "selector": {constants.LABEL_BASE_MODEL_HASH: digest},
            "publishNotReadyAddresses": False,
            "ports": [
                {
                    "name": constants.SYSTEM_PORT_NAME,
                    "port": constants.SYSTEM_PORT,
                    "targetPort": constants.SYSTEM_PORT,
                    "protocol": "TCP",
                }
            ],
        },
    }
