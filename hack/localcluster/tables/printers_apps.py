"""Printers of the apps group: Deployment, ReplicaSet, StatefulSet and DaemonSet."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from .cells import (
    as_dict,
    as_int,
    desired_replicas,
    format_label_selector,
    format_labels,
    named_row,
    selector_string,
    template_cells,
)
from .columns import READY_PODS_DESCRIPTION, Col, Printer, Row, named_columns, template_columns

Json = dict[str, Any]

__all__ = ["PRINTERS"]

_SELECTOR = (
    "A label query over pods that should match the replica count. It must match the pod "
    "template's labels. More info: https://kubernetes.io/docs/concepts/overview/working-with-"
    "objects/labels/#label-selectors"
)
_DEPLOYMENT_SELECTOR = (
    "Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the "
    "ones affected by this deployment."
)
_DOCS = {
    "deploy.updated": "Total number of non-terminated pods targeted by this deployment that have "
    "the desired template spec.",
    "deploy.available": "Total number of available pods (ready for at least minReadySeconds) "
    "targeted by this deployment.",
    "rs.desired": "Replicas is the number of desired replicas. This is a pointer to distinguish "
    "between explicit zero and unspecified. Defaults to 1. More info: https://kubernetes.io/docs/"
    "concepts/workloads/controllers/replicationcontroller/#what-is-a-replicationcontroller",
    "rs.current": "Replicas is the most recently observed number of replicas. More info: "
    "https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller/"
    "#what-is-a-replicationcontroller",
    "rs.ready": "readyReplicas is the number of pods targeted by this ReplicaSet with a Ready "
    "Condition.",
    "ds.desired": "The total number of nodes that should be running the daemon pod (including "
    "nodes correctly running the daemon pod). More info: https://kubernetes.io/docs/concepts/"
    "workloads/controllers/daemonset/",
    "ds.current": "The number of nodes that are running at least 1 daemon pod and are supposed to "
    "run the daemon pod. More info: https://kubernetes.io/docs/concepts/workloads/controllers/"
    "daemonset/",
    "ds.ready": "numberReady is the number of nodes that should be running the daemon pod and have "
    "one or more of the daemon pod running with a Ready Condition.",
    "ds.updated": "The total number of nodes that are running updated daemon pod",
    "ds.available": "The number of nodes that should be running the daemon pod and have one or "
    "more of the daemon pod running and available (ready for at least spec.minReadySeconds)",
    "ds.nodeSelector": "NodeSelector is a selector which must be true for the pod to fit on a "
    "node. Selector which must match a node's labels for the pod to be scheduled on that node. "
    "More info: https://kubernetes.io/docs/concepts/configuration/assign-pod-node/",
}


def _ready_of_desired(obj: Json) -> str:
    """The READY cell of a Deployment or StatefulSet: ready replicas / desired replicas."""
    spec, status = as_dict(obj.get("spec")), as_dict(obj.get("status"))
    return f"{as_int(status.get('readyReplicas'))}/{desired_replicas(spec)}"


def _print_deployment(obj: Json, now: datetime) -> Row:
    status = as_dict(obj.get("status"))
    selector = selector_string(as_dict(obj.get("spec")).get("selector"))
    cells = named_row(
        obj,
        now,
        _ready_of_desired(obj),
        as_int(status.get("updatedReplicas")),
        as_int(status.get("availableReplicas")),
        after_age=[*template_cells(obj), "<invalid>" if selector is None else selector],
    )
    return cells, None


def _print_replicaset(obj: Json, now: datetime) -> Row:
    spec, status = as_dict(obj.get("spec")), as_dict(obj.get("status"))
    cells = named_row(
        obj,
        now,
        desired_replicas(spec),
        as_int(status.get("replicas")),
        as_int(status.get("readyReplicas")),
        after_age=[*template_cells(obj), format_label_selector(spec.get("selector"))],
    )
    return cells, None


def _print_statefulset(obj: Json, now: datetime) -> Row:
    return named_row(obj, now, _ready_of_desired(obj), after_age=template_cells(obj)), None


def _print_daemonset(obj: Json, now: datetime) -> Row:
    spec, status = as_dict(obj.get("spec")), as_dict(obj.get("status"))
    pod_spec = as_dict(as_dict(spec.get("template")).get("spec"))
    counts = (
        "desiredNumberScheduled",
        "currentNumberScheduled",
        "numberReady",
        "updatedNumberScheduled",
        "numberAvailable",
    )
    cells = named_row(
        obj,
        now,
        *(as_int(status.get(name)) for name in counts),
        format_labels(pod_spec.get("nodeSelector")),
        after_age=[*template_cells(obj), format_label_selector(spec.get("selector"))],
    )
    return cells, None


PRINTERS: dict[tuple[str, str], Printer] = {
    ("apps", "Deployment"): Printer(
        named_columns(
            Col("Ready", "string", READY_PODS_DESCRIPTION),
            Col("Up-to-date", "string", _DOCS["deploy.updated"]),
            Col("Available", "string", _DOCS["deploy.available"]),
            after_age=template_columns(_DEPLOYMENT_SELECTOR),
        ),
        _print_deployment,
    ),
    ("apps", "ReplicaSet"): Printer(
        named_columns(
            Col("Desired", "integer", _DOCS["rs.desired"]),
            Col("Current", "integer", _DOCS["rs.current"]),
            Col("Ready", "integer", _DOCS["rs.ready"]),
            after_age=template_columns(_SELECTOR),
        ),
        _print_replicaset,
    ),
    ("apps", "StatefulSet"): Printer(
        named_columns(Col("Ready", "string", READY_PODS_DESCRIPTION), after_age=template_columns()),
        _print_statefulset,
    ),
    ("apps", "DaemonSet"): Printer(
        named_columns(
            *(
                Col(title, "integer", _DOCS[key])
                for title, key in (
                    ("Desired", "ds.desired"),
                    ("Current", "ds.current"),
                    ("Ready", "ds.ready"),
                    ("Up-to-date", "ds.updated"),
                    ("Available", "ds.available"),
                )
            ),
            Col("Node Selector", "string", _DOCS["ds.nodeSelector"]),
            after_age=template_columns(_SELECTOR),
        ),
        _print_daemonset,
    ),
}
