"""The Deployment of a single-node DCD, with its rollout strategy from annotations."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from backends import constants, labels
from backends.context import PodContext
from backends.errors import GenerationError
from backends.hub_component import HubComponent
from backends.multinode import Role
from backends.pod_spec import generate_pod_spec

Json = dict[str, Any]

__all__ = ["deployment", "deployment_strategy"]

_DEFAULT_SURGE = "25%"


def deployment_strategy(annotations: Mapping[str, str] | None) -> Json:
    """The rollout strategy named by the deployment-strategy annotation (RollingUpdate 25%/25%
    when absent)."""
    annotations = annotations or {}
    name = annotations.get(constants.ANNOTATION_DEPLOYMENT_STRATEGY, "RollingUpdate")
    if name == "Recreate":
        return {"type": "Recreate"}
    if name == "RampedSlowRollout":
        return _rolling(1, 0)
    if name == "BestEffortControlledRollout":
        return _rolling(0, "20%")
    if name != "RollingUpdate":
        raise GenerationError(
            f'unsupported {constants.ANNOTATION_DEPLOYMENT_STRATEGY} "{name}": supported values '
            "are RollingUpdate, Recreate, RampedSlowRollout and BestEffortControlledRollout"
        )
    return _rolling(
        _int_or_percent(annotations.get(constants.ANNOTATION_MAX_SURGE, _DEFAULT_SURGE)),
        _int_or_percent(annotations.get(constants.ANNOTATION_MAX_UNAVAILABLE, _DEFAULT_SURGE)),
    )


def deployment(
    dcd: HubComponent,
    ctx: PodContext,
    *,
    service_account: str = "default",
) -> Json:
    """The Deployment running a single-node DCD's pods. `service_account` is used when the
    pod spec names none (the operator passes the namespace's labelled component account)."""
    name = dcd.name
    role = Role("main", name, 1 if dcd.model.spec.replicas is None else dcd.model.spec.replicas, 1)
    pod_spec = generate_pod_spec(dcd.component, role, ctx)
    pod_spec.setdefault("serviceAccountName", service_account)
    pod_labels = {
        **labels.dcd_pod_identity(dcd, ctx.dynamo_namespace),
        **labels.dcd_pod_labels(dcd, name),
    }
    template: Json = {"metadata": {"labels": pod_labels}, "spec": pod_spec}
    pod_annotations = labels.dcd_pod_annotations(dcd)
    if pod_annotations:
        template["metadata"]["annotations"] = pod_annotations
    spec: Json = {
        "selector": {"matchLabels": {constants.LABEL_SELECTOR: name}},
        "strategy": deployment_strategy(dcd.inputs.annotations),
        "template": template,
    }
    if dcd.model.spec.replicas is not None:
        spec["replicas"] = dcd.model.spec.replicas
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": object_metadata(dcd, name),
        "spec": spec,
    }


def object_metadata(dcd: HubComponent, name: str) -> Json:
    """Metadata of an object a DCD owns: its name, namespace, labels and annotations."""
    meta: Json = {"name": name, "namespace": dcd.namespace}
    object_labels = labels.dcd_object_labels(dcd)
    if object_labels:
        meta["labels"] = object_labels
    annotations = labels.dcd_object_annotations(dcd)
    if annotations:
        meta["annotations"] = annotations
    return meta


def _rolling(surge: int | str, unavailable: int | str) -> Json:
    return {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxSurge": surge, "maxUnavailable": unavailable},
    }


def _int_or_percent(value: str) -> int | str:
    text = value.strip()
    if text.isdigit():
        return int(text)
    if text.endswith("%") and text[:-1].isdigit():
        return text
    raise GenerationError(f'invalid rolling update value "{value}": use a count or a percentage')
