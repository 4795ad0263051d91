"""The v1beta1 component spec: one entry of a graph's `spec.components`, or (with
`backendFramework`) the spec of a DynamoComponentDeployment.

The pod is configured by one `podTemplate` (a PodTemplateSpec whose container `main` gets the
operator's defaults; other containers are the user's sidecars) instead of v1alpha1's separate
resources, envs, probes, extraPodSpec and extraPodMetadata fields.
"""

from __future__ import annotations

from attrs import define, field

from api.kube import Json, Quantity
from api.markers import doc
from api.v1beta1.common import (
    BACKEND_FRAMEWORKS,
    CompilationCacheConfig,
    ComponentRoleSpec,
    EPPConfig,
    ModelReference,
    MultinodeSpec,
    PodTemplate,
    ProviderOverride,
    ScalingAdapter,
    TopologyConstraint,
)
from api.v1beta1.experimental import ExperimentalSpec

COMPONENT_TYPES = ("frontend", "worker", "prefill", "decode", "planner", "epp")
MAIN_CONTAINER = "main"


@define(kw_only=True)
class DynamoComponentDeploymentSharedSpec:
    """Desired state of one component of a Dynamo graph."""

    provider_override: ProviderOverride | None = field(
        default=None,
        metadata=doc("Provider settings of the component's primary Grove unit (graphs only)."),
    )
    name: str | None = field(
        default=None,
        metadata=doc(
            "Stable logical name of the component, unique in the graph case-insensitively; a "
            "standalone DCD gets metadata.name.",
            required=True,
            min_length=1,
        ),
    )
    type: str | None = field(
        default=None,
        metadata=doc(
            "Role of the component: frontend, worker, prefill, decode, planner or epp.",
            enum=COMPONENT_TYPES,
        ),
    )
    runtime_version_override: str | None = field(
        default=None,
        metadata=doc("Dynamo runtime version (MAJOR.MINOR.PATCH) of the runtime image."),
    )
    global_dynamo_namespace: bool | None = field(
        default=None, metadata=doc("Place the component in the global Dynamo namespace.")
    )
    pod_template: PodTemplate | None = field(
        default=None,
        metadata=doc(
            "Pod template; the container named main gets the operator's defaults, every other "
            "container is a user-managed sidecar."
        ),
    )
    replicas: int | None = field(
        default=None,
        metadata=doc(
            "Desired complete component instances; owned by the scaling adapter when set.",
            minimum=0,
        ),
    )
    min_available: int | None = field(
        default=None,
        metadata=doc(
            "Deprecated Grove minimum of gang-scheduled replicas; immutable.",
            minimum=1,
            deprecated=True,
        ),
    )
    multinode: MultinodeSpec | None = field(
        default=None, metadata=doc("Spreads each replica over several nodes.")
    )
    roles: list[ComponentRoleSpec] | None = field(
        default=None, metadata=doc("Explicit leader and worker roles of a multinode component.")
    )
    shared_memory_size: Quantity | None = field(
        default=None,
        metadata=doc('Size of the /dev/shm tmpfs; 8Gi when left out, "0" disables it.'),
    )
    model_ref: ModelReference | None = field(
        default=None, metadata=doc("The model this component serves.")
    )
    scaling_adapter: ScalingAdapter | None = field(
        default=None,
        metadata=doc("Present (even as {}): a scaling adapter owns the replicas."),
    )
    epp_config: EPPConfig | None = field(
        default=None,
        metadata=doc("Deprecated legacy Go EPP configuration; only for type epp.", deprecated=True),
    )
    frontend_sidecar: str | None = field(
        default=None,
        metadata=doc("Name of a podTemplate container to configure as the frontend sidecar."),
    )
    dynamo_sidecar: str | None = field(
        default=None,
        metadata=doc("Name of a restartable init container running the Dynamo runtime."),
    )
    compilation_cache: CompilationCacheConfig | None = field(
        default=None, metadata=doc("PVC-backed compilation cache.")
    )
    topology_constraint: TopologyConstraint | None = field(
        default=None, metadata=doc("Component-level topology placement.")
    )
    experimental: ExperimentalSpec | None = field(
        default=None, metadata=doc("Preview features of the component.")
    )


@define(kw_only=True)
class DynamoComponentDeploymentSpec(DynamoComponentDeploymentSharedSpec):
    """Desired state of a DynamoComponentDeployment."""

    backend_framework: str | None = field(
        default=None,
        metadata=doc("Inference backend: sglang, vllm or trtllm.", enum=BACKEND_FRAMEWORKS),
    )


def main_container(spec: DynamoComponentDeploymentSharedSpec) -> Json | None:
    """The container named `main` of the component's pod template, or None when the template
    has none (the operator then generates it); every other container is a user sidecar."""
    template = spec.pod_template or {}
    pod = template.get("spec")
    containers = pod.get("containers") if isinstance(pod, dict) else None
    if not isinstance(containers, list):
        return None
    return next(
        (c for c in containers if isinstance(c, dict) and c.get("name") == MAIN_CONTAINER), None
    )
