"""One component as the workload builders take it: its `v1beta1` spec (a graph's component,
or a DCD's spec) and the inputs only `v1alpha1` states of it
(`api.conversion.render_inputs.ComponentInputs`).

The builders read the native fields (replicas, multinode, modelRef, eppConfig,
globalDynamoNamespace) from `spec`, and from `inputs` what renders differently from its
`v1beta1` form: the componentType/subComponentType pair, the component's own labels and
annotations (which go on the workload and its Service, not only on the pods), its ingress,
dynamoNamespace and sharedMemory, and its pod group (`inputs.pod`: envs after the generated
env and mainContainer.env before it, GPUs of `resources` as limits, PVC mounts at the backend's
cache path...).
"""

from __future__ import annotations

from dataclasses import dataclass

from api import v1beta1
from api.conversion.render_inputs import ComponentInputs

__all__ = ["ComponentSpec"]


@dataclass(frozen=True)
class ComponentSpec:
    """A component's `v1beta1` spec and its `v1alpha1`-only inputs."""

    spec: v1beta1.DynamoComponentDeploymentSharedSpec
    inputs: ComponentInputs

    @property
    def component_type(self) -> str | None:
        """`componentType` as `v1alpha1` states it (see `ComponentInputs`)."""
        return self.inputs.component_type

    def main_container(self) -> dict[str, object]:
        """The user's `extraPodSpec.mainContainer` ({} when absent)."""
        extra = self.inputs.pod.extra_pod_spec
        if extra is None or extra.main_container is None:
            return {}
        return extra.main_container
