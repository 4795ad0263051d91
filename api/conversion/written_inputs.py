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

`v1alpha1`'s frontendSidecar object holds a sidecar's image, args, env and Secret only, so a
child built from it runs a container named `sidecar-frontend` with those. `with_frontend_container`
gives such a child the component's `v1beta1` container whole instead, under its own name: the
`v1alpha1` fields written stand for it as they stood for the container they composed to
(`api.conversion.pod_template.spoke_stands_for`), so the inputs read back are the same and the
`v1alpha1` view keeps them, the rest of the container travelling as `v1beta1`'s remainder.
"""

from __future__ import annotations

from typing import Any

import attrs

from api.conversion.component import COMPONENT_DEPLOYMENT_SPEC_RULES
from api.conversion.dispatch import convert
from api.conversion.objects import HUB, SPOKE
from api.conversion.pod_template import FRONTEND_SIDECAR
from api.conversion.render_inputs import ComponentInputs, render_inputs
from api.conversion.rules import convert_fields
from api.convert import dump, load
from api.kube import Json, copy_json
from api.v1alpha1 import DynamoComponentDeploymentSpec

__all__ = ["with_component_inputs", "with_frontend_container"]


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


def with_frontend_container(dcd: Json, container: Json) -> Json:
    """`dcd` (one `with_component_inputs` gave, whose inputs have a frontendSidecar object)
    with its `sidecar-frontend` container replaced by `container` (the component's own, whole)
    and `frontendSidecar` naming it; a new object (sharing parts with `dcd`). `dcd` itself,
    unchanged, where the object does not stand for `container` (its image, args, env or
    Secret differ), where the pod template has no `sidecar-frontend` container, or where the
    inputs read back would differ."""
    spec = dcd.get("spec") or {}
    template = spec.get("podTemplate")
    name = container.get("name")
    if spec.get("frontendSidecar") != FRONTEND_SIDECAR or not isinstance(name, str) \
            or not isinstance(template, dict) or not isinstance(template.get("spec"), dict):
        return dcd
    containers = template["spec"].get("containers")
    if not isinstance(containers, list):
        return dcd
    # The object's container is the last (`pod_template.pod_to_hub` appends it).
    index = next((i for i in reversed(range(len(containers)))
                  if isinstance(containers[i], dict)
                  and containers[i].get("name") == FRONTEND_SIDECAR), None)
    others = {c.get("name") for c in containers if isinstance(c, dict)} - {FRONTEND_SIDECAR}
    if index is None or name in others:
        return dcd
    given = [*containers[:index], copy_json(container), *containers[index + 1:]]
    out = {**dcd, "spec": {**spec, "frontendSidecar": name,
                           "podTemplate": {**template,
                                           "spec": {**template["spec"], "containers": given}}}}
    if render_inputs(out) != render_inputs(dcd):
        return dcd
    return out
