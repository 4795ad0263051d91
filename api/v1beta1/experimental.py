"""The component-level preview features of v1beta1 (`experimental`): GPU memory service,
failover, checkpoint/restore and Grove rendering options.

v1alpha1 services carry the first three at their top level with the same shapes, so
`api.v1alpha1` reuses these classes. Pod templates in here are kept schemaless (free-form),
as the reference does."""

from __future__ import annotations

from attrs import define, field

from api.kube import FreeForm
from api.markers import doc
from api.v1beta1.common import BACKEND_FRAMEWORKS

GMS_MODES = ("IntraPod", "InterPod")
CHECKPOINT_MODES = ("Auto", "Manual")
CHECKPOINT_STARTUP_POLICIES = ("Immediate", "WaitForCheckpoint")
CHECKPOINT_DELETION_POLICIES = ("Delete", "Retain")


@define(kw_only=True)
class GMSClientPodSpec:
    """An extra GMS client pod (inter-pod GMS; reserved)."""

    name: str = field(metadata=doc("Name of the client pod.", min_length=1))
    pod_template: FreeForm = field(metadata=doc("Pod template of the client pod."))


@define(kw_only=True)
class GPUMemoryServiceSpec:
    """GPU Memory Service: GPUs reached through a DRA ResourceClaim shared by GMS clients."""

    mode: str | None = field(
        default=None, metadata=doc("IntraPod or InterPod.", enum=GMS_MODES, default="IntraPod")
    )
    device_class_name: str | None = field(
        default=None,
        metadata=doc("DRA DeviceClass to request GPUs from.", default="gpu.nvidia.com"),
    )
    extra_client_containers: list[str] | None = field(
        default=None, metadata=doc("Further containers wired as GMS clients.")
    )
    extra_client_pods: list[GMSClientPodSpec] | None = field(
        default=None, metadata=doc("Extra GMS client pods (inter-pod; reserved).")
    )


@define(kw_only=True)
class FailoverSpec:
    """Active-passive GPU failover: the main container runs as an active and a shadow engine."""

    mode: str | None = field(
        default=None,
        metadata=doc("Must match gpuMemoryService.mode.", enum=GMS_MODES, default="IntraPod"),
    )
    num_shadows: int | None = field(
        default=None, metadata=doc("Shadow engines per rank; 1.", minimum=1, default=1)
    )


@define(kw_only=True)
class DynamoCheckpointIdentity:
    """Deprecated legacy checkpoint identity; ignored by the operator."""

    model: str = field(metadata=doc("Model identifier.", min_length=1, deprecated=True))
    backend_framework: str = field(
        metadata=doc("vllm, sglang or trtllm.", enum=BACKEND_FRAMEWORKS, deprecated=True)
    )
    dynamo_version: str | None = field(
        default=None, metadata=doc("Dynamo platform version.", deprecated=True)
    )
    tensor_parallel_size: int | None = field(
        default=None, metadata=doc("Tensor parallel size.", minimum=1, deprecated=True)
    )
    pipeline_parallel_size: int | None = field(
        default=None, metadata=doc("Pipeline parallel size.", minimum=1, deprecated=True)
    )
    dtype: str | None = field(default=None, metadata=doc("Data type.", deprecated=True))
    max_model_len: int | None = field(
        default=None, metadata=doc("Maximum sequence length.", minimum=1, deprecated=True)
    )
    extra_parameters: dict[str, str] | None = field(
        default=None, metadata=doc("Further parameters of the hash.", deprecated=True)
    )


@define(kw_only=True)
class ComponentCheckpointJobConfig:
    """Customizes the SnapshotJob capture pod."""

    gms_client_containers: list[str] | None = field(
        default=None, metadata=doc("Capture pod containers wired as GMS clients.")
    )
    pod_template: FreeForm | None = field(
        default=None, metadata=doc("Pod template merged into the capture pod.")
    )


@define(kw_only=True)
class ComponentCheckpointConfig:
    """Checkpoint (snapshot) and restore of a component's container."""

    enabled: bool = field(metadata=doc("Checkpointing is on for this component."))
    mode: str | None = field(
        default=None,
        metadata=doc("Deprecated: Auto or Manual.", enum=CHECKPOINT_MODES, deprecated=True),
    )
    startup_policy: str | None = field(
        default=None,
        metadata=doc(
            "Immediate or WaitForCheckpoint.",
            enum=CHECKPOINT_STARTUP_POLICIES,
            default="Immediate",
        ),
    )
    deletion_policy: str | None = field(
        default=None,
        metadata=doc("Delete or Retain.", enum=CHECKPOINT_DELETION_POLICIES, default="Delete"),
    )
    checkpoint_ref: str | None = field(
        default=None, metadata=doc("An existing PodSnapshot in the namespace to restore.")
    )
    identity: DynamoCheckpointIdentity | None = field(
        default=None, metadata=doc("Deprecated legacy identity; ignored.", deprecated=True)
    )
    target_container_name: str | None = field(
        default=None, metadata=doc("Container to snapshot and restore.", default="main")
    )
    job: ComponentCheckpointJobConfig | None = field(
        default=None, metadata=doc("Customizes the SnapshotJob capture pod.")
    )


@define(kw_only=True)
class GroveSpec:
    """Grove rendering options."""

    force_scaling_group: bool | None = field(
        default=None,
        metadata=doc("Render a single-node component as a PodCliqueScalingGroup; immutable."),
    )


@define(kw_only=True)
class ExperimentalSpec:
    """Component-level preview features, outside the v1beta1 deprecation policy."""

    gpu_memory_service: GPUMemoryServiceSpec | None = field(
        default=None, metadata=doc("GPU Memory Service settings.", json="gpuMemoryService")
    )
    failover: FailoverSpec | None = field(
        default=None, metadata=doc("Active-passive failover; needs gpuMemoryService.")
    )
    grove: GroveSpec | None = field(default=None, metadata=doc("Grove rendering options."))
    checkpoint: ComponentCheckpointConfig | None = field(
        default=None, metadata=doc("Checkpoint and restore of the component.")
    )
