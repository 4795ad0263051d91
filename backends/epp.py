"""What a graph's EPP (Endpoint Picker Plugin) service needs besides its DCD: the ConfigMap of
its inline `eppConfig.config` and the InferencePool it picks endpoints for.

The EPP pod mounts `<graph>-epp-config` (key `epp-config-dynamo.yaml`) unless the service names
its own ConfigMap with `eppConfig.configMapRef`, and serves the pool `<graph>-pool` of the
graph's worker pods, as the original operator names and labels them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from api.v1alpha1 import DynamoComponentDeploymentSharedSpec, DynamoGraphDeployment
from backends import constants, naming
from backends.component_defaults import EPP_CONFIG_KEY
from backends.yaml_text import to_yaml

Json = dict[str, Any]

__all__ = ["EPP_CONFIG_API_VERSION", "NO_INFERENCE_POOL", "epp_config_map", "epp_objects",
           "epp_services", "graph_epp_objects", "inference_pool", "no_inference_pool",
           "pool_name"]

#: apiVersion and kind written into an inline EndpointPickerConfig, as the EPP reads it.
EPP_CONFIG_API_VERSION = "inference.networking.x-k8s.io/v1alpha1"
EPP_CONFIG_KIND = "EndpointPickerConfig"
NO_INFERENCE_POOL = (
    "EPP service(s) {services} need the InferencePool API ({group}), which this cluster does "
    "not serve; install the gateway-api-inference-extension CRDs and restart the operator"
)


def no_inference_pool(services: Sequence[str]) -> str:
    """Why EPP services cannot run here, naming them and the API to install."""
    return NO_INFERENCE_POOL.format(services=", ".join(services),
                                    group=constants.INFERENCE_POOL_GROUP)


def epp_services(dgd: DynamoGraphDeployment
                 ) -> list[tuple[str, DynamoComponentDeploymentSharedSpec]]:
    """The graph's services of componentType epp, by key."""
    return [(key, spec) for key, spec in sorted((dgd.spec.services or {}).items())
            if spec.component_type == constants.EPP]


def pool_name(graph: str) -> str:
    return f"{graph}-pool"


def _labels(graph: str, service: str) -> dict[str, str]:
    return {constants.LABEL_GRAPH_NAME: graph, constants.LABEL_COMPONENT: service,
            constants.LABEL_COMPONENT_TYPE: constants.EPP}


def epp_objects(graph: str, namespace: str, service: str,
                spec: DynamoComponentDeploymentSharedSpec, *, dynamo_namespace: str,
                picker_service: str) -> list[Json]:
    """The EPP service's ConfigMap (unless it brings its own) and InferencePool. `graph`: the
    parent's name (a DCD of its own: the DCD's); `picker_service`: the Service of the EPP
    pods."""
    config_map = epp_config_map(graph, namespace, service, spec)
    pool = inference_pool(graph, namespace, service, dynamo_namespace=dynamo_namespace,
                          picker_service=picker_service)
    return [config_map, pool] if config_map is not None else [pool]


def graph_epp_objects(dgd: DynamoGraphDeployment, service: str,
                      spec: DynamoComponentDeploymentSharedSpec) -> list[Json]:
    """`epp_objects` of a graph's EPP service, whose pods are behind its DCD's Service."""
    graph = str(dgd.metadata.get("name", ""))
    namespace = str(dgd.metadata.get("namespace", ""))
    dynamo_namespace = naming.dynamo_namespace(
        namespace, graph, global_namespace=bool(spec.global_dynamo_namespace))
    return epp_objects(graph, namespace, service, spec, dynamo_namespace=dynamo_namespace,
                       picker_service=naming.component_name(graph, service))


def epp_config_map(graph: str, namespace: str, service: str,
                   spec: DynamoComponentDeploymentSharedSpec) -> Json | None:
    """`<graph>-epp-config` holding the inline config as YAML; None when the service brings
    its own ConfigMap (or has no config, which validation refuses)."""
    config = spec.epp_config.config if spec.epp_config is not None else None
    if config is None or (spec.epp_config is not None and spec.epp_config.config_map_ref):
        return None
    document = {**config, "apiVersion": EPP_CONFIG_API_VERSION, "kind": EPP_CONFIG_KIND}
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": f"{graph}-epp-config", "namespace": namespace,
                     "labels": _labels(graph, service)},
        "data": {EPP_CONFIG_KEY: to_yaml(document)},
    }


def inference_pool(graph: str, namespace: str, service: str, *, dynamo_namespace: str,
                   picker_service: str) -> Json:
    """`<graph>-pool`: the worker pods of the Dynamo namespace on the frontend port, picked
    by the EPP's Service (gRPC port)."""
    return {
        "apiVersion": constants.INFERENCE_POOL_API_VERSION,
        "kind": "InferencePool",
        "metadata": {"name": pool_name(graph), "namespace": namespace,
                     "labels": _labels(graph, service)},
        "spec": {
            "targetPorts": [{"number": constants.FRONTEND_PORT}],
            "selector": {"matchLabels": {
                constants.LABEL_COMPONENT_TYPE: constants.WORKER,
                constants.LABEL_DYNAMO_NAMESPACE: dynamo_namespace,
            }},
            "endpointPickerRef": {
                "kind": "Service",
                "name": picker_service,
                "port": {"number": constants.EPP_GRPC_PORT},
            },
        },
    }
