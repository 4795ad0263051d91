"""A graph's own `labels`, `annotations` and `priorityClassName` (`v1beta1` graph spec), as
they reach its children.

The reference: the labels and annotations go to every child (scaling adapters, DCDs, their
workloads and pod templates), and what the component or its `podTemplate` says wins on a
conflict; the identity labels the operator sets win over both. `priorityClassName` is the
PriorityClass of the Grove PodCliqueSet (`spec.template.priorityClassName`); the DCD path
has no PodCliqueSet and leaves it out, as the reference says it requires Grove.

A graph that sets none of them renders exactly as before (every function here returns its
input unchanged then): an operator upgrade rewrites nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from api.conversion.render_inputs import ComponentInputs
from api.v1alpha1 import ExtraPodMetadata
from backends.hub_graph import HubGraph

Json = dict[str, Any]

__all__ = ["graph_annotations", "graph_labels", "stamp_metadata", "with_graph_metadata",
           "with_priority_class"]


def graph_labels(graph: HubGraph) -> dict[str, str]:
    """`spec.labels` ({} when unset)."""
    return dict(graph.model.spec.labels or {})


def graph_annotations(graph: HubGraph) -> dict[str, str]:
    """`spec.annotations` ({} when unset)."""
    return dict(graph.model.spec.annotations or {})


def with_graph_metadata(graph: HubGraph, inputs: ComponentInputs) -> ComponentInputs:
    """A component's inputs with the graph's labels and annotations under its own (which the
    builders put on the workload, its Service and its pods; the podTemplate's metadata still
    wins on the pods). The same inputs when the graph sets neither."""
    labels, annotations = graph_labels(graph), graph_annotations(graph)
    if not labels and not annotations:
        return inputs
    pod = inputs.pod
    if annotations:
        # A DCD's pods take only their extraPodMetadata annotations of the component's own.
        extra = pod.extra_pod_metadata or ExtraPodMetadata()
        pod = pod.replace(extra_pod_metadata=ExtraPodMetadata(
            labels=extra.labels, annotations=dict(_under(annotations, extra.annotations) or {})))
    return inputs.replace(
        labels=_under(labels, inputs.labels),
        annotations=_under(annotations, inputs.annotations),
        pod=pod,
    )


def stamp_metadata(graph: HubGraph, obj: Json) -> Json:
    """`obj` (a child of the graph, changed in place and returned) with the graph's labels and
    annotations under its own."""
    labels, annotations = graph_labels(graph), graph_annotations(graph)
    meta = obj.setdefault("metadata", {})
    if labels:
        meta["labels"] = {**labels, **(meta.get("labels") or {})}
    if annotations:
        meta["annotations"] = {**annotations, **(meta.get("annotations") or {})}
    return obj


def with_priority_class(graph: HubGraph, pcs: Json) -> Json:
    """A PodCliqueSet (changed in place and returned) with the graph's `priorityClassName`
    in its template (Grove gives it to the set's pods)."""
    name = graph.model.spec.priority_class_name
    if name:
        pcs["spec"]["template"]["priorityClassName"] = name
    return pcs


def _under(base: Mapping[str, str], own: Mapping[str, str] | None) -> Mapping[str, str] | None:
    if not base:
        return own
    return {**base, **(own or {})}
