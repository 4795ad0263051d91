"""The GPUs the cluster has free, by pool, read from the shared cache.

An extended resource (`nvidia.com/gpu`): the allocatable amount of the Ready nodes that take
pods (not cordoned), less what the pods bound to them and not finished request (terminating
ones too: they hold their GPUs until gone), as the scheduler counts them.

A DRA device class: the devices of the ResourceSlices (the newest generation of each pool) that
the class selects, on those nodes or on none in particular, less those allocated to a
ResourceClaim. A class selects a device when each of its CEL selectors does; this reads
conjunctions (`&&`) of `device.driver == "<name>"` and `device.attributes["<domain>"].<name> ==
<literal>`, and a class with any other selector is not counted (its supply is unknown: nothing
is said about it rather than something wrong).

What the cache holds for this is trimmed to the fields read here (`CACHE_TRANSFORMS`); Pods
keep their GPU fields (`backends.gpu_demand.gpu_fields`, through `machinery.pod_problems`) and
are indexed by graph when they have any (`GPU_POD_INDEX`). The nodes' allocatable GPUs and what
the pods on them request are tallied as their events come (`GpuLedger`, an aggregate beside the
store's indexes), so asking what is free reads totals: a thousand pending graphs reconciling
while their pods are being placed would otherwise walk every node and GPU pod each time.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from backends import constants
from backends.dra_demand import Pools, add_pools, is_device_class
from backends.gpu_demand import pod_pools
from controller.informer import DeletedFinalStateUnknown, EventHandler, Transform, compact
from controller.resource import Resource
from controller.store import object_key
from reconcilers.machinery.resources import (
    DEVICE_CLASSES,
    NODES,
    RESOURCE_CLAIMS,
    RESOURCE_SLICES,
)

Json = dict[str, Any]
DeviceId = tuple[str, str, str]

__all__ = [
    "CACHE_TRANSFORMS",
    "GPU_POD_INDEX",
    "ClusterGpus",
    "GpuLedger",
    "PoolSupply",
    "device_selected",
    "finished",
    "gpu_pod_keys",
    "has_gpus",
    "reserved_devices",
]

#: Index of the pods with GPU fields by their graph: `graph/<namespace>/<graph>`.
GPU_POD_INDEX = "dynamo-gpu-pods"
_FINISHED = ("Succeeded", "Failed")


# --- what the cache keeps --------------------------------------------------------------------

def trim_node(node: Json) -> Json:
    """A Node as counted here: its name, whether it is cordoned, its Ready status and its
    allocatable `*/gpu` (no resourceVersion: heartbeats leave it equal, and wake nobody)."""
    status = node.get("status") or {}
    allocatable = {k: v for k, v in (status.get("allocatable") or {}).items()
                   if str(k).endswith("/gpu")}
    ready = [{"type": "Ready", "status": c.get("status")}
             for c in status.get("conditions") or () if c.get("type") == "Ready"]
    return compact({"metadata": {"name": (node.get("metadata") or {}).get("name")},
                    "spec": {"unschedulable": bool((node.get("spec") or {}).get("unschedulable"))},
                    "status": {"allocatable": allocatable, "conditions": ready}})


def trim_slice(resource_slice: Json) -> Json:
    """A ResourceSlice as counted here: its driver, node, pool and devices' names and
    attributes, each attribute's value unwrapped (`{"string": "gpu"}` held as `"gpu"`: the
    wrappers were most of a slice's size)."""
    spec = resource_slice.get("spec") or {}
    pool = spec.get("pool") or {}
    kept: Json = {"driver": spec.get("driver"),
                  "pool": {"name": pool.get("name"), "generation": pool.get("generation", 0)},
                  "devices": [{"name": d.get("name"),
                               "attributes": {k: _value(v) for k, v in
                                              (d.get("attributes") or {}).items()}}
                              for d in spec.get("devices") or () if isinstance(d, dict)]}
    for key in ("nodeName", "allNodes"):
        if spec.get(key):
            kept[key] = spec[key]
    return compact({"metadata": {"name": (resource_slice.get("metadata") or {}).get("name")},
                    "spec": kept})


def trim_claim(claim: Json) -> Json:
    """A ResourceClaim as counted here: its requests, the devices allocated to it and the pods
    it is reserved for (by name)."""
    meta = claim.get("metadata") or {}
    status = claim.get("status") or {}
    allocation = status.get("allocation") or {}
    results = [{k: r.get(k) for k in ("request", "driver", "pool", "device")}
               for r in (allocation.get("devices") or {}).get("results") or ()]
    trimmed: Json = {"metadata": {"name": meta.get("name"), "namespace": meta.get("namespace")},
                     "spec": {"devices": {"requests": ((claim.get("spec") or {}).get(
                         "devices") or {}).get("requests") or []}}}
    if results:
        reserved = [{"resource": "pods", "name": r.get("name")}
                    for r in status.get("reservedFor") or () if r.get("resource") == "pods"]
        trimmed["status"] = {"allocation": {"devices": {"results": results}},
                             "reservedFor": reserved}
    return compact(trimmed)


def reserved_devices(claims: Iterable[Json], pods: Collection[str],
                     is_gpu: Callable[[str], bool]) -> Pools:
    """The GPU devices allocated to the claims reserved for any of `pods` (names), by device
    class: what those pods hold through DRA, placed or about to be (the scheduler allocates
    and reserves a claim in one write, before it binds the pod)."""
    out: Pools = {}
    for claim in claims:
        status = claim.get("status") or {}
        if not any(r.get("name") in pods for r in status.get("reservedFor") or ()):
            continue
        classes = _request_classes(claim)
        for result in ((status.get("allocation") or {}).get("devices") or {}).get(
                "results") or ():
            klass = classes.get(str(result.get("request")))
            if klass and is_gpu(klass):
                add_pools(out, {klass: 1})
    return out


def _request_classes(claim: Json) -> dict[str, str]:
    """Each request's (and firstAvailable subrequest's, `<request>/<sub>`) device class."""
    out = {}
    for request in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or ():
        name = str(request.get("name"))
        exactly = request.get("exactly")
        out[name] = str((exactly if isinstance(exactly, dict) else request).get(
            "deviceClassName") or "")
        for sub in request.get("firstAvailable") or ():
            out[f"{name}/{sub.get('name')}"] = str(sub.get("deviceClassName") or "")
    return out


def trim_device_class(device_class: Json) -> Json:
    """A DeviceClass as counted here: its selectors and extended resource name."""
    spec = device_class.get("spec") or {}
    kept = {k: spec[k] for k in ("selectors", "extendedResourceName") if spec.get(k)}
    return compact({"metadata": {"name": (device_class.get("metadata") or {}).get("name")},
                    "spec": kept})


CACHE_TRANSFORMS: Mapping[Resource, Transform] = {
    NODES: trim_node, RESOURCE_SLICES: trim_slice, RESOURCE_CLAIMS: trim_claim,
    DEVICE_CLASSES: trim_device_class,
}


def finished(pod: Json) -> bool:
    return (pod.get("status") or {}).get("phase") in _FINISHED


def gpu_pod_keys(pod: Json) -> list[str]:
    """Index keys of a pod with GPU fields: its graph's, `graph/<namespace>/<graph>`."""
    spec = pod.get("spec") or {}
    if not spec.get("resourceClaims") and not pod_pools(spec):
        return []
    meta = pod.get("metadata") or {}
    graph = (meta.get("labels") or {}).get(constants.LABEL_GRAPH_NAME)
    return [f"graph/{meta.get('namespace', '')}/{graph}"] if graph else []


def has_gpus(pod: Json) -> bool:
    """Whether a (trimmed) pod asks any GPU or names any claim."""
    spec = pod.get("spec") or {}
    return bool(spec.get("resourceClaims")) or bool(pod_pools(spec))


# --- which devices a class selects -------------------------------------------------------------

_LITERAL = r'"[^"]*"|\'[^\']*\'|-?\d+|true|false'
_DRIVER = re.compile(rf"^device\.driver\s*==\s*({_LITERAL})$")
_ATTRIBUTE = re.compile(
    rf"""^device\.attributes\[\s*("[^"]*"|'[^']*')\s*\]\.(\w+)\s*==\s*({_LITERAL})$""")


def _literal(text: str) -> object:
    if text[0] in "\"'":
        return text[1:-1]
    if text in ("true", "false"):
        return text == "true"
    return int(text)


def _value(attribute: object) -> object:
    """An attribute's value, from the API's wrapper or as `trim_slice` keeps it."""
    if isinstance(attribute, dict):
        for key in ("string", "int", "bool", "version"):
            if key in attribute:
                return attribute[key]
        return None
    return attribute


def _term(term: str, driver: str, device: Json) -> bool | None:
    term = term.strip()
    while term.startswith("(") and term.endswith(")"):
        term = term[1:-1].strip()
    if match := _DRIVER.match(term):
        return driver == _literal(match[1])
    if match := _ATTRIBUTE.match(term):
        domain, name, want = match[1][1:-1], match[2], _literal(match[3])
        attributes = device.get("attributes") or {}
        value = attributes.get(f"{domain}/{name}")
        if value is None and domain == driver:
            value = attributes.get(name)
        return _value(value) == want
    return None


def device_selected(selectors: Iterable[Json], driver: str, device: Json) -> bool | None:
    """Whether every CEL selector selects the device; None when one cannot be read here."""
    for selector in selectors:
        expression = str(((selector or {}).get("cel") or {}).get("expression") or "")
        if not expression or "||" in expression or "!" in expression:
            return None
        for term in expression.split("&&"):
            verdict = _term(term, driver, device)
            if verdict is None:
                return None
            if not verdict:
                return False
    return True


# --- the supply --------------------------------------------------------------------------------

@dataclass(frozen=True)
class PoolSupply:
    """One pool: how much the usable nodes have, how much of it is free, and the most one node
    has (`exists` False: a device class no DeviceClass defines)."""

    allocatable: int
    free: int
    largest: int
    exists: bool = True


class GpuLedger:
    """The usable nodes, and per extended resource what they have, what the bound unfinished
    pods on them request (terminating ones until gone) and so what is free: kept as the Node
    and Pod informers' events come, so that asking costs nothing however many pods run."""

    def __init__(self) -> None:
        self._nodes: dict[str, Pools] = {}  # usable nodes: their allocatable `*/gpu`
        self._used: dict[str, Pools] = {}  # per node, usable or not
        self._pods: dict[str, tuple[str, Pools]] = {}
        self.allocatable: Pools = {}
        self.free: Pools = {}
        self._largest: Pools | None = None

    def usable(self, node: str) -> bool:
        return node in self._nodes

    def supply(self, resource: str) -> PoolSupply:
        if self._largest is None:
            self._largest = {}
            for pools in self._nodes.values():
                for name, count in pools.items():
                    self._largest[name] = max(self._largest.get(name, 0), count)
        return PoolSupply(self.allocatable.get(resource, 0), self.free.get(resource, 0),
                          self._largest.get(resource, 0))

    def node_handler(self) -> EventHandler:
        """Keeps the nodes (add it to the Node informer)."""
        return EventHandler(on_add=self.put_node, on_update=lambda _, new: self.put_node(new),
                            on_delete=lambda n: self._set_node(_key(n), None))

    def pod_handler(self) -> EventHandler:
        """Keeps the pods' requests (add it to the Pod informer)."""
        return EventHandler(on_add=self.put_pod, on_update=lambda _, new: self.put_pod(new),
                            on_delete=lambda p: self._set_pod(_key(p), None))

    def put_node(self, node: Json) -> None:
        allocatable = ((node.get("status") or {}).get("allocatable") or {}).items()
        pools = {k: _whole(v) for k, v in allocatable if str(k).endswith("/gpu")}
        self._set_node(object_key(node), pools if _usable(node) else None)

    def put_pod(self, pod: Json) -> None:
        node = (pod.get("spec") or {}).get("nodeName")
        pools = pod_pools(pod.get("spec") or {}) if node and not finished(pod) else {}
        self._set_pod(object_key(pod), (str(node), pools) if pools else None)

    def _set_node(self, name: str, pools: Pools | None) -> None:
        before = self._nodes.get(name)
        self._count(name, before, -1)
        if pools is None:
            self._nodes.pop(name, None)
        else:
            self._nodes[name] = {k: v for k, v in pools.items() if v}
        self._count(name, self._nodes.get(name), 1)
        if before != self._nodes.get(name):
            self._largest = None

    def _count(self, node: str, pools: Pools | None, sign: int) -> None:
        """Add (or take away) a usable node's allocatable and free amounts to the totals."""
        if pools is None:
            return
        used = self._used.get(node, {})
        add_pools(self.allocatable, pools, sign)
        add_pools(self.free, {k: max(v - used.get(k, 0), 0) for k, v in pools.items()}, sign)

    def _set_pod(self, key: str, placed: tuple[str, Pools] | None) -> None:
        before = self._pods.get(key)
        if before == placed:
            return  # most pod events (status, readiness) change nothing counted here
        if before is not None:
            del self._pods[key]
            self._use(*before, sign=-1)
        if placed is not None:
            self._pods[key] = placed
            self._use(*placed, sign=1)

    def _use(self, node: str, pools: Pools, sign: int) -> None:
        allocatable = self._nodes.get(node)
        used = self._used.setdefault(node, {})
        for name, count in pools.items():
            before = used.get(name, 0)
            after = used[name] = before + sign * count
            if allocatable is not None:
                have = allocatable.get(name, 0)
                self.free[name] = (self.free.get(name, 0) + max(have - after, 0)
                                   - max(have - before, 0))
            if not after:
                del used[name]
        if not used:
            del self._used[node]


def _key(obj: Json | DeletedFinalStateUnknown) -> str:
    return obj.key if isinstance(obj, DeletedFinalStateUnknown) else object_key(obj)


class ClusterGpus:
    """The cluster's GPUs as the cache holds them now, by pool: extended resources from the
    ledger, device classes from the DRA objects, each read when first needed (a graph that
    asks no DRA GPUs never reads the slices), once."""

    def __init__(self, ledger: GpuLedger,
                 slices: Callable[[], Iterable[Json]] = list,
                 claims: Callable[[], Iterable[Json]] = list,
                 classes: Callable[[], Iterable[Json]] = list) -> None:
        self.ledger = ledger
        self._slices, self._claims, self._classes = slices, claims, classes
        self._memo: dict[str, PoolSupply | None] = {}

    @cached_property
    def classes(self) -> dict[str, Json]:
        """The DeviceClasses by name."""
        return {c["metadata"]["name"]: c for c in self._classes()}

    @cached_property
    def claims(self) -> list[Json]:
        """Every ResourceClaim."""
        return list(self._claims())

    @cached_property
    def allocated(self) -> set[DeviceId]:
        """The devices allocated to a claim."""
        return {(str(r.get("driver")), str(r.get("pool")), str(r.get("device")))
                for c in self.claims
                for r in (((c.get("status") or {}).get("allocation") or {}).get(
                    "devices") or {}).get("results") or ()}

    def supply(self, pool: str) -> PoolSupply | None:
        """The supply of a pool; None when it cannot be known."""
        if pool not in self._memo:
            self._memo[pool] = (self._devices(pool) if is_device_class(pool)
                                else self.ledger.supply(pool))
        return self._memo[pool]

    def most_devices(self, device_class: str) -> int:
        """The most devices of the class one node offers (0 when unknown)."""
        supply = self.supply(device_class)
        return supply.largest if supply is not None else 0

    def _devices(self, name: str) -> PoolSupply | None:
        device_class = self.classes.get(name)
        if device_class is None:
            return PoolSupply(0, 0, 0, exists=False)
        selectors = (device_class.get("spec") or {}).get("selectors") or []
        per_node: dict[str, int] = {}
        total = free = 0
        for resource_slice in _newest(self._slices()):
            spec = resource_slice["spec"]
            node = str(spec.get("nodeName") or "")
            if node and not self.ledger.usable(node):
                continue
            driver, pool = str(spec.get("driver")), str((spec.get("pool") or {}).get("name"))
            for device in spec.get("devices") or ():
                selected = device_selected(selectors, driver, device)
                if selected is None:
                    return None
                if not selected:
                    continue
                total += 1
                per_node[node] = per_node.get(node, 0) + 1
                free += (driver, pool, str(device.get("name"))) not in self.allocated
        return PoolSupply(total, free, max(per_node.values(), default=0))


def _usable(node: Json) -> bool:
    if (node.get("spec") or {}).get("unschedulable"):
        return False
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (node.get("status") or {}).get("conditions") or ())


def _newest(slices: Iterable[Json]) -> list[Json]:
    """The slices of each pool's newest generation (older ones are being replaced)."""
    listed = list(slices)
    newest: dict[tuple[str, str], int] = {}
    for s in listed:
        key = _pool_key(s)
        newest[key] = max(newest.get(key, 0), _generation(s))
    return [s for s in listed if _generation(s) == newest[_pool_key(s)]]


def _pool_key(resource_slice: Json) -> tuple[str, str]:
    spec = resource_slice.get("spec") or {}
    return str(spec.get("driver")), str((spec.get("pool") or {}).get("name"))


def _generation(resource_slice: Json) -> int:
    value = ((resource_slice.get("spec") or {}).get("pool") or {}).get("generation")
    return value if isinstance(value, int) else 0


def _whole(value: object) -> int:
    text = str(value).strip()
    return int(text) if text.isdigit() else 0
