"""Labels and annotations of the generated objects, for both orchestration paths.

They are what selectors, Dynamo's Kubernetes discovery, metrics scraping and
`kubectl get -l nvidia.com/dynamo-graph-deployment-name=<graph>` rely on.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from backends import constants, naming
from backends.component_spec import ComponentSpec

if TYPE_CHECKING:  # hub_component reads `graph_name`
    from backends.hub_component import HubComponent

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


def component_type_labels(component: ComponentSpec) -> Labels:
    """The component-type labels: `v1alpha1`'s componentType and subComponentType."""
    labels: Labels = {}
    if component.inputs.component_type:
        labels[constants.LABEL_COMPONENT_TYPE] = component.inputs.component_type
    if component.inputs.sub_component_type:
        labels[constants.LABEL_SUB_COMPONENT_TYPE] = component.inputs.sub_component_type
    return labels


def model_labels(component: ComponentSpec) -> Labels:
    """The base-model hash label that puts pods behind their model's headless Service."""
    ref = component.spec.model_ref
    if ref is None or not ref.name:
        return {}
    return {constants.LABEL_BASE_MODEL_HASH: naming.model_hash(ref.name)}


def model_annotations(component: ComponentSpec) -> Labels:
    """The base-model annotation of the component's pods and objects."""
    ref = component.spec.model_ref
    if ref is None or not ref.name:
        return {}
    return {constants.ANNOTATION_BASE_MODEL: ref.name}


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


def dcd_object_labels(dcd: HubComponent) -> Labels:
    """Labels of the workload and Services of a DCD: its own labels (`v1alpha1`'s
    spec.labels, then its metadata's) and the model hash."""
    return {
        **(dcd.inputs.labels or {}),
        **(dcd.model.metadata.get("labels") or {}),
        **model_labels(dcd.component),
    }


def dcd_object_annotations(dcd: HubComponent) -> Labels:
    """Annotations of the workload and Services of a DCD."""
    extra = dcd.inputs.pod.extra_pod_metadata
    return {
        **(dcd.inputs.annotations or {}),
        **((extra.annotations or {}) if extra is not None else {}),
        **model_annotations(dcd.component),
    }


def dcd_pod_labels(dcd: HubComponent, selector: str) -> Labels:
    """Pod template labels of a DCD's workload; `selector` is the workload's name."""
    labels = dcd_object_labels(dcd)
    if metrics_enabled(dcd.inputs.annotations):
        labels[constants.LABEL_METRICS_ENABLED] = "true"
    graph = dcd.graph_name()
    if graph:
        labels[constants.LABEL_GRAPH_NAME] = graph
    labels.update(component_type_labels(dcd.component))
    extra = dcd.inputs.pod.extra_pod_metadata
    labels.update((extra.labels or {}) if extra is not None else {})
    # Last, so no user label can detach the pods from their workload.
    labels[constants.LABEL_SELECTOR] = selector
    return labels


def dcd_pod_identity(dcd: HubComponent, dynamo_namespace: str) -> Labels:
    """The labels the component Service selects on. A graph's DCD carries them in its labels;
    a DCD of its own does not, and without them its Service would select no pod. Callers put
    the DCD's own labels over these."""
    return {
        constants.LABEL_DYNAMO_NAMESPACE: dynamo_namespace,
        constants.LABEL_COMPONENT: dcd.service,
    }


def dcd_pod_annotations(dcd: HubComponent) -> Labels:
    """Pod template annotations of a DCD's workload."""
    extra = dcd.inputs.pod.extra_pod_metadata
    annotations = {
        **((extra.annotations or {}) if extra is not None else {}),
        **model_annotations(dcd.component),
    }
    # A graph restart changes this token in the DCD; on the pod template it rolls the pods.
    restart = (dcd.inputs.annotations or {}).get(constants.ANNOTATION_RESTART_AT)
    if restart:
        annotations[constants.ANNOTATION_RESTART_AT] = restart
    return annotations


def grove_clique_labels(
    graph: str,
    graph_annotations: Mapping[str, str],
    service: str,
    component: ComponentSpec,
    dynamo_namespace: str,
) -> Labels:
    """Labels of a service's Grove cliques, which Grove copies onto their pods."""
    labels: Labels = {
        constants.LABEL_SELECTOR: naming.component_name(graph, service),
        constants.LABEL_GRAPH_NAME: graph,
        constants.LABEL_COMPONENT: service,
        constants.LABEL_DYNAMO_NAMESPACE: dynamo_namespace,
        **component_type_labels(component),
        **model_labels(component),
    }
    if metrics_enabled(graph_annotations):
        labels[constants.LABEL_METRICS_ENABLED] = "true"
    labels.update(component.inputs.labels or {})
    extra = component.inputs.pod.extra_pod_metadata
    labels.update((extra.labels or {}) if extra is not None else {})
    return labels


def grove_clique_annotations(component: ComponentSpec) -> Labels:
    """Annotations of a service's Grove cliques."""
    extra = component.inputs.pod.extra_pod_metadata
    return {
        **(component.inputs.annotations or {}),
        **((extra.annotations or {}) if extra is not None else {}),
        **model_annotations(component),
    }
