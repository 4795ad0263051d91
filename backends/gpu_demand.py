"""How many GPUs a graph's pods take: per replica of each component, from the graph as stored
(`v1beta1`), before its pods exist.

A pod's GPUs are what the scheduler counts for it: the `*/gpu` extended resources
(`nvidia.com/gpu`, or the resource a v1alpha1 `gpuType` named) of its containers and sidecars,
the limit where given (an extended resource's request defaults to it), or of its largest
regular init container if that is more; and the devices of GPU classes its DRA claims ask
(`backends.dra_demand`). A replica of a multinode component is `nodeCount` pods: one leader and
`nodeCount - 1` workers, each from its role's template (`roles[].podTemplate`) where it has one.

A component with `experimental.gpuMemoryService` states its GPUs on its main container as
`nvidia.com/gpu`, and its pods reach them through one claim of the GMS device class instead,
shared by main, its failover engines and the extra client containers, which give up their own
GPU resources (as the original renders it): main's GPUs are counted once, in that class's
pool.

`replica_gpus` counts by pool (an extended resource or a device class, `dra_demand.Pools`);
`gpus_per_replica` and `pod_gpus` give the plain totals of extended resources.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from backends.dra_demand import (
    DEFAULT_DEVICE_CLASS,
    ClaimContext,
    Pools,
    add_pools,
    pod_claim_gpus,
)

Json = dict[str, Any]

__all__ = [
    "ReplicaGpus",
    "component_gpus_per_replica",
    "component_replica_gpus",
    "gms_device_classes",
    "gpu_fields",
    "gpus_per_replica",
    "pod_gpus",
    "pod_pools",
    "replica_gpus",
]

_WHOLE = re.compile(r"\d+")


def pod_gpus(pod_spec: Json) -> int:
    """GPUs one pod of this spec requests."""
    running = sum(_container_gpus(c) for c in _dicts(pod_spec.get("containers")))
    init = _dicts(pod_spec.get("initContainers"))
    running += sum(_container_gpus(c) for c in init if c.get("restartPolicy") == "Always")
    regular = [_container_gpus(c) for c in init if c.get("restartPolicy") != "Always"]
    return max([running, *regular])


def pod_pools(pod_spec: Json, context: ClaimContext | None = None) -> Pools:
    """GPUs one pod of this spec takes, by pool: each extended resource as `pod_gpus` counts
    it, and, with a `context`, the devices of the claims made for the pod (not those of the
    named claims it shares)."""
    running: Pools = {}
    for c in _dicts(pod_spec.get("containers")):
        add_pools(running, _container_pools(c))
    init = _dicts(pod_spec.get("initContainers"))
    for c in init:
        if c.get("restartPolicy") == "Always":
            add_pools(running, _container_pools(c))
    out = dict(running)
    for c in init:
        if c.get("restartPolicy") != "Always":
            for pool, count in _container_pools(c).items():
                out[pool] = max(out.get(pool, 0), count)
    if context is not None:
        add_pools(out, pod_claim_gpus(pod_spec, context).own)
    return out


def gpu_fields(pod_spec: Json) -> Json:
    """What of a pod spec its GPUs depend on, in the pod spec's shape: the containers and init
    containers asking for `*/gpu` (those resources only, and an init container's restart
    policy), and the pod's `resourceClaims`. Empty for a pod without either."""
    out: Json = {}
    for key in ("containers", "initContainers"):
        kept = []
        for c in _dicts(pod_spec.get(key)):
            resources = _gpu_resources(c)
            if resources:
                entry: Json = {"resources": resources}
                if c.get("restartPolicy"):
                    entry["restartPolicy"] = c["restartPolicy"]
                kept.append(entry)
        if kept:
            out[key] = kept
    claims = [{k: c[k] for k in ("name", "resourceClaimTemplateName", "resourceClaimName")
               if c.get(k)} for c in _dicts(pod_spec.get("resourceClaims"))]
    if claims:
        out["resourceClaims"] = claims
    return out


@dataclass(frozen=True)
class ReplicaGpus:
    """The GPUs of one replica of a component: its kinds of pod (the pools of one pod, and how
    many such pods a replica has), and the named claims its pods share (by claim name)."""

    pods: tuple[tuple[Mapping[str, int], int], ...] = ()
    shared: Mapping[str, Mapping[str, int]] = field(default_factory=dict)

    def pools(self) -> Pools:
        """GPUs of one replica by pool, shared claims aside."""
        out: Pools = {}
        for pools, count in self.pods:
            add_pools(out, pools, count)
        return out

    @property
    def total(self) -> int:
        return sum(self.pools().values())

    def largest_pod(self, pool: str) -> int:
        """The most of `pool` one pod of the replica takes."""
        return max((pools.get(pool, 0) for pools, count in self.pods if count > 0), default=0)


def gms_device_classes(graph: Json) -> set[str]:
    """The device classes the graph's GPU memory services ask."""
    return {_gms_class(c) for c in _dicts((graph.get("spec") or {}).get("components"))
            if _gms(c) is not None}


def component_replica_gpus(component: Json, context: ClaimContext | None = None
                           ) -> ReplicaGpus:
    """The GPUs of one replica of a `v1beta1` component (see the module docstring)."""
    context = context or ClaimContext()
    multinode = component.get("multinode") or {}
    nodes = multinode.get("nodeCount", 1) if isinstance(multinode, dict) else 1
    nodes = nodes if isinstance(nodes, int) and nodes > 0 else 1
    roles = ([("leader", 1), ("worker", nodes - 1)] if nodes > 1 else [("main", 1)])
    gms_class = _gms_class(component) if _gms(component) is not None else None
    pods: list[tuple[Mapping[str, int], int]] = []
    shared: dict[str, Mapping[str, int]] = {}
    clients = {"main", *((_gms(component) or {}).get("extraClientContainers") or ())}
    for role, count in roles:
        spec = _pod_spec(component, role)
        if gms_class is None:
            pools = pod_pools(spec, context)
        else:
            # The GMS clients share the claim, sized by what main asks, in place of their own.
            moved = sum(_container_pools(_main_container(spec)).values())
            pools = add_pools(pod_pools(_without_gpus(spec, clients), context),
                              {gms_class: moved})
        pods.append((pools, count))
        shared.update(pod_claim_gpus(spec, context).shared)
    return ReplicaGpus(tuple(pods), shared)


def replica_gpus(graph: Json, context: ClaimContext | None = None) -> dict[str, ReplicaGpus]:
    """Each component of a graph as stored (`v1beta1`) and the GPUs of one of its replicas."""
    components = (graph.get("spec") or {}).get("components") or []
    return {str(c.get("name", "")): component_replica_gpus(c, context)
            for c in _dicts(components)}


def component_gpus_per_replica(component: Json) -> int:
    """GPUs of one replica of a `v1beta1` component (its pods, times the nodes of a multinode
    one), extended resources and GMS GPUs, no claims of the pod template."""
    return component_replica_gpus(component).total


def gpus_per_replica(graph: Json) -> dict[str, int]:
    """Each component of a graph as stored (`v1beta1`) and the GPUs of one of its replicas."""
    return {name: gpus.total for name, gpus in replica_gpus(graph).items()}


def _pod_spec(component: Json, role: str) -> Json:
    """The pod spec `role`'s pods start from: the role's template, else the component's."""
    for entry in _dicts(component.get("roles")):
        template = entry.get("podTemplate")
        if entry.get("name") == role and isinstance(template, dict):
            spec = template.get("spec")
            return spec if isinstance(spec, dict) else {}
    template = component.get("podTemplate")
    spec = template.get("spec") if isinstance(template, dict) else None
    return spec if isinstance(spec, dict) else {}


def _main_container(pod_spec: Json) -> Json:
    """The container named `main` ({} without one: GMS wires none then)."""
    return next((c for c in _dicts(pod_spec.get("containers")) if c.get("name") == "main"), {})


def _without_gpus(pod_spec: Json, names: set[str]) -> Json:
    """`pod_spec` with the named containers asking no `*/gpu` (a shallow copy)."""
    def stripped(container: Json) -> Json:
        if container.get("name") not in names or not _gpu_resources(container):
            return container
        resources = {side: ({k: v for k, v in amounts.items() if not str(k).endswith("/gpu")}
                            if isinstance(amounts, dict) else amounts)
                     for side, amounts in (container.get("resources") or {}).items()}
        return {**container, "resources": resources}
    return {**pod_spec, "containers": [stripped(c) for c in _dicts(pod_spec.get("containers"))]}


def _gms(component: Json) -> Json | None:
    experimental = component.get("experimental")
    gms = experimental.get("gpuMemoryService") if isinstance(experimental, dict) else None
    return gms if isinstance(gms, dict) else None


def _gms_class(component: Json) -> str:
    return str((_gms(component) or {}).get("deviceClassName") or DEFAULT_DEVICE_CLASS)


def _gpu_resources(container: Json) -> Json:
    resources = container.get("resources")
    if not isinstance(resources, dict):
        return {}
    out: Json = {}
    for side in ("requests", "limits"):
        items = resources.get(side)
        if isinstance(items, dict):
            kept = {k: v for k, v in items.items() if isinstance(k, str) and k.endswith("/gpu")}
            if kept:
                out[side] = kept
    return out


def _container_pools(container: Json) -> Pools:
    amounts: Pools = {}
    resources = _gpu_resources(container)
    for side in ("requests", "limits"):  # limits last: they win
        amounts.update({k: _whole(v) for k, v in (resources.get(side) or {}).items()})
    return {k: v for k, v in amounts.items() if v > 0}


def _container_gpus(container: Json) -> int:
    return sum(_container_pools(container).values())


def _whole(value: object) -> int:
    text = str(value).strip()
    return int(text) if _WHOLE.fullmatch(text) else 0


def _dicts(items: object) -> Iterable[Json]:
    return [i for i in items if isinstance(i, dict)] if isinstance(items, list) else []
