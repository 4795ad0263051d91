"""The component spec: one service of a graph, or the spec of a DynamoComponentDeployment.

`DynamoComponentDeploymentSharedSpec` is the value type of `DynamoGraphDeployment.spec.services`;
`DynamoComponentDeploymentSpec` adds `backendFramework` for a standalone component.
"""

from __future__ import annotations

from attrs import define, field

from api.kube import (
    ConfigMapKeyRef,
    Container,
    EnvVar,
    FreeForm,
    HPABehavior,
    Json,
    MetricSpec,
    Probe,
    Quantity,
    ResourceClaim,
)
from api.markers import doc
from api.v1alpha1.gpu_memory import FailoverSpec, GPUMemoryServiceSpec
from api.v1beta1.common import TopologyConstraint
from api.v1beta1.experimental import ComponentCheckpointConfig

BACKEND_FRAMEWORKS = ("sglang", "vllm", "trtllm")
# Types the operator knows; "main", "default", no type and any other string get the base
# defaults (componentType is a free string in the API).
COMPONENT_TYPES = ("frontend", "worker", "prefill", "decode", "planner", "epp", "main", "default")
SUB_COMPONENT_TYPES = ("prefill", "decode")


@define(kw_only=True)
class Autoscaling:
    """Deprecated and ignored. Scale a service through a DynamoGraphDeploymentScalingAdapter
    (driven by HPA, KEDA or the Planner) instead; this field will go away in a later version."""

    enabled: bool | None = field(default=None, metadata=doc("Deprecated; ignored."))
    min_replicas: int | None = field(default=None, metadata=doc("Deprecated; ignored."))
    max_replicas: int | None = field(default=None, metadata=doc("Deprecated; ignored."))
    behavior: HPABehavior | None = field(default=None, metadata=doc("Deprecated; ignored."))
    metrics: list[MetricSpec] | None = field(default=None, metadata=doc("Deprecated; ignored."))


@define(kw_only=True)
class ResourceItem:
    """Amounts of CPU, memory, GPUs and custom resources, used as requests or as limits."""

    cpu: str | None = field(
        default=None, metadata=doc('CPU amount as a Kubernetes quantity, such as "500m" or "2".')
    )
    memory: str | None = field(
        default=None, metadata=doc('Memory amount as a Kubernetes quantity, such as "16Gi".')
    )
    gpu: str | None = field(
        default=None,
        metadata=doc(
            "Number of GPUs, as a whole number in a string. For a multinode component each "
            "node gets this many, so the total is nodeCount times this value."
        ),
    )
    gpu_type: str | None = field(
        default=None,
        metadata=doc(
            'Extended resource name used for the GPUs, for example "gpu.intel.com/xe". '
            'Defaults to "nvidia.com/gpu".'
        ),
    )
    custom: dict[str, str] | None = field(
        default=None,
        metadata=doc("Further resources by resource name, each with a quantity string."),
    )


@define(kw_only=True)
class Resources:
    """Requests and limits of a component: CPU, memory, GPUs and runtime-specific resources."""

    requests: ResourceItem | None = field(
        default=None, metadata=doc("The least the component needs to be scheduled.")
    )
    limits: ResourceItem | None = field(
        default=None, metadata=doc("The most the component may use.")
    )
    claims: list[ResourceClaim] | None = field(
        default=None, metadata=doc("Dynamic resource allocation claims the containers use.")
    )


@define(kw_only=True)
class VolumeMount:
    """Mounts one of the graph's PVCs (declared in spec.pvcs) into the component."""

    name: str = field(metadata=doc("Name of a PVC declared in the graph's spec.pvcs list."))
    mount_point: str | None = field(
        default=None,
        metadata=doc(
            "Path to mount the volume at. May be left out only for a compilation cache on a "
            "backend that has a default cache path."
        ),
    )
    use_as_compilation_cache: bool | None = field(
        default=None,
        metadata=doc(
            "Use this volume as the backend's compilation cache: the matching environment "
            "variables are set, and a default mount point is used when none is given.",
            default=False,
        ),
    )


@define(kw_only=True)
class IngressTLSSpec:
    """TLS settings of a component's Ingress or VirtualService."""

    secret_name: str | None = field(
        default=None, metadata=doc("Secret holding the TLS certificate and private key.")
    )


@define(kw_only=True)
class IngressSpec:
    """Exposes a component outside the cluster through an Ingress or a service-mesh
    VirtualService."""

    enabled: bool | None = field(
        default=None, metadata=doc("Create the Ingress or VirtualService when true.")
    )
    host: str | None = field(
        default=None, metadata=doc("Base host name that routes external traffic here.")
    )
    use_virtual_service: bool | None = field(
        default=None,
        metadata=doc("Create a service-mesh VirtualService rather than an Ingress."),
    )
    virtual_service_gateway: str | None = field(
        default=None, metadata=doc("Gateway the VirtualService attaches to.")
    )
    host_prefix: str | None = field(
        default=None, metadata=doc("Text put in front of the host name.")
    )
    annotations: dict[str, str] | None = field(
        default=None, metadata=doc("Annotations for the generated Ingress or VirtualService.")
    )
    labels: dict[str, str] | None = field(
        default=None, metadata=doc("Labels for the generated Ingress or VirtualService.")
    )
    tls: IngressTLSSpec | None = field(
        default=None, metadata=doc("TLS configuration of the Ingress or VirtualService.")
    )
    host_suffix: str | None = field(
        default=None, metadata=doc("Domain appended after the host name.")
    )
    ingress_controller_class_name: str | None = field(
        default=None, metadata=doc('Ingress class to use, for example "nginx".')
    )


@define(kw_only=True)
class ModelReference:
    """Names the model a component serves, for endpoint discovery by DynamoModel."""

    name: str = field(metadata=doc('Base model identifier, for example "llama-3-70b-instruct-v1".'))
    revision: str | None = field(default=None, metadata=doc("Model revision or version."))


@define(kw_only=True)
class SharedMemorySpec:
    """The tmpfs mounted at /dev/shm (8Gi unless configured)."""

    disabled: bool | None = field(
        default=None, metadata=doc("Do not mount a shared-memory volume.")
    )
    size: Quantity | None = field(
        default=None, metadata=doc("Size limit of the shared-memory volume.")
    )


@define(kw_only=True)
class ExtraPodMetadata:
    """Extra labels and annotations for the component's pods."""

    annotations: dict[str, str] | None = field(
        default=None, metadata=doc("Annotations added to every pod.")
    )
    labels: dict[str, str] | None = field(default=None, metadata=doc("Labels added to every pod."))


@define(kw_only=True)
class ExtraPodSpec:
    """A Kubernetes PodSpec merged over the generated one, plus `mainContainer`, a Container
    merged over the generated main container. Every PodSpec field is accepted and kept."""

    main_container: Container | None = field(
        default=None,
        metadata=doc("Container fields merged into the main container (image, args, probes...)."),
    )
    pod_spec: Json = field(
        factory=dict,
        metadata=doc("The PodSpec fields, kept as given.", inline=True),
    )


@define(kw_only=True)
class MultinodeSpec:
    """Runs each replica of the component across several nodes."""

    node_count: int | None = field(
        default=None,
        metadata=doc(
            "Number of nodes per replica; at least 2. The GPUs of a replica are nodeCount "
            "times the GPU limit.",
            minimum=2,
            default=2,
        ),
    )


@define(kw_only=True)
class ScalingAdapter:
    """Whether a DynamoGraphDeploymentScalingAdapter manages this service's replicas."""

    enabled: bool | None = field(
        default=None,
        metadata=doc(
            "When true, a scaling adapter is created and owns the replica count, so autoscalers "
            "can use its scale subresource; the service's replicas must then be changed through "
            "the adapter. When false, no adapter exists and replicas are edited directly.",
            default=False,
        ),
    )


@define(kw_only=True)
class EPPConfig:
    """Configuration of an Endpoint Picker Plugin (EPP) component, which picks endpoints with
    KV-cache awareness. Exactly one of configMapRef and config must be given."""

    config_map_ref: ConfigMapKeyRef | None = field(
        default=None,
        metadata=doc("Key of a ConfigMap holding an EndpointPickerConfig in YAML."),
    )
    config: FreeForm | None = field(
        default=None,
        metadata=doc(
            "An EndpointPickerConfig given inline; the operator stores it in a ConfigMap for "
            "the EPP."
        ),
    )


@define(kw_only=True)
class FrontendSidecarSpec:
    """A frontend container added next to the main container, given the operator's frontend
    defaults (command, probes, ports, Dynamo env vars)."""

    image: str = field(metadata=doc("Container image of the frontend sidecar."))
    args: list[str] | None = field(
        default=None,
        metadata=doc('Arguments replacing the default ["-m", "dynamo.frontend"].'),
    )
    env_from_secret: str | None = field(
        default=None, metadata=doc("Secret whose keys become environment variables.")
    )
    envs: list[EnvVar] | None = field(
        default=None, metadata=doc("Environment variables merged over the generated ones.")
    )


@define(kw_only=True)
class DynamoComponentDeploymentSharedSpec:
    """Desired state of one component (service) of a Dynamo graph."""

    annotations: dict[str, str] | None = field(
        default=None,
        metadata=doc("Annotations for the Kubernetes objects made for this component."),
    )
    labels: dict[str, str] | None = field(
        default=None, metadata=doc("Labels for the Kubernetes objects made for this component.")
    )
    service_name: str | None = field(default=None, metadata=doc("Name of the component."))
    component_type: str | None = field(
        default=None,
        metadata=doc("Role of the component: frontend, worker, prefill, decode, planner or epp."),
    )
    sub_component_type: str | None = field(
        default=None, metadata=doc("Sub-role of a worker: prefill or decode.")
    )
    dynamo_namespace: str | None = field(
        default=None,
        metadata=doc(
            "Deprecated: the Dynamo namespace is computed from the Kubernetes namespace and "
            "the graph name; a value here is kept but not needed.",
            deprecated=True,
        ),
    )
    global_dynamo_namespace: bool | None = field(
        default=None, metadata=doc("Place the component in the global Dynamo namespace.")
    )
    resources: Resources | None = field(
        default=None,
        metadata=doc("CPU, memory, GPU and custom resources requested and allowed."),
    )
    autoscaling: Autoscaling | None = field(
        default=None,
        metadata=doc(
            "Deprecated and ignored: use a DynamoGraphDeploymentScalingAdapter with HPA, KEDA "
            "or the Planner. Will be removed in a future API version.",
            deprecated=True,
        ),
    )
    envs: list[EnvVar] | None = field(
        default=None, metadata=doc("Extra environment variables of the component's containers.")
    )
    env_from_secret: str | None = field(
        default=None,
        metadata=doc("Secret whose keys become environment variables of the containers."),
    )
    volume_mounts: list[VolumeMount] | None = field(
        default=None, metadata=doc("PVCs from the graph's spec.pvcs to mount.")
    )
    ingress: IngressSpec | None = field(
        default=None,
        metadata=doc("Exposes the component outside the cluster or through a service mesh."),
    )
    model_ref: ModelReference | None = field(
        default=None,
        metadata=doc(
            "The model this component serves; a headless Service is made so that its "
            "endpoints can be discovered."
        ),
    )
    shared_memory: SharedMemorySpec | None = field(
        default=None, metadata=doc("The /dev/shm tmpfs: on or off, and its size.")
    )
    extra_pod_metadata: ExtraPodMetadata | None = field(
        default=None, metadata=doc("Labels and annotations added to the pods.")
    )
    extra_pod_spec: ExtraPodSpec | None = field(
        default=None,
        metadata=doc(
            "A Kubernetes PodSpec merged over the generated pod spec, with mainContainer to "
            "override fields of the main container."
        ),
    )
    liveness_probe: Probe | None = field(
        default=None, metadata=doc("Probe that restarts the container when it fails.")
    )
    readiness_probe: Probe | None = field(
        default=None, metadata=doc("Probe that tells when the container can take traffic.")
    )
    replicas: int | None = field(
        default=None,
        metadata=doc(
            "Desired number of pods (of replicas, for a multinode component). While the "
            "scaling adapter is enabled it owns this value; change it through the adapter.",
            minimum=0,
        ),
    )
    multinode: MultinodeSpec | None = field(
        default=None, metadata=doc("Spreads each replica over several nodes.")
    )
    scaling_adapter: ScalingAdapter | None = field(
        default=None,
        metadata=doc(
            "Whether replicas are managed through a DynamoGraphDeploymentScalingAdapter, "
            "whose scale subresource autoscalers can drive."
        ),
    )
    epp_config: EPPConfig | None = field(
        default=None,
        metadata=doc("Endpoint Picker Plugin settings; only for componentType epp."),
    )
    # Fields added after v0.8 (the same shapes as in v1beta1).
    topology_constraint: TopologyConstraint | None = field(
        default=None,
        metadata=doc("Topology placement of the component: the domain to pack its pods in."),
    )
    frontend_sidecar: FrontendSidecarSpec | None = field(
        default=None, metadata=doc("A frontend sidecar container added to the pods.")
    )
    checkpoint: ComponentCheckpointConfig | None = field(
        default=None, metadata=doc("Checkpoint (snapshot) and restore of the component.")
    )
    gpu_memory_service: GPUMemoryServiceSpec | None = field(
        default=None,
        metadata=doc("GPU Memory Service: GPUs shared through a DRA ResourceClaim."),
    )
    failover: FailoverSpec | None = field(
        default=None, metadata=doc("Active-passive GPU failover; needs gpuMemoryService.")
    )


@define(kw_only=True)
class DynamoComponentDeploymentSpec(DynamoComponentDeploymentSharedSpec):
    """Desired state of a DynamoComponentDeployment."""

    backend_framework: str | None = field(
        default=None,
        metadata=doc("Inference backend: sglang, vllm or trtllm.", enum=BACKEND_FRAMEWORKS),
    )
