"""Volumes of a component pod: the graph PVCs it mounts and the shared-memory tmpfs."""

from __future__ import annotations

from typing import Any

from api.quantity import QuantityError, parse_quantity
from api.v1alpha1 import SharedMemorySpec, VolumeMount
from backends import constants
from backends.errors import GenerationError

Json = dict[str, Any]

__all__ = ["cache_mount_point", "pvc_volumes", "shared_memory_volume"]


def cache_mount_point(mount: VolumeMount, backend: str, default: str | None) -> str:
    """Where a volume mount goes: its own mountPoint, or for a compilation cache the
    backend's default path. Errors name the field the user has to fix."""
    if not mount.name:
        raise GenerationError("volumeMount.name is required when volumeMounts is set")
    if mount.mount_point:
        return mount.mount_point
    if not mount.use_as_compilation_cache:
        raise GenerationError(
            "volumeMount.mountPoint is required when useAsCompilationCache is false"
        )
    if default is None:
        raise GenerationError(
            "volumeMount with useAsCompilationCache=true requires an explicit mountPoint "
            f"for backend framework {backend} (no default available)"
        )
    return default


def pvc_volumes(
    mounts: list[VolumeMount], backend: str, default_cache: str | None
) -> tuple[list[Json], list[Json]]:
    """Pod volumes and container mounts for the component's PVC mounts (a PVC's volume has
    the PVC's name)."""
    volumes: dict[str, Json] = {}
    container_mounts = []
    for mount in mounts:
        path = cache_mount_point(mount, backend, default_cache)
        # One PVC may be mounted at several paths; the pod still has one volume for it.
        volumes[mount.name] = {
            "name": mount.name,
            "persistentVolumeClaim": {"claimName": mount.name},
        }
        container_mounts.append({"name": mount.name, "mountPath": path})
    return list(volumes.values()), container_mounts


def shared_memory_volume(spec: SharedMemorySpec | None) -> tuple[Json, Json] | None:
    """The /dev/shm tmpfs volume and its mount (8Gi unless resized), or None when disabled."""
    if spec is not None and spec.disabled:
        return None
    size = spec.size if spec is not None else None
    if size is not None:
        try:
            amount = parse_quantity(size)
        except QuantityError as exc:
            raise GenerationError(f"parse sharedMemory size quantity: {exc}") from None
        if amount == 0:
            size = None
    if size is None:
        size = constants.SHARED_MEMORY_SIZE
    volume = {
        "name": constants.SHARED_MEMORY_VOLUME,
        "emptyDir": {"medium": "Memory", "sizeLimit": str(size)},
    }
    mount = {"name": constants.SHARED_MEMORY_VOLUME, "mountPath": constants.SHARED_MEMORY_PATH}
    return volume, mount
