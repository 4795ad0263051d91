"""`roles[].podTemplate` (`v1beta1`): a multinode component's leader and worker pods from
templates of their own.

Role templates are complete inputs, not patches (the component then has no `podTemplate`):
each role's pods are built from its own template, with what the component states besides
(the graph's env under the role's own, the compilation cache, the graph's pod annotations).
The manifest owns the role's launch command: the backend's generated leader and worker
command lines are not applied, while the rest of what the backend does stays (probes, the
TRT-LLM worker's sshd readiness and the MPI key mount). Every role pod is told its place
with the portable topology variables `DYNAMO_RANK` and `DYNAMO_LEADER_ADDRESS`
(`backends.portable_topology`), whatever the graph's origin version: role templates are a
`v1beta1` input no graph of an older operator has, so no running pod changes. The KV-transfer
policy's topology volume and mount, which the operator adds to the component's own group, are
kept on every role's pods.

The original injects the two variables into every multinode component created by operator
1.6.0 or later; this operator does so for graphs created by 0.2.0 or later
(`backends.portable_topology.PORTABLE_TOPOLOGY_ENV`), and for role templates always.
"""

from __future__ import annotations

from typing import Any

from api.conversion.render_inputs import ComponentInputs, PodInputs, template_pod_inputs
from api.v1alpha1 import ExtraPodMetadata
from api.v1beta1 import DynamoComponentDeploymentSharedSpec
from backends.component_spec import ComponentSpec
from backends.kv_transfer_policy import with_policy_volume
from backends.merge import merge_env
from backends.multinode import Role

Json = dict[str, Any]

__all__ = [
    "authored",
    "role_inputs",
    "role_template",
    "uses_role_templates",
    "with_role_template",
]


def role_template(component: DynamoComponentDeploymentSharedSpec, kind: str) -> Json | None:
    """The `podTemplate` of the component's role `kind` (leader or worker), or None."""
    for role in component.roles or []:
        if role.name == kind and role.pod_template is not None:
            return role.pod_template
    return None


def uses_role_templates(component: DynamoComponentDeploymentSharedSpec) -> bool:
    """Some role of the component has a podTemplate of its own."""
    return any(role.pod_template is not None for role in component.roles or [])


def authored(spec: ComponentSpec, role: Role) -> bool:
    """Pods of `role` come from a role template (the manifest owns their command)."""
    return role.multinode and role_template(spec.spec, role.kind) is not None


def with_role_template(spec: ComponentSpec, role: Role) -> ComponentSpec:
    """The component as `role`'s pods see it: its inputs with the role's template as the
    pod group (`role_inputs`); itself when the role has no template."""
    if not authored(spec, role):
        return spec
    return ComponentSpec(spec.spec, role_inputs(spec.spec, spec.inputs, role.kind))


def role_inputs(component: DynamoComponentDeploymentSharedSpec, inputs: ComponentInputs,
                kind: str) -> ComponentInputs:
    """`inputs` with role `kind`'s template as the pod group, over what the component's own
    group holds without a template (the graph's env, the compilation cache mount, the
    graph's pod annotations); `inputs` when the role has no template."""
    template = role_template(component, kind)
    if template is None:
        return inputs
    return inputs.replace(pod=_over(inputs.pod, template_pod_inputs(template)))


def _over(component: PodInputs, role: PodInputs) -> PodInputs:
    envs = component.envs
    if component.envs or role.envs:
        envs = merge_env(component.envs or [], role.envs or [])
    mounts = [*(component.volume_mounts or []), *(role.volume_mounts or [])] or None
    pod = role.replace(envs=envs, volume_mounts=mounts,
                       extra_pod_metadata=_metadata(component.extra_pod_metadata,
                                                    role.extra_pod_metadata),
                       resources=role.resources or component.resources)
    return with_policy_volume(component, pod)


def _metadata(component: ExtraPodMetadata | None,
              role: ExtraPodMetadata | None) -> ExtraPodMetadata | None:
    if component is None or role is None:
        return role or component
    labels = {**(component.labels or {}), **(role.labels or {})}
    annotations = {**(component.annotations or {}), **(role.annotations or {})}
    return ExtraPodMetadata(labels=labels or None, annotations=annotations or None)
