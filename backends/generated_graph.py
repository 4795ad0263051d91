"""What a request's profiling output becomes: the DynamoGraphDeployment autoApply creates
and the extra ConfigMaps the profiler emitted, both marked with the request they came from.

Neither carries an owner reference: the graph outlives its request (deleting a request must
not take a running deployment down), and the ConfigMaps serve the graph.
"""

from __future__ import annotations

import copy
from typing import Any

from api.v1alpha1 import DynamoGraphDeploymentRequest
from backends import constants
from backends.profiling_job import LABEL_DGDR_NAME, LABEL_DGDR_NAMESPACE

Json = dict[str, Any]

__all__ = ["additional_config_maps", "deployment_object", "target_namespace"]


def _origin(dgdr: DynamoGraphDeploymentRequest) -> dict[str, str]:
    return {LABEL_DGDR_NAME: str(dgdr.metadata["name"]),
            LABEL_DGDR_NAMESPACE: str(dgdr.metadata["namespace"]),
            constants.LABEL_MANAGED_BY: constants.MANAGED_BY}


def target_namespace(dgdr: DynamoGraphDeploymentRequest) -> str:
    overrides = dgdr.spec.deployment_overrides
    if overrides is not None and overrides.namespace:
        return overrides.namespace
    return str(dgdr.metadata["namespace"])


def deployment_object(generated: Json, dgdr: DynamoGraphDeploymentRequest) -> Json:
    """The graph to create from the generated one: name and namespace as overridden, the
    request's labels added (the overrides' labels win), the annotations merged, the spec as
    generated."""
    overrides = dgdr.spec.deployment_overrides
    meta = generated.get("metadata") or {}
    name = (overrides.name if overrides is not None and overrides.name else None) or str(
        meta.get("name") or dgdr.metadata["name"])
    labels = {**(meta.get("labels") or {}), **_origin(dgdr),
              **((overrides.labels or {}) if overrides is not None else {})}
    annotations = {**(meta.get("annotations") or {}),
                   **((overrides.annotations or {}) if overrides is not None else {})}
    out: Json = {
        "apiVersion": generated.get("apiVersion") or "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": name, "namespace": target_namespace(dgdr), "labels": labels},
        "spec": copy.deepcopy(generated.get("spec") or {}),
    }
    if annotations:
        out["metadata"]["annotations"] = annotations
    return out


def additional_config_maps(resources: list[Json], dgdr: DynamoGraphDeploymentRequest
                           ) -> list[Json]:
    """The ConfigMaps among the extra documents, in the target namespace, with the request's
    labels; other kinds are not created."""
    out = []
    for doc in resources:
        if doc.get("kind") != "ConfigMap" or not (doc.get("metadata") or {}).get("name"):
            continue
        cm = copy.deepcopy(doc)
        meta = cm["metadata"]
        meta["namespace"] = target_namespace(dgdr)
        meta["labels"] = {**(meta.get("labels") or {}), **_origin(dgdr)}
        for key in ("uid", "resourceVersion", "creationTimestamp", "ownerReferences"):
            meta.pop(key, None)
        cm.setdefault("apiVersion", "v1")
        out.append(cm)
    return out
