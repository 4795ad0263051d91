"""The DeviceClass a graph's GPU memory services claim GPUs from, looked up before its
children are written.

A GMS component's ResourceClaimTemplate asks for its GPUs from the DRA DeviceClass
`experimental.gpuMemoryService.deviceClassName` (default `gpu.nvidia.com`). As the original
does while it syncs that template, a class no DeviceClass defines stops the reconcile before
any child is written: the graph reads Ready False, reason
`failed_to_reconcile_the_resources`, in the original's words (`failed to sync GMS
ResourceClaimTemplate for Worker: DeviceClass "fast-gpus" not found: ensure the GPU DRA driver
is installed and the device class is registered`), and ours add what the component needs of it
(`needs 2 GPUs (DRA device class fast-gpus)`). The DeviceClass appearing wakes the graphs whose
GMS name it (an index of the classes they ask).

Where DRA is served and the operator is cluster-wide: the DeviceClasses are read from the
cache `gpu_capacity.watch_gpus` keeps. A namespace-restricted operator does not watch them (its
graphs' pods say a missing class when they are scheduled).
"""

from __future__ import annotations

from collections.abc import Container
from typing import Any

from backends.dra_demand import DEFAULT_DEVICE_CLASS
from backends.gpu_demand import component_replica_gpus, gms_device_classes
from controller.controller import Controller
from controller.errors import TerminalError
from controller.manager import Manager
from controller.reconcile import Request
from reconcilers.graph.status import RECONCILE_FAILED
from reconcilers.machinery.context import OperatorContext
from reconcilers.machinery.resources import DEVICE_CLASSES, GRAPH_DEPLOYMENTS

Json = dict[str, Any]

__all__ = ["check_gms_device_classes", "missing_gms_device_classes", "watch_gms_device_classes"]

GMS_CLASS_INDEX = "gms-device-classes"


def missing_gms_device_classes(graph: Json, defined: Container[str]) -> list[str]:
    """What is said of each GMS component of the graph (as stored, `v1beta1`) whose device
    class is not `defined`, in component order."""
    out = []
    for component in (graph.get("spec") or {}).get("components") or ():
        if not isinstance(component, dict):
            continue
        experimental = component.get("experimental")
        gms = experimental.get("gpuMemoryService") if isinstance(experimental, dict) else None
        if not isinstance(gms, dict):
            continue
        device_class = str(gms.get("deviceClassName") or DEFAULT_DEVICE_CLASS)
        if device_class in defined:
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


async def check_gms_device_classes(ctx: OperatorContext, live: Json) -> None:
    """TerminalError (Ready reason `failed_to_reconcile_the_resources`) when a GMS component
    of the graph claims from a device class no DeviceClass defines."""
    if not ctx.settings.dra_enabled or ctx.namespace is not None:
        return
    asked = gms_device_classes(live)
    if not asked:
        return
    defined = {name for name in asked
               if await ctx.cache.get_or_none(DEVICE_CLASSES, None, name) is not None}
    missing = missing_gms_device_classes(live, defined)
    if missing:
        raise TerminalError("; ".join(missing), reason=RECONCILE_FAILED)


def watch_gms_device_classes(manager: Manager, ctx: OperatorContext,
                             controller: Controller) -> None:
    """A DeviceClass event wakes the graphs whose GMS claim from it (cluster-wide, DRA)."""
    if not ctx.settings.dra_enabled or ctx.namespace is not None:
        return
    graphs = manager.cache.informer(GRAPH_DEPLOYMENTS, indexers={
        GMS_CLASS_INDEX: lambda graph: sorted(gms_device_classes(graph))})

    def naming(device_class: Json) -> list[Request]:
        name = str((device_class.get("metadata") or {}).get("name", ""))
        return [Request(g["metadata"].get("namespace", ""), g["metadata"]["name"])
                for g in graphs.store.by_index(GMS_CLASS_INDEX, name)]

    controller.watch(manager.cache.informer(DEVICE_CLASSES), naming)
