"""The Node objects of simulated nodes: labels (with GPU feature discovery's), capacity, status.

Pure builders: given a `NodeSpec` they return what a kubelet registers and reports, shaped
like a real GPU node's (NVIDIA GPU feature discovery labels, `nvidia.com/gpu` capacity).
"""

from __future__ import annotations

import hashlib
from typing import Any

from ..discovery import SERVER_VERSION
from .addresses import node_ip
from .config import NodeSpec

Json = dict[str, Any]

#: Marks nodes this simulation owns (the kubelet only runs pods bound to these).
SIMULATED_LABEL = "localcluster.dev/simulated"

UNREACHABLE_TAINT = "node.kubernetes.io/unreachable"

#: The topology labels, broadest first. Region, zone and hostname are Kubernetes' well-known
#: labels; block and rack have none, so these follow Grove's ClusterTopology examples (its
#: domains region, zone, datacenter, block, rack, host, numa; keys
#: `topology.kubernetes.io/<domain>` in its configuration docs), which Dynamo's topology-aware
#: KV transfer reads through a ClusterTopology or a `labelKey`.
REGION_LABEL = "topology.kubernetes.io/region"
ZONE_LABEL = "topology.kubernetes.io/zone"
BLOCK_LABEL = "topology.kubernetes.io/block"
RACK_LABEL = "topology.kubernetes.io/rack"
HOST_LABEL = "kubernetes.io/hostname"

_PRESSURE = (
    ("MemoryPressure", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
    ("DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    ("PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
)


def node_labels(spec: NodeSpec) -> dict[str, str]:
    labels = {
        HOST_LABEL: spec.name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/os": "linux",
        "beta.kubernetes.io/arch": "amd64",
        "node.kubernetes.io/instance-type": "localcluster.gpu" if spec.gpus else "localcluster.cpu",
        SIMULATED_LABEL: "true",
    }
    for key, value in ((REGION_LABEL, spec.region), (ZONE_LABEL, spec.zone),
                       (BLOCK_LABEL, spec.block), (RACK_LABEL, spec.rack)):
        if value:
            labels[key] = value
    if spec.gpus:
        labels.update({
            "nvidia.com/gpu.present": "true",
            "nvidia.com/gpu.product": spec.gpu_product,
            "nvidia.com/gpu.count": str(spec.gpus),
            "nvidia.com/gpu.memory": str(spec.gpu_memory_mib),
            "nvidia.com/gpu.family": spec.gpu_family,
            "nvidia.com/gpu.machine": "localcluster",
            "nvidia.com/gpu.replicas": "1",
            "nvidia.com/gpu.sharing-strategy": "none",
            "nvidia.com/gpu.compute.major": "9" if spec.gpu_family == "hopper" else "8",
            "nvidia.com/gpu.compute.minor": "0",
            "nvidia.com/cuda.driver.major": "570",
            "nvidia.com/cuda.driver.minor": "124",
            "nvidia.com/cuda.driver.rev": "06",
            "nvidia.com/cuda.runtime.major": "12",
            "nvidia.com/cuda.runtime.minor": "8",
            "nvidia.com/mig.capable": "true" if spec.gpu_family == "hopper" else "false",
            "nvidia.com/mps.capable": "false",
        })
    labels.update(spec.labels)
    return labels


def node_capacity(spec: NodeSpec) -> dict[str, str]:
    out = {"cpu": spec.cpu, "memory": spec.memory, "pods": str(spec.pods),
           "ephemeral-storage": spec.ephemeral_storage, "hugepages-1Gi": "0",
           "hugepages-2Mi": "0"}
    if spec.gpus:
        out["nvidia.com/gpu"] = str(spec.gpus)
    return out


def new_node(spec: NodeSpec, index: int) -> Json:
    """The Node a kubelet registers (spec and metadata; status comes separately)."""
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": spec.name, "labels": node_labels(spec),
                     "annotations": {"node.alpha.kubernetes.io/ttl": "0",
                                     "volumes.kubernetes.io/controller-managed-attach-detach":
                                         "true"}},
        "spec": {"podCIDR": f"10.244.{index}.0/24", "podCIDRs": [f"10.244.{index}.0/24"],
                 "providerID": f"localcluster://{spec.name}",
                 **({"taints": [dict(t) for t in spec.taints]} if spec.taints else {})},
    }


def node_status(spec: NodeSpec, index: int, *, ready: bool, now: str,
                old: Json | None) -> Json:
    """Status as a kubelet posts it; when not `ready`, as the node lifecycle controller
    leaves it."""
    old_conditions = {c["type"]: c for c in (old or {}).get("conditions") or ()}
    conditions = []
    for ctype, reason, message in (*_PRESSURE,
                                   ("Ready", "KubeletReady", "kubelet is posting ready status")):
        want = ("True" if ctype == "Ready" else "False") if ready else "Unknown"
        if not ready:
            reason, message = "NodeStatusUnknown", "Kubelet stopped posting node status."
        prev = old_conditions.get(ctype)
        same = prev is not None and prev.get("status") == want
        # A kubelet posts a heartbeat when something changes; a dead one posts nothing.
        heartbeat = prev.get("lastHeartbeatTime", now) if prev and (same or not ready) else now
        conditions.append({
            "type": ctype, "status": want, "lastHeartbeatTime": heartbeat,
            "lastTransitionTime": prev.get("lastTransitionTime", now) if prev and same else now,
            "reason": reason, "message": message,
        })
    capacity = node_capacity(spec)
    machine = hashlib.sha256(spec.name.encode()).hexdigest()[:32]
    version = str(SERVER_VERSION["gitVersion"])
    return {
        "capacity": capacity,
        "allocatable": dict(capacity),
        "conditions": conditions,
        "addresses": [{"type": "InternalIP", "address": node_ip(index)},
                      {"type": "Hostname", "address": spec.name}],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
        "nodeInfo": {
            "machineID": machine,
            "systemUUID": f"{machine[:8]}-{machine[8:12]}-{machine[12:16]}-{machine[16:20]}-"
                          f"{machine[20:32]}",
            "bootID": hashlib.sha256(f"boot-{spec.name}".encode()).hexdigest()[:32],
            "kernelVersion": "6.8.0-localcluster",
            "osImage": "Ubuntu 24.04.2 LTS",
            "containerRuntimeVersion": "containerd://2.0.5",
            "kubeletVersion": version,
            "kubeProxyVersion": version,
            "operatingSystem": "linux",
            "architecture": "amd64",
        },
    }
