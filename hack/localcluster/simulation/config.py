"""What the simulated cluster consists of: its parts, its nodes and every delay it waits.

A `SimulationConfig` switches each part on or off (`parts`), lists the nodes (defaults: four
nodes with eight GPUs each, or a small YAML file) and holds the `Delays` of the simulated
kubelet and controllers. Every delay is short by default so tests run fast.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

#: The parts of the simulation, each switchable on its own.
PARTS: frozenset[str] = frozenset({
    "nodes",             # Node objects, their status and leases
    "scheduler",         # binds pending pods to nodes with room
    "kubelet",           # runs bound pods: phases, container statuses, readiness, deletion
    "replicasets",       # ReplicaSet controller
    "replicationcontrollers",  # ReplicationController controller (core/v1)
    "statefulsets",      # StatefulSet controller (ordinals, ordered rollouts, revisions)
    "deployments",       # Deployment controller (rollouts through ReplicaSets)
    "jobs",              # Job controller
    "endpoints",         # EndpointSlices and legacy Endpoints of Services with selectors
    "leaderworkersets",  # LeaderWorkerSet controller (when its CRD is installed)
    "grove",             # Grove PodCliqueSet / PodCliqueScalingGroup / PodClique controllers
    "hpa",               # HorizontalPodAutoscaler controller (metrics from `Simulation.metrics`)
    "resourceclaims",    # ResourceClaims from templates for pods, released when pods go
    "dradriver",         # NVIDIA's DRA driver: DeviceClass gpu.nvidia.com, a slice per GPU node
})


@dataclass(frozen=True)
class Delays:
    """Seconds the simulation waits between steps; every one configurable, all short."""

    #: Bound pod -> containers running (image pull and sandbox creation).
    pod_start: float = 0.05
    #: Running container with a readiness probe -> ready (without a probe it is ready at once).
    #: The cluster-wide default of `localcluster.dev/ready-after` (`behaviors`), which a pod
    #: or a test sets for itself, probe or not.
    pod_ready: float = 0.05
    #: Deleted pod: SIGTERM -> its containers have exited (a server draining; a container
    #: that ignores SIGTERM runs until the grace period ends instead, see `termination`).
    #: The cluster-wide default of `localcluster.dev/stop-after`; at most the grace period.
    container_stop: float = 0.04
    #: Deleted pod whose containers have stopped (terminated status written) -> removed.
    pod_termination: float = 0.02
    #: How long a crash-looping container runs before it dies.
    crash_run: float = 0.05
    #: First restart back-off of a crashed container; doubles per restart up to the max.
    crash_backoff: float = 0.1
    crash_backoff_max: float = 0.8
    #: ErrImagePull -> ImagePullBackOff, and back-off between pull attempts.
    image_pull_backoff: float = 0.1
    #: How long a Job's pod runs unless the Job says otherwise (`localcluster.dev/job-duration`).
    job_pod_duration: float = 0.1
    #: Back-off before a Job replaces a failed pod.
    job_backoff: float = 0.05
    #: How long a simulated DGDR profiler runs before its output is written (`profiler`).
    profiler_run: float = 0.2
    #: A node went NotReady -> its pods are evicted (taint-based eviction; real default 300 s).
    pod_eviction: float = 0.5
    #: First retry of a controller whose pod create was refused (e.g. a missing service
    #: account); doubles per refusal up to the max (the real work queue's back-off, shortened).
    create_retry: float = 0.05
    create_retry_max: float = 0.5
    #: First retry of a pod's volume set-up or container config while an object it needs is
    #: missing (it is also retried when one appears); doubles per attempt up to the max.
    mount_retry: float = 0.1
    mount_retry_max: float = 1.0
    #: Node lease renewal period (0 disables renewal).
    lease_renew: float = 10.0

    def scaled(self, factor: float) -> Delays:
        """All delays multiplied by `factor` (0 makes every step immediate)."""
        return replace(self, **{k: v * factor for k, v in self.__dict__.items()
                                if k != "lease_renew"})


@dataclass(frozen=True)
class NodeSpec:
    """One simulated node: its capacity, GPU model and extra labels or taints."""

    name: str
    cpu: str = "64"
    memory: str = "512Gi"
    pods: int = 110
    gpus: int = 8
    gpu_product: str = "NVIDIA-H100-80GB-HBM3"
    gpu_memory_mib: int = 81559
    gpu_family: str = "hopper"
    ephemeral_storage: str = "1Ti"
    #: Topology, broadest first (`node_objects.TOPOLOGY_LABELS`); an empty level has no label.
    region: str = "local"
    zone: str = "zone-a"
    block: str = ""
    rack: str = ""
    labels: dict[str, str] = field(default_factory=dict)
    taints: tuple[dict[str, Any], ...] = ()


def default_nodes(count: int = 4, gpus: int = 8) -> list[NodeSpec]:
    """Nodes alternating between two zones; within a zone, two nodes to a rack and two racks
    to a block, in name order (gpu-node-0 and -2 share zone-a's first rack)."""
    out = []
    for i in range(count):
        zone, nth = f"zone-{'ab'[i % 2]}", i // 2
        out.append(NodeSpec(name=f"gpu-node-{i}", gpus=gpus, zone=zone,
                            block=f"{zone}-block-{nth // 4}", rack=f"{zone}-rack-{nth // 2}"))
    return out


@dataclass(frozen=True)
class HpaSettings:
    """The simulated HorizontalPodAutoscaler controller's flags (kube-controller-manager's
    --horizontal-pod-autoscaler-*), plus a time scale so tests need not wait minutes."""

    #: Seconds between two evaluations of an HPA (real default 15 s).
    sync_period: float = 1.0
    #: Ratio band around 1.0 within which the HPA does not scale.
    tolerance: float = 0.1
    #: Scale-down stabilization window, in HPA seconds, when `behavior` sets none.
    downscale_stabilization: float = 300.0
    #: Real seconds per HPA second: multiplies stabilization windows and policy periods
    #: (0.01 makes the default 300 s scale-down window 3 s).
    time_scale: float = 1.0


@dataclass
class SimulationConfig:
    """Which parts run, on which nodes, with which delays."""

    parts: frozenset[str] = PARTS
    nodes: list[NodeSpec] = field(default_factory=default_nodes)
    delays: Delays = field(default_factory=Delays)
    #: Seed of the random choices (pod names aside), for reproducible runs.
    seed: int | None = None
    hpa: HpaSettings = field(default_factory=HpaSettings)

    def __post_init__(self) -> None:
        unknown = set(self.parts) - PARTS
        if unknown:
            raise ValueError(f"unknown simulation parts: {sorted(unknown)}; known: {sorted(PARTS)}")

    def without(self, *parts: str) -> SimulationConfig:
        return replace(self, parts=frozenset(self.parts) - frozenset(parts))

    def enabled(self, part: str) -> bool:
        return part in self.parts


_NODE_KEYS = {"name", "count", "cpu", "memory", "pods", "gpus", "gpuProduct", "gpuMemory",
              "gpuFamily", "ephemeralStorage", "region", "zone", "block", "rack", "labels",
              "taints"}


def load_nodes(path: Path) -> list[NodeSpec]:
    """Nodes from a YAML file:

        nodes:
          - name: h100        # with count: h100-0, h100-1, ...
            count: 2
            gpus: 8
            gpuProduct: NVIDIA-H100-80GB-HBM3
            gpuMemory: 81559    # MiB, as GPU feature discovery reports it
            cpu: "96"
            memory: 1Ti
            zone: zone-a        # also region, block, rack (topology labels)
            rack: rack-1
            labels: {pool: inference}
            taints: [{key: nvidia.com/gpu, effect: NoSchedule}]
          - name: cpu-node
            gpus: 0
    """
    doc = yaml.safe_load(path.read_text()) or {}
    entries = doc.get("nodes") if isinstance(doc, dict) else doc
    if not isinstance(entries, list) or not entries:
        raise ValueError(f"{path}: expected a non-empty list under 'nodes'")
    out: list[NodeSpec] = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict) or not entry.get("name"):
            raise ValueError(f"{path}: nodes[{i}] needs a name")
        unknown = set(entry) - _NODE_KEYS
        if unknown:
            raise ValueError(f"{path}: nodes[{i}]: unknown keys {sorted(unknown)}")
        base = NodeSpec(
            name=str(entry["name"]),
            cpu=str(entry.get("cpu", NodeSpec.cpu)),
            memory=str(entry.get("memory", NodeSpec.memory)),
            pods=int(entry.get("pods", NodeSpec.pods)),
            gpus=int(entry.get("gpus", NodeSpec.gpus)),
            gpu_product=str(entry.get("gpuProduct", NodeSpec.gpu_product)),
            gpu_memory_mib=int(entry.get("gpuMemory", NodeSpec.gpu_memory_mib)),
            gpu_family=str(entry.get("gpuFamily", NodeSpec.gpu_family)),
            ephemeral_storage=str(entry.get("ephemeralStorage", NodeSpec.ephemeral_storage)),
            region=str(entry.get("region", NodeSpec.region)),
            zone=str(entry.get("zone", NodeSpec.zone)),
            block=str(entry.get("block", NodeSpec.block)),
            rack=str(entry.get("rack", NodeSpec.rack)),
            labels={str(k): str(v) for k, v in (entry.get("labels") or {}).items()},
            taints=tuple(dict(t) for t in entry.get("taints") or ()),
        )
        count = entry.get("count")
        if count is None:
            out.append(base)
        else:
            out.extend(replace(base, name=f"{base.name}-{n}") for n in range(int(count)))
    names = [n.name for n in out]
    if len(set(names)) != len(names):
        raise ValueError(f"{path}: node names repeat")
    return out
