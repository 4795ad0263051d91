"""Labels and annotations of the generated objects, for both orchestration paths.

They are what selectors, Dynamo's Kubernetes discovery, metrics scraping and
`kubectl get -l nvidia.com/dynamo-graph-deployment-name=<graph>` rely on.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from api.v1alpha1 import DynamoComponentDeployment, DynamoComponentDeploymentSharedSpec
from backends import constants, naming

Labels = dict[str, str]

__all__ = [
    "component_identity",
    "component_type_labels",
    "dcd_object_annotations",
    "dcd_object_labels",
    "dcd_pod_annotations",
    "dcd_pod_identity",
    "dcd_pod_labels",
    "graph_name",
    "graph_name_of",
    "grove_clique_annotations",
    "grove_clique_labels",
    "metrics_enabled",
    "model_annotations",
    "model_labels",
]


def component_identity(graph: str, service: str, dynamo_namespace: str) -> Labels:
    """The three labels that say which graph, service and Dynamo namespace an object is for."""
    return {
        constants.LABEL_COMPONENT: service,
        constants.LABEL_DYNAMO_NAMESPACE: dynamo_namespace,
        constants.LABEL_GRAPH_NAME: graph,
    }


def metrics_enabled(annotations: Mapping[str, str] | None) -> bool:
    """Pods are scraped unless the enable-metrics annotation is "false"."""
    return (annotations or {}).get(constants.ANNOTATION_ENABLE_METRICS) != "false"


def component_type_labels(spec: DynamoComponentDeploymentSharedSpec) -> Labels:
    labels: Labels = {}
    if spec.component_type:
        labels[constants.LABEL_COMPONENT_TYPE] = spec.component_type
    if spec.sub_component_type:
        labels[constants.LABEL_SUB_COMPONENT_TYPE] = spec.sub_component_type
    return labels


def model_labels(spec: DynamoComponentDeploymentSharedSpec) -> Labels:
    """The base-model hash label that puts pods behind their model's headless Service."""
    if spec.model_ref is None or not spec.model_ref.name:
        return {}
    return {constants.LABEL_BASE_MODEL_HASH: naming.model_hash(spec.model_ref.name)}


def model_annotations(spec: DynamoComponentDeploymentSharedSpec) -> Labels:
    if spec.model_ref is None or not spec.model_ref.name:
        return {}
    return {constants.ANNOTATION_BASE_MODEL: spec.model_ref.name}


def graph_name_of(dcd: DynamoComponentDeployment) -> str:
    """The graph a DCD belongs to: its graph label, else its owning DGD, else ""."""
    return graph_name(dcd.spec.labels, dcd.metadata)


def graph_name(component_labels: Mapping[str, str] | None, metadata: Mapping[str, Any]) -> str:
    """The graph of a DCD with these component labels (`v1alpha1`'s spec.labels) and this
    metadata: the graph label of either, else its owning DGD, else ""."""
    labels = {**(component_labels or {}), **(metadata.get("labels") or {})}
    if labels.get(constants.LABEL_GRAPH_NAME):
        return str(labels[constants.LABEL_GRAPH_NAME])
    for owner in metadata.get("ownerReferences") or []:
        if owner.get("kind") == "DynamoGraphDeployment":
            return str(owner.get("name", ""))
    return ""


def dcd_object_labels(dcd: DynamoComponentDeployment) -> Labels:
    """Labels of the workload and Services of a DCD: its own labels and the model hash."""
    return {
        **(dcd.spec.labels or {}),
        **(dcd.metadata.get("labels") or {}),
        **model_labels(dcd.spec),
    }


def dcd_object_annotations(dcd: DynamoComponentDeployment) -> Labels:
    extra = dcd.spec.extra_pod_metadata
    return {
        **(dcd.spec.annotations or {}),
        **((extra.annotations or {}) if extra is not None else {}),
        **model_annotations(dcd.spec),
    }


def dcd_pod_labels(dcd: DynamoComponentDeployment, selector: str) -> Labels:
    """Pod template labels of a DCD's workload; `selector` is the workload's name."""
    labels = dcd_object_labels(dcd)
    if metrics_enabled(dcd.spec.annotations):
        labels[constants.LABEL_METRICS_ENABLED] = "true"
    graph = graph_name_of(dcd)
    if graph:
        labels[constants.LABEL_GRAPH_NAME] = graph
    labels.update(component_type_labels(dcd.spec))
    extra = dcd.spec.extra_pod_metadata
    labels.update((extra.labels or {}) if extra is not None else {})
    # Last, so no user label can detach the pods from their workload.
    labels[constants.LABEL_SELECTOR] = selector
    return labels


def dcd_pod_identity(dcd: DynamoComponentDeployment, dynamo_namespace: str) -> Labels:
    """The labels the component Service selects on. A graph's DCD carries them in its labels;
    a DCD of its own does not, and without them its Service would select no pod. Callers put
    the DCD's own labels over these."""
    name = str(dcd.metadata.get("name", ""))
    return {
        constants.LABEL_DYNAMO_NAMESPACE: dynamo_namespace,
        constants.LABEL_COMPONENT: dcd.spec.service_name or name,
    }


def dcd_pod_annotations(dcd: DynamoComponentDeployment) -> Labels:
    extra = dcd.spec.extra_pod_metadata
    annotations = {
        **((extra.annotations or {}) if extra is not None else {}),
        **model_annotations(dcd.spec),
    }
    # A graph restart changes this token in the DCD; on the pod template it rolls the pods.
    restart = (dcd.spec.annotations or {}).get(constants.ANNOTATION_RESTART_AT)
    if restart:
        annotations[constants.ANNOTATION_RESTART_AT] = restart
    return annotations


def grove_clique_labels(
    graph: str,
    graph_annotations: Mapping[str, str],
    service: str,
    spec: DynamoComponentDeploymentSharedSpec,
    dynamo_namespace: str,
) -> Labels:
    """Labels of a service's Grove cliques, which Grove copies onto their pods."""
    labels: Labels = {
        constants.LABEL_SELECTOR: naming.component_name(graph, service),
        constants.LABEL_GRAPH_NAME: graph,
        constants.LABEL_COMPONENT: service,
        constants.LABEL_DYNAMO_NAMESPACE: dynamo_namespace,
        **component_type_labels(spec),
        **model_labels(spec),
    }
    if metrics_enabled(graph_annotations):
        labels[constants.LABEL_METRICS_ENABLED] = "true"
    labels.update(spec.labels or {})
    extra = spec.extra_pod_metadata
    labels.update((extra.labels or {}) if extra is not None else {})
    return labels


def grove_clique_annotations(spec: DynamoComponentDeploymentSharedSpec) -> Labels:
    extra = spec.extra_pod_metadata
    return {
        **(spec.annotations or {}),
        **((extra.annotations or {}) if extra is not None else {}),
        **model_annotations(spec),
    }
