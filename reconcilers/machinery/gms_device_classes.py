"""The DeviceClass a GPU memory service claims GPUs from, looked up before the children that
claim from it are written: a graph's GMS components, and a DCD of its own with GMS.

A GMS component's ResourceClaimTemplate asks for its GPUs from the DRA DeviceClass
`experimental.gpuMemoryService.deviceClassName` (default `gpu.nvidia.com`). As the original
does while it syncs that template (its graph and DCD controllers), a class no DeviceClass
defines stops the reconcile before any child is written: a graph reads Ready False, reason
`failed_to_reconcile_the_resources`, a DCD Available False, in the original's words
(`failed to sync GMS ResourceClaimTemplate for Worker: DeviceClass "fast-gpus" not found:
ensure the GPU DRA driver is installed and the device class is registered`), and ours add what
the component needs of it (`needs 2 GPUs (DRA device class fast-gpus)`). The DeviceClass
appearing wakes the objects whose GMS name it (an index of the classes they ask).

Where DRA is served and the operator is cluster-wide: the DeviceClasses are read from the
cache (the informer `watch_gms_device_classes` registers). A namespace-restricted operator
does not watch them (the pods say a missing class when they are scheduled).
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable
from typing import Any

from backends.dra_demand import DEFAULT_DEVICE_CLASS
from backends.gpu_demand import component_replica_gpus
from controller.controller import Controller
from controller.errors import TerminalError
from controller.manager import Manager
from controller.reconcile import Request
from controller.resource import Resource
from reconcilers.machinery.context import OperatorContext
from reconcilers.machinery.resources import DEVICE_CLASSES

Json = dict[str, Any]

__all__ = ["check_gms_device_classes", "gms_classes", "missing_gms_device_classes",
           "watch_gms_device_classes"]

GMS_CLASS_INDEX = "gms-device-classes"

#: The components (`v1beta1` JSON, each with its `name`) of a cached object.
Components = Callable[[Json], list[Json]]


def gms_classes(components: Iterable[Json]) -> list[str]:
    """The device classes the components' GPU memory services claim from, sorted."""
    return sorted({c for c in (_gms_class(component) for component in components) if c})


def missing_gms_device_classes(components: Iterable[Json], defined: Container[str]
                               ) -> list[str]:
    """What is said of each GMS component (`v1beta1` JSON) whose device class is not
    `defined`, in the order given."""
    out = []
    for component in components:
        device_class = _gms_class(component)
        if device_class is None or device_class in defined:
            continue
        name = str(component.get("name", ""))
        said = (f"failed to sync GMS ResourceClaimTemplate for {name}: DeviceClass "
                f'"{device_class}" not found: ensure the GPU DRA driver is installed and the '
                "device class is registered")
        replicas = component.get("replicas", 1)
        replicas = replicas if isinstance(replicas, int) and replicas > 0 else 0
        needed = component_replica_gpus(component).pools().get(device_class, 0) * replicas
        if needed:
            said += f" ({name} needs {needed} GPUs (DRA device class {device_class}))"
        out.append(said)
    return out


async def check_gms_device_classes(ctx: OperatorContext, components: list[Json],
                                   reason: str) -> None:
    """TerminalError (of `reason`) when a GMS component claims from a device class no
    DeviceClass defines."""
    if not _watched(ctx):
        return
    asked = gms_classes(components)
    defined = {name for name in asked
               if await ctx.cache.get_or_none(DEVICE_CLASSES, None, name) is not None}
    missing = missing_gms_device_classes(components, defined)
    if missing:
        raise TerminalError("; ".join(missing), reason=reason)


def watch_gms_device_classes(manager: Manager, ctx: OperatorContext, controller: Controller,
                             resource: Resource, components: Components) -> None:
    """A DeviceClass event wakes the objects of `resource` whose GMS claim from it."""
    if not _watched(ctx):
        return
    objects = manager.cache.informer(resource, indexers={
        GMS_CLASS_INDEX: lambda obj: gms_classes(components(obj))})

    def naming(device_class: Json) -> list[Request]:
        name = str((device_class.get("metadata") or {}).get("name", ""))
        return [Request(o["metadata"].get("namespace", ""), o["metadata"]["name"])
                for o in objects.store.by_index(GMS_CLASS_INDEX, name)]

    controller.watch(manager.cache.informer(DEVICE_CLASSES), naming)


def _watched(ctx: OperatorContext) -> bool:
    return ctx.settings.dra_enabled and ctx.namespace is None


def _gms_class(component: Json) -> str | None:
    experimental = component.get("experimental")
    gms = experimental.get("gpuMemoryService") if isinstance(experimental, dict) else None
    if not isinstance(gms, dict):
        return None
    return str(gms.get("deviceClassName") or DEFAULT_DEVICE_CLASS)
