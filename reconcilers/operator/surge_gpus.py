"""The GPUs a worker rollout's surge needs, and the GPUs free in the cluster.

Per rolled component, the surge adds at most `min(desired, maxSurge)` replicas of the new
generation beside the old one (`nvidia.com/deployment-rolling-update-max-surge`, default 25%,
rounded up; zero surge and zero unavailable make one; Recreate none), each with the GPUs of one
replica of the new spec (`backends.gpu_demand`). Free GPUs are the nodes' allocatable
`nvidia.com/gpu` less what the pods bound to them and not terminated request, as the scheduler
counts them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from backends.deployment import deployment_strategy
from backends.gpu_demand import gpus_per_replica, pod_gpus
from backends.hub_graph import HubGraph
from controller.client import KubeClient
from controller.errors import ApiError
from reconcilers.graph.rollout_plan import budget
from reconcilers.machinery.resources import NODES, PODS

Json = dict[str, Any]

__all__ = ["ClusterGpus", "Surge", "cluster_gpus", "surge"]

GPU_RESOURCE = "nvidia.com/gpu"


@dataclass(frozen=True)
class Surge:
    """One rolled component's surge: extra replicas beside the old generation, GPUs each."""

    component: str
    replicas: int
    gpus_per_replica: int

    @property
    def gpus(self) -> int:
        return self.replicas * self.gpus_per_replica


@dataclass(frozen=True)
class ClusterGpus:
    """Allocatable GPUs of the nodes, and those not requested by running pods."""

    allocatable: int
    free: int


def surge(graph: HubGraph, stored: Json, components: list[str]) -> list[Surge]:
    """The surge of each rolled component of `graph` (`stored`: the same graph as stored,
    `v1beta1` JSON, for its GPUs per replica)."""
    per_replica = gpus_per_replica(stored)
    specs = dict(graph.components())
    out = []
    for name in components:
        replicas = specs[name].replicas
        desired = 1 if replicas is None else int(replicas)
        annotations = {**(graph.model.metadata.get("annotations") or {}),
                       **(graph.inputs.component(name).annotations or {})}
        strategy = deployment_strategy(annotations)
        if strategy["type"] == "Recreate":
            extra = 0
        else:
            rolling = strategy["rollingUpdate"]
            extra = min(desired, budget(desired, rolling["maxSurge"],
                                        rolling["maxUnavailable"]).surge)
        out.append(Surge(name, extra, per_replica.get(name, 0)))
    return out


async def cluster_gpus(client: KubeClient) -> ClusterGpus | None:
    """The cluster's allocatable and free GPUs; None when nodes or pods cannot be listed
    (a user allowed only into a namespace)."""
    try:
        nodes = (await client.list(NODES)).get("items") or []
        pods = (await client.list(PODS)).get("items") or []
    except ApiError as error:
        if error.code in (401, 403):
            return None
        raise
    allocatable: dict[str, int] = {}
    for node in nodes:
        value = ((node.get("status") or {}).get("allocatable") or {}).get(GPU_RESOURCE, "0")
        allocatable[node["metadata"]["name"]] = _whole(value)
    used = 0
    for pod in pods:
        bound = (pod.get("spec") or {}).get("nodeName")
        phase = (pod.get("status") or {}).get("phase")
        if bound in allocatable and phase not in ("Succeeded", "Failed"):
            used += pod_gpus(pod.get("spec") or {})
    total = sum(allocatable.values())
    return ClusterGpus(total, max(total - used, 0))


def _whole(value: object) -> int:
    text = str(value).strip()
    return int(text) if text.isdigit() else 0
