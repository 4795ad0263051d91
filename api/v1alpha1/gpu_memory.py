"""GPU memory service and failover as `v1alpha1` services state them: at the top of the
service, switched on by `enabled`, modes spelled `intraPod` and `interPod`.

`v1beta1` groups them under `experimental` and drops `enabled` (present means on) and spells
the modes `IntraPod` and `InterPod`; `api.conversion.gpu_memory` converts between the two.
"""

from __future__ import annotations

from attrs import define, field

from api.markers import doc
from api.v1beta1.experimental import GMSClientPodSpec

__all__ = ["GMS_MODES", "FailoverSpec", "GPUMemoryServiceSpec"]

GMS_MODES = ("intraPod", "interPod")


@define(kw_only=True)
class GPUMemoryServiceSpec:
    """GPU Memory Service: the service's GPUs come from a DRA ResourceClaim its GMS clients
    share, beside a GMS server holding the weights."""

    enabled: bool = field(metadata=doc(
        "Activates GMS: the main container's GPU resources are replaced by a DRA "
        "ResourceClaim shared with the GMS server."))
    mode: str | None = field(
        default=None,
        metadata=doc("intraPod or interPod.", enum=GMS_MODES, default="intraPod"),
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
    """Active-passive GPU failover: the main container runs as an active and a shadow engine
    sharing the GMS weights."""

    enabled: bool = field(metadata=doc(
        "Activates failover: the main container is cloned into an active and a standby "
        "engine sharing GPUs through DRA."))
    mode: str | None = field(
        default=None,
        metadata=doc("Must match gpuMemoryService.mode.", enum=GMS_MODES, default="intraPod"),
    )
    num_shadows: int | None = field(
        default=None, metadata=doc("Shadow engines per rank; 1.", minimum=1, default=1)
    )
