"""The GPUs a pod reaches through Dynamic Resource Allocation (`resource.k8s.io`).

A pod's `spec.resourceClaims` each name a ResourceClaimTemplate (a claim is made for every
pod: its devices count once per pod) or an existing ResourceClaim (shared by every pod that
names it: its devices count once in all). The scheduler allocates every claim a pod names,
whichever containers use it, so each pod-level claim is counted once for its pod however many
of its containers mount it.

A claim spec's `devices.requests[]` ask devices of a DeviceClass:

- `exactly`: `count` devices (default 1) with allocationMode ExactCount (the default); with
  allocationMode All every matching device of the node the pod lands on, counted as the most
  devices of that class one node offers when the operator knows it (`ClaimContext.all_devices`),
  else as one;
- `firstAvailable`: alternatives tried in order; the smallest GPU ask among them is counted
  (the scheduler may settle for it, so no more is ever claimed to be missing);
- the flat form of `resource.k8s.io/v1beta1` (`deviceClassName` and `count` on the request) is
  read the same way.

Only requests of a GPU device class count (`ClaimContext.is_gpu`): one named by the graph
(`experimental.gpuMemoryService.deviceClassName`), one whose name or whose driver
(`device.driver == "..."` in its CEL selectors) has `gpu` as its first DNS label
(`gpu.nvidia.com`, `gpu.amd.com`, `gpu.intel.com`), or one declaring a `*/gpu` extended
resource name. A MIG class (`mig.nvidia.com`) is not a GPU.

Counts are by pool (`Pools`): the key of a DRA pool is its device class name, which never holds
a `/` (an extended resource's name, `nvidia.com/gpu`, always does).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

Json = dict[str, Any]
#: GPUs by pool: an extended resource name (`nvidia.com/gpu`) or a DRA device class name.
Pools = dict[str, int]

__all__ = [
    "DEFAULT_DEVICE_CLASS",
    "ClaimContext",
    "PodClaims",
    "Pools",
    "add_pools",
    "claim_gpus",
    "class_driver",
    "gpu_class",
    "is_device_class",
    "pod_claim_gpus",
]

#: The DeviceClass NVIDIA's DRA driver installs; GMS asks it unless the graph names another.
DEFAULT_DEVICE_CLASS = "gpu.nvidia.com"
_DRIVER_TERM = re.compile(r"""^\(*\s*device\.driver\s*==\s*["']([^"']+)["']\s*\)*$""")


def is_device_class(pool: str) -> bool:
    """Whether a pool key names a DRA device class (else an extended resource)."""
    return "/" not in pool


def add_pools(into: Pools, more: Mapping[str, int], times: int = 1) -> Pools:
    """`into` plus `times` each of `more` (in place; returned for chaining)."""
    for pool, count in more.items():
        if count and times:
            into[pool] = into.get(pool, 0) + count * times
    return into


def class_driver(device_class: Json) -> str | None:
    """The driver a DeviceClass's selectors pin (`device.driver == "<name>"` as one term of a
    conjunction), or None."""
    for selector in (device_class.get("spec") or {}).get("selectors") or ():
        expression = str(((selector or {}).get("cel") or {}).get("expression") or "")
        if "||" in expression:
            continue
        for term in expression.split("&&"):
            match = _DRIVER_TERM.match(term.strip())
            if match:
                return match[1]
    return None


def _gpu_name(name: str) -> bool:
    return name.lower().split(".", 1)[0] == "gpu"


def gpu_class(name: str, device_class: Json | None = None,
              named: Collection[str] = ()) -> bool:
    """Whether the DeviceClass `name` (its object when known) hands out GPUs."""
    if name in named or _gpu_name(name):
        return True
    if device_class is None:
        return False
    driver = class_driver(device_class)
    extended = str((device_class.get("spec") or {}).get("extendedResourceName") or "")
    return (driver is not None and _gpu_name(driver)) or extended.endswith("/gpu")


def _gpu_by_name(name: str) -> bool:
    return gpu_class(name)


def _one(_: str) -> int:
    return 1


@dataclass(frozen=True)
class ClaimContext:
    """What counting a pod's claims needs from its namespace and cluster: the specs
    (`spec.spec` of a template, `spec` of a claim) by name, which classes are GPUs, and how
    many devices allocationMode All takes."""

    templates: Mapping[str, Json] = field(default_factory=dict)
    claims: Mapping[str, Json] = field(default_factory=dict)
    is_gpu: Callable[[str], bool] = _gpu_by_name
    all_devices: Callable[[str], int] = _one


def claim_gpus(spec: Json, context: ClaimContext) -> Pools:
    """The GPUs a ResourceClaimSpec asks, by device class."""
    out: Pools = {}
    for request in _dicts((spec.get("devices") or {}).get("requests")):
        if isinstance(request.get("exactly"), dict):
            asks = [request["exactly"]]
        elif request.get("firstAvailable"):
            asks = list(_dicts(request["firstAvailable"]))
        else:
            asks = [request]  # v1beta1: the request itself names the class
        counted = [(str(a.get("deviceClassName") or ""), _count(a, context)) for a in asks]
        gpus = [(klass, n) for klass, n in counted if klass and context.is_gpu(klass)]
        if gpus:
            klass, n = min(gpus, key=lambda item: item[1])
            add_pools(out, {klass: n})
    return out


def _count(ask: Json, context: ClaimContext) -> int:
    if ask.get("allocationMode") == "All":
        return max(context.all_devices(str(ask.get("deviceClassName") or "")), 1)
    count = ask.get("count")
    return count if isinstance(count, int) and count > 0 else 1


@dataclass(frozen=True)
class PodClaims:
    """A pod's GPUs through claims: those made for it from templates, and those of the named
    claims it shares with other pods (by claim name)."""

    own: Pools
    shared: Mapping[str, Pools]


def pod_claim_gpus(pod_spec: Json, context: ClaimContext) -> PodClaims:
    """The GPUs of a pod spec's `resourceClaims`; a template or claim not known counts none."""
    own: Pools = {}
    shared: dict[str, Pools] = {}
    for pod_claim in _dicts(pod_spec.get("resourceClaims")):
        template = pod_claim.get("resourceClaimTemplateName")
        claim = pod_claim.get("resourceClaimName")
        if template:
            spec = context.templates.get(str(template))
            if spec is not None:
                add_pools(own, claim_gpus(spec, context))
        elif claim:
            spec = context.claims.get(str(claim))
            gpus = claim_gpus(spec, context) if spec is not None else {}
            if gpus:
                shared[str(claim)] = gpus
    return PodClaims(own, shared)


def _dicts(items: object) -> Iterable[Json]:
    return [i for i in items if isinstance(i, dict)] if isinstance(items, list) else []
