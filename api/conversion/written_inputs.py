"""A DCD in the hub's version carrying render inputs: the inverse of
`render_inputs` for a DCD, for the child DCDs the operator builds from a graph.

A graph's child DCD is built from the graph's `v1beta1` component plus what the graph decides,
and some of that only `v1alpha1` can say (the component's own labels and annotations, which
its builders put on the Deployment and Service; its ingress and dynamoNamespace; the
componentType pair, sharedMemory, the pod group as `v1alpha1` splits it). Such fields travel in
the DCD's spec payload, which only this package writes and reads: `with_component_inputs`
takes the child's native fields and its `ComponentInputs`, and gives the DCD whose
`v1beta1` fields are what those inputs convert to and whose payload keeps the rest, so that
`render_inputs` of it gives the inputs back and its `v1alpha1` form (hence its spec hash,
`api.conversion.hash_basis`) is the one the child had when it was built as `v1alpha1`.
"""

from __future__ import annotations

from typing import Any

import attrs

from api.conversion.component import COMPONENT_DEPLOYMENT_SPEC_RULES
from api.conversion.dispatch import convert
from api.conversion.objects import HUB, SPOKE
from api.conversion.render_inputs import ComponentInputs
from api.conversion.rules import convert_fields
from api.convert import dump, load
from api.kube import Json
from api.v1alpha1 import DynamoComponentDeploymentSpec

__all__ = ["with_component_inputs"]


def with_component_inputs(dcd: Json, inputs: ComponentInputs) -> Json:
    """`dcd` (a DynamoComponentDeployment in `v1beta1` holding only fields both versions
    share, and its `name`) with `inputs` written into it; a new object. The `v1alpha1` spec
    it converts to is `dcd`'s fields and the inputs' in the `v1alpha1` model's order.
    ConversionError (a ValueError) for fields that do not fit the `v1alpha1` model."""
    if dcd.get("apiVersion") != HUB or dcd.get("kind") != "DynamoComponentDeployment":
        raise ValueError(f"inputs are written into a DCD in {HUB}")
    # The shared fields have one meaning in both versions: only their names move.
    shared, _ = convert_fields(dcd.get("spec") or {}, COMPONENT_DEPLOYMENT_SPEC_RULES,
                               to_hub=False, restored=None)
    spec = attrs.evolve(load(DynamoComponentDeploymentSpec, shared), **_fields(inputs))
    return convert({**dcd, "apiVersion": SPOKE, "spec": dump(spec)}, HUB)


def _fields(inputs: ComponentInputs) -> dict[str, Any]:
    """The `v1alpha1` model fields the inputs set (service_name aside: a DCD's `name`)."""
    return {
        "component_type": inputs.component_type,
        "sub_component_type": inputs.sub_component_type,
        "labels": dict(inputs.labels) if inputs.labels is not None else None,
        "annotations": dict(inputs.annotations) if inputs.annotations is not None else None,
        "ingress": inputs.ingress,
        "dynamo_namespace": inputs.dynamo_namespace,
        "autoscaling": (load(DynamoComponentDeploymentSpec, {"autoscaling": inputs.autoscaling})
                        .autoscaling if inputs.autoscaling is not None else None),
        "shared_memory": inputs.shared_memory,
        "scaling_adapter": inputs.scaling_adapter,
        **attrs.asdict(inputs.pod, recurse=False),
    }
