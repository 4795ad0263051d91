"""The simulated NVIDIA DRA driver (`gpu.nvidia.com`): its DeviceClass and ResourceSlices.

As the driver's Helm chart installs the DeviceClass and its kubelet plugin publishes a
ResourceSlice per node (owned by the Node, so it goes with it), this loop keeps one slice per
simulated node with GPUs, and the class, as `dra_devices` builds them; a slice or the class
someone changed or deleted is put back.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from ..storage import Change
from .config import NodeSpec
from .dra_devices import DEVICE_CLASS, device_class, node_slice, slice_name
from .loop import Context, ControlLoop, Key
from .writer import DEVICE_CLASSES, NODES, RESOURCE_SLICES

Json = dict[str, Any]
_CLASS_KEY: Key = ("class",)


class DraDriver(ControlLoop):
    """Publishes the DeviceClass and a ResourceSlice per GPU node."""

    manager = "gpu.nvidia.com"
    component = "gpu.nvidia.com"

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self.specs: dict[str, NodeSpec] = {s.name: s for s in ctx.config.nodes if s.gpus > 0}

    def initial_keys(self) -> Iterable[Key]:
        return [_CLASS_KEY, *(("node", name) for name in self.specs)]

    def keys_for(self, change: Change) -> Iterable[Key]:
        name = change.obj["metadata"]["name"]
        if change.resource == DEVICE_CLASSES and name == DEVICE_CLASS:
            return [_CLASS_KEY]
        if change.resource == NODES and name in self.specs:
            return [("node", name)]
        node = (change.obj.get("spec") or {}).get("nodeName")
        if change.resource == RESOURCE_SLICES and node in self.specs:
            return [("node", str(node))]
        return ()

    def reconcile(self, key: Key) -> float | None:
        if key == _CLASS_KEY:
            self._sync(DEVICE_CLASSES, device_class())
            return None
        spec = self.specs[key[1]]
        node = self.writer.get(NODES, "", spec.name)
        if node is None or node["metadata"].get("deletionTimestamp"):
            return None
        self._sync(RESOURCE_SLICES, node_slice(spec, node["metadata"]["uid"]))
        return None

    def _sync(self, resource: tuple[str, str], want: Json) -> None:
        current = self.writer.get(resource, "", want["metadata"]["name"])
        if current is None:
            self.writer.create(resource, "", want)
            return
        if current["metadata"].get("deletionTimestamp") or current.get("spec") == want["spec"]:
            return
        body = copy.deepcopy(current)
        body["spec"] = want["spec"]
        self.writer.update(resource, body)


__all__ = ["DraDriver", "slice_name"]
