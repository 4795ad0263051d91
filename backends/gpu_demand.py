"""How many GPUs a graph's pods take: per replica of each component, from the graph as stored
(`v1beta1`), before its pods exist.

A pod's GPUs are what the scheduler counts for it: the `*/gpu` extended resources
(`nvidia.com/gpu`, or the resource a v1alpha1 `gpuType` named) of its containers and sidecars,
the limit where given (an extended resource's request defaults to it), or of its largest
regular init container if that is more. A replica of a multinode component is `nodeCount` such
pods. GPUs reached through DRA claims are not counted here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

Json = dict[str, Any]

__all__ = ["component_gpus_per_replica", "gpus_per_replica", "pod_gpus"]

_WHOLE = re.compile(r"\d+")


def pod_gpus(pod_spec: Json) -> int:
    """GPUs one pod of this spec requests."""
    running = sum(_container_gpus(c) for c in _dicts(pod_spec.get("containers")))
    init = _dicts(pod_spec.get("initContainers"))
    running += sum(_container_gpus(c) for c in init if c.get("restartPolicy") == "Always")
    regular = [_container_gpus(c) for c in init if c.get("restartPolicy") != "Always"]
    return max([running, *regular])


def component_gpus_per_replica(component: Json) -> int:
    """GPUs of one replica of a `v1beta1` component (its pods, times the nodes of a multinode
    one)."""
    template = component.get("podTemplate") or {}
    spec = template.get("spec") if isinstance(template, dict) else None
    per_pod = pod_gpus(spec) if isinstance(spec, dict) else 0
    multinode = component.get("multinode") or {}
    nodes = multinode.get("nodeCount", 1) if isinstance(multinode, dict) else 1
    return per_pod * (nodes if isinstance(nodes, int) and nodes > 0 else 1)


def gpus_per_replica(graph: Json) -> dict[str, int]:
    """Each component of a graph as stored (`v1beta1`) and the GPUs of one of its replicas."""
    components = (graph.get("spec") or {}).get("components") or []
    return {str(c.get("name", "")): component_gpus_per_replica(c) for c in _dicts(components)}


def _container_gpus(container: Json) -> int:
    resources = container.get("resources") or {}
    if not isinstance(resources, dict):
        return 0
    amounts: dict[str, int] = {}
    for side in ("requests", "limits"):  # limits last: they win
        items = resources.get(side)
        if isinstance(items, dict):
            amounts.update({name: _whole(value) for name, value in items.items()
                            if isinstance(name, str) and name.endswith("/gpu")})
    return sum(amounts.values())


def _whole(value: object) -> int:
    text = str(value).strip()
    return int(text) if _WHOLE.fullmatch(text) else 0


def _dicts(items: object) -> Iterable[Json]:
    return [i for i in items if isinstance(i, dict)] if isinstance(items, list) else []
