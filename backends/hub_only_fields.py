"""The `v1beta1`-only fields of a graph's component that its child DCD carries.

A child DCD carries no `v1beta1`-only field of its component by default (its `v1alpha1`
form, hence its spec hash, stays the one an older operator built). The fields that change
how the DCD's own builders render its pods are the exception, and only when the component
sets them, so a graph that does not use them rewrites nothing: `runtimeVersionOverride`
(`backends.runtime_features`), `dynamoSidecar` (`backends.dynamo_sidecar`), and `roles` when
a role has a podTemplate of its own (`backends.role_templates`; roles without one render
nothing different, and stay out).
"""

from __future__ import annotations

from typing import Any

from api.convert import dump
from api.v1beta1 import DynamoComponentDeploymentSharedSpec
from backends.role_templates import uses_role_templates

Json = dict[str, Any]

__all__ = ["CARRIED", "with_hub_only_fields"]

#: The component fields (JSON names) a child DCD carries when they are set.
CARRIED = ("runtimeVersionOverride", "dynamoSidecar")


def with_hub_only_fields(dcd: Json, component: DynamoComponentDeploymentSharedSpec) -> Json:
    """`dcd` (the child, in the hub's version; changed in place and returned) with the
    component's carried fields that are set."""
    given = dump(component)
    carried = {k: given[k] for k in CARRIED if given.get(k) is not None}
    if uses_role_templates(component):
        carried["roles"] = given["roles"]
    if carried:
        dcd["spec"] = {**dcd.get("spec", {}), **carried}
    return dcd
