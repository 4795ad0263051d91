"""What a graph's EPP (Endpoint Picker Plugin) service needs besides its DCD: the ConfigMap of
its inline `eppConfig.config` and the InferencePool it picks endpoints for.

The EPP pod mounts `<graph>-epp-config` (key `epp-config-dynamo.yaml`) unless the service names
its own ConfigMap with `eppConfig.configMapRef`, and serves the pool `<graph>-pool` of the
graph's worker pods, as the original operator names and labels them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from api import v1alpha1, v1beta1
from backends import constants, naming
from backends.component_defaults import EPP_CONFIG_KEY
from backends.hub_graph import HubGraph
from backends.yaml_text import to_yaml

Json = dict[str, Any]
#: The EPP's config, as either version's model holds it (the same fields).
EppConfig = v1alpha1.EPPConfig | v1beta1.EPPConfig

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


def epp_services(graph: HubGraph
                 ) -> list[tuple[str, v1beta1.DynamoComponentDeploymentSharedSpec]]:
    """The graph's components of componentType epp, by name."""
    return [(name, spec) for name, spec in graph.components()
            if graph.component_type(name) == constants.EPP]


def pool_name(graph: str) -> str:
    return f"{graph}-pool"


def _labels(graph: str, service: str) -> dict[str, str]:
    return {constants.LABEL_GRAPH_NAME: graph, constants.LABEL_COMPONENT: service,
            constants.LABEL_COMPONENT_TYPE: constants.EPP}


def epp_objects(graph: str, namespace: str, service: str, config: EppConfig | None, *,
                dynamo_namespace: str, picker_service: str) -> list[Json]:
    """The EPP service's ConfigMap (unless it brings its own) and InferencePool, from its
    `eppConfig`. `graph`: the parent's name (a DCD of its own: the DCD's); `picker_service`:
    the Service of the EPP pods."""
    config_map = epp_config_map(graph, namespace, service, config)
    pool = inference_pool(graph, namespace, service, dynamo_namespace=dynamo_namespace,
                          picker_service=picker_service)
    return [config_map, pool] if config_map is not None else [pool]


def graph_epp_objects(hub: HubGraph, service: str,
                      spec: v1beta1.DynamoComponentDeploymentSharedSpec) -> list[Json]:
    """`epp_objects` of a graph's EPP component, whose pods are behind its DCD's Service."""
    graph, namespace = hub.name, hub.namespace
    dynamo_namespace = naming.dynamo_namespace(
        namespace, graph, global_namespace=bool(spec.global_dynamo_namespace))
    return epp_objects(graph, namespace, service, spec.epp_config,
                       dynamo_namespace=dynamo_namespace,
                       picker_service=naming.component_name(graph, service))


def epp_config_map(graph: str, namespace: str, service: str,
                   epp_config: EppConfig | None) -> Json | None:
    """`<graph>-epp-config` holding the inline config as YAML; None when the service brings
    its own ConfigMap (or has no config, which validation refuses)."""
    config = epp_config.config if epp_config is not None else None
    if config is None or (epp_config is not None and epp_config.config_map_ref):
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
