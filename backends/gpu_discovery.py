"""GPU facts of a cluster read from its nodes' GPU feature-discovery labels, in the shape of
the profiler's `hardware` section (num_gpus_per_node, gpu_model, gpu_vram_mib, system).

The node with the most GPUs speaks for the cluster: the profiler sizes engines for one node.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

Json = dict[str, Any]

__all__ = ["hardware_from_nodes", "system_of"]

PRODUCT_LABEL = "nvidia.com/gpu.product"
COUNT_LABEL = "nvidia.com/gpu.count"
MEMORY_LABEL = "nvidia.com/gpu.memory"
GPU_RESOURCE = "nvidia.com/gpu"

# Substring of the product label -> the profiler's system name.
_SYSTEMS = (("GB200", "gb200_sxm"), ("B200", "b200_sxm"), ("H200", "h200_sxm"),
            ("H100", "h100_sxm"), ("A100", "a100_sxm"), ("L40S", "l40s"))


def system_of(product: str) -> str:
    upper = product.upper()
    for marker, system in _SYSTEMS:
        if marker in upper:
            return system
    return product.lower()


def _int(value: Any) -> int:
    try:
        return int(str(value))
    except (TypeError, ValueError):
        return 0


def _gpus(node: Json) -> int:
    labels = node["metadata"].get("labels") or {}
    count = _int(labels.get(COUNT_LABEL))
    if count:
        return count
    return _int(((node.get("status") or {}).get("capacity") or {}).get(GPU_RESOURCE))


def hardware_from_nodes(nodes: Iterable[Json]) -> Json | None:
    """The hardware section for the best GPU node, or None when no node reports GPUs."""
    best = max((n for n in nodes if _gpus(n) > 0), key=_gpus, default=None)
    if best is None:
        return None
    labels = best["metadata"].get("labels") or {}
    hardware: Json = {"num_gpus_per_node": _gpus(best)}
    product = labels.get(PRODUCT_LABEL)
    if product:
        hardware["gpu_model"] = product
        hardware["system"] = system_of(str(product))
    vram = _int(labels.get(MEMORY_LABEL))
    if vram:
        hardware["gpu_vram_mib"] = vram
    return hardware
