"""The component's `resources` (cpu, memory, gpu, gpuType, custom, claims) as the requests,
limits and claims of the main container.

GPUs are an extended resource: Kubernetes takes their request from the limit, so a GPU count
is only ever written as a limit. A count given only under `requests` becomes the limit too
(the original dropped it, leaving the pod without GPUs).
"""

from __future__ import annotations

import copy
import re
from typing import Any

from api.quantity import QuantityError, parse_quantity
from api.v1alpha1 import ResourceItem, Resources
from backends import constants
from backends.errors import GenerationError

Json = dict[str, Any]

__all__ = ["apply_resources", "gpu_count"]

_WHOLE = re.compile(r"[0-9]+")


def apply_resources(container: Json, resources: Resources | None) -> None:
    """Lay the component's resources over those the container already has, in place."""
    if resources is None:
        return
    current: Json = container.setdefault("resources", {})
    requests = _amounts("requests", resources.requests)
    limits = _amounts("limits", resources.limits)
    gpu_item = _gpu_item(resources)
    if gpu_item is not None:
        part, item = gpu_item
        gpu_type = item.gpu_type or (resources.limits.gpu_type if resources.limits else None)
        limits[gpu_type or constants.GPU_RESOURCE] = _quantity(part, "gpu", item.gpu or "")
    for part, amounts in (("requests", requests), ("limits", limits)):
        if amounts:
            current[part] = {**current.get(part, {}), **amounts}
    if resources.claims:
        current["claims"] = [*current.get("claims", []), *copy.deepcopy(resources.claims)]
    if not current:
        del container["resources"]


def gpu_count(resources: Resources | None) -> int:
    """GPUs per pod (limit first, then request); 0 when absent or not a whole number."""
    if resources is None:
        return 0
    for item in (resources.limits, resources.requests):
        if item is not None and item.gpu is not None and _WHOLE.fullmatch(item.gpu.strip()):
            return int(item.gpu)
    return 0


def _amounts(part: str, item: ResourceItem | None) -> dict[str, str]:
    if item is None:
        return {}
    amounts: dict[str, str] = {}
    for name, value in (("cpu", item.cpu), ("memory", item.memory)):
        if value is not None:
            amounts[name] = _quantity(part, name, value)
    for name, value in sorted((item.custom or {}).items()):
        amounts[name] = _quantity(part, name, value)
    return amounts


def _gpu_item(resources: Resources) -> tuple[str, ResourceItem] | None:
    for part, item in (("limits", resources.limits), ("requests", resources.requests)):
        if item is not None and item.gpu is not None:
            return part, item
    return None


def _quantity(part: str, name: str, value: str) -> str:
    try:
        parse_quantity(value)
    except QuantityError as exc:
        raise GenerationError(f"parse {part} {name} quantity: {exc}") from None
    return value
