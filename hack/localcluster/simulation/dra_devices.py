"""The simulated NVIDIA DRA driver's objects, and allocating devices to claims on one node.

Pure functions over JSON objects, shared by the driver (`dra_driver`) and the scheduler:

* `device_class` and `node_slice`: the DeviceClass `gpu.nvidia.com` and each GPU node's
  ResourceSlice (one device `gpu-<i>` per GPU, with the attributes NVIDIA's driver publishes:
  `type`, `uuid`, `productName`, `brand`, `architecture`, `index`, `minor`,
  `cudaComputeCapability`, `driverVersion`, and the `memory` capacity);
* `selector_matches`: a CEL selector against a device. Only conjunctions (`&&`) of
  `device.driver == "<name>"` and `device.attributes["<domain>"].<name> == <literal>` are
  evaluated; any other expression is taken to match every device (nothing is refused for a
  selector this evaluator cannot read);
* `allocate`: the structured-parameters allocator's answer for one node: devices for every
  request of every claim from the node's slices, none already allocated, or None.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from typing import Any

from .config import NodeSpec

Json = dict[str, Any]
DeviceId = tuple[str, str, str]

DRIVER = "gpu.nvidia.com"
DEVICE_CLASS = "gpu.nvidia.com"
#: Set on claims the scheduler allocated; the resourceclaim controller removes it once it
#: deallocates them (resourceapi.Finalizer).
FINALIZER = "resource.kubernetes.io/delete-protection"

_ARCHITECTURES = {"hopper": ("Hopper", "9.0.0"), "blackwell": ("Blackwell", "10.0.0"),
                  "ampere": ("Ampere", "8.0.0")}


def device_class() -> Json:
    """The DeviceClass the driver's Helm chart installs, selecting its devices."""
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
            "metadata": {"name": DEVICE_CLASS},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}}


def slice_name(node: str) -> str:
    return f"{node}-{DRIVER}"


def node_slice(spec: NodeSpec, node_uid: str) -> Json:
    """The ResourceSlice the driver's kubelet plugin publishes for a node's GPUs."""
    architecture, capability = _ARCHITECTURES.get(spec.gpu_family, ("Hopper", "9.0.0"))
    devices = []
    for i in range(spec.gpus):
        uuid = hashlib.sha256(f"{spec.name}/{i}".encode()).hexdigest()
        devices.append({
            "name": f"gpu-{i}",
            "attributes": {
                "type": {"string": "gpu"},
                "uuid": {"string": f"GPU-{uuid[:8]}-{uuid[8:12]}-{uuid[12:16]}-"
                                   f"{uuid[16:20]}-{uuid[20:32]}"},
                "productName": {"string": spec.gpu_product.replace("-", " ")},
                "brand": {"string": "Nvidia"},
                "architecture": {"string": architecture},
                "index": {"int": i},
                "minor": {"int": i},
                "cudaComputeCapability": {"version": capability},
                "driverVersion": {"version": "570.124.6"},
            },
            "capacity": {"memory": {"value": f"{spec.gpu_memory_mib}Mi"}},
        })
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": slice_name(spec.name),
                         "ownerReferences": [{"apiVersion": "v1", "kind": "Node",
                                              "name": spec.name, "uid": node_uid,
                                              "controller": True}]},
            "spec": {"driver": DRIVER, "nodeName": spec.name,
                     "pool": {"name": spec.name, "generation": 1, "resourceSliceCount": 1},
                     "devices": devices}}


# --- CEL selectors ----------------------------------------------------------------------

_LITERAL = r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|-?\d+|true|false'
_DRIVER_TERM = re.compile(rf"device\.driver\s*==\s*({_LITERAL})")
_ATTRIBUTE_TERM = re.compile(
    rf"""device\.attributes\[\s*("[^"]*"|'[^']*')\s*\]\.(\w+)\s*==\s*({_LITERAL})""")


def _literal(text: str) -> Any:
    if text[0] in "\"'":
        return text[1:-1]
    if text in ("true", "false"):
        return text == "true"
    return int(text)


def _attribute_value(attribute: Any) -> Any:
    if not isinstance(attribute, dict):
        return None
    for key in ("string", "int", "bool", "version"):
        if key in attribute:
            return attribute[key]
    return None


def selector_matches(expression: str, driver: str, device: Json) -> bool:
    """Whether the device matches; an expression outside the supported forms matches."""
    terms = [t.strip() for t in expression.strip().split("&&")]
    for term in terms:
        m = _DRIVER_TERM.fullmatch(term)
        if m:
            if driver != _literal(m[1]):
                return False
            continue
        m = _ATTRIBUTE_TERM.fullmatch(term)
        if m:
            domain, name, want = m[1][1:-1], m[2], _literal(m[3])
            attributes = device.get("attributes") or {}
            # A name in the driver's own domain may be published without it.
            value = attributes.get(f"{domain}/{name}", attributes.get(name)
                                   if domain == driver else None)
            if _attribute_value(value) != want:
                return False
            continue
        return True
    return True


def _selected(selectors: Iterable[Any], driver: str, device: Json) -> bool:
    for selector in selectors:
        expression = ((selector or {}).get("cel") or {}).get("expression") or ""
        if not selector_matches(str(expression), driver, device):
            return False
    return True


# --- allocation -------------------------------------------------------------------------


def allocated_devices(claims: Iterable[Json]) -> set[DeviceId]:
    """The devices of every allocated claim (a device is in at most one claim)."""
    used: set[DeviceId] = set()
    for claim in claims:
        allocation = (claim.get("status") or {}).get("allocation") or {}
        for result in (allocation.get("devices") or {}).get("results") or ():
            used.add((str(result.get("driver")), str(result.get("pool")),
                      str(result.get("device"))))
    return used


def node_selector(node: str) -> Json:
    """The allocation's node selector for devices of a node-local slice."""
    return {"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": [node]}]}]}


def available_on(claim: Json, node: str) -> bool:
    """Whether an allocated claim's node selector admits the node (matchFields on names)."""
    allocation = (claim.get("status") or {}).get("allocation") or {}
    selector = allocation.get("nodeSelector")
    if not selector:
        return True
    for term in selector.get("nodeSelectorTerms") or ():
        fields = term.get("matchFields") or ()
        if all(f.get("key") != "metadata.name" or (
                (f.get("operator") == "In") == (node in (f.get("values") or ())))
               for f in fields):
            return True
    return False


def allocate(claims: list[Json], node: str, slices: list[Json], classes: dict[str, Json],
             used: set[DeviceId]) -> list[Json] | None:
    """The `status.allocation` of each claim in order, from the node's free devices, or None
    when some request cannot be satisfied there (all-or-nothing, as the scheduler's
    allocator)."""
    free = [(s["spec"]["driver"], s["spec"]["pool"]["name"], d)
            for s in slices if (s.get("spec") or {}).get("nodeName") == node
            for d in s["spec"].get("devices") or ()]
    taken = set(used)
    out: list[Json] = []
    for claim in claims:
        results: list[Json] = []
        for request in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or ():
            options = ([(request["name"], request["exactly"])] if request.get("exactly")
                       else [(f"{request['name']}/{sub['name']}", sub)
                             for sub in request.get("firstAvailable") or ()])
            chosen = next(((name, picked) for name, wanted in options
                           if (picked := _pick(wanted, free, taken, classes)) is not None), None)
            if chosen is None:
                return None
            name, picked = chosen
            for driver, pool, device in picked:
                taken.add((driver, pool, device))
                results.append({"request": name, "driver": driver, "pool": pool,
                                "device": device})
        out.append({"devices": {"results": results}, "nodeSelector": node_selector(node)})
    return out


def _pick(request: Json, free: list[tuple[str, str, Json]], taken: set[DeviceId],
          classes: dict[str, Json]) -> list[DeviceId] | None:
    klass = classes.get(str(request.get("deviceClassName")))
    if klass is None:
        return None
    selectors = [*((klass.get("spec") or {}).get("selectors") or ()),
                 *(request.get("selectors") or ())]
    matching = [(driver, pool, str(d.get("name"))) for driver, pool, d in free
                if _selected(selectors, driver, d)]
    available = [m for m in matching if m not in taken]
    if request.get("allocationMode") == "All":
        # All means every matching device, none of them in use by another claim.
        return available if available and len(available) == len(matching) else None
    count = int(request.get("count") or 1)
    return available[:count] if len(available) >= count else None
