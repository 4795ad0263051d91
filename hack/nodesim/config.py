"""What nodesim simulates: how many nodes, their GPUs, capacity and topology, and every delay
it waits.

The delays default to short values so tests run fast; `ready_delay=None` makes a pod with a
readiness probe ready after its probe's `initialDelaySeconds`, as a kubelet's first
successful probe would.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from hack.localcluster.simulation.config import NodeSpec, default_nodes


@dataclass(frozen=True)
class PodDelays:
    """Seconds a simulated kubelet waits between the steps of a pod's life."""

    #: Bound pod -> containers running (sandbox and image pull).
    pod_start: float = 0.2
    #: Running container with a readiness probe -> ready; None: the probe's initial delay.
    #: A pod's `localcluster.dev/ready-after` (probe or not) comes first.
    ready_delay: float | None = 0.2
    #: Deleted pod: SIGTERM -> its containers have exited (a stop beyond the grace period is
    #: a kill when it ends). A pod's `localcluster.dev/stop-after` comes first.
    container_stop: float = 0.2
    #: Containers stopped (terminated status written) -> the final delete with grace 0.
    pod_termination: float = 0.2
    #: How long a Job's pod runs unless it says otherwise (`localcluster.dev/job-duration`).
    job_pod_duration: float = 0.5


@dataclass(frozen=True)
class NodeSimConfig:
    """The simulated nodes and how their kubelets behave."""

    nodes: list[NodeSpec] = field(default_factory=lambda: nodes(2, 8))
    delays: PodDelays = field(default_factory=PodDelays)
    #: Node lease renewal period (the kubelet's default is 10 s of a 40 s lease).
    lease_renew: float = 10.0
    lease_duration: int = 40
    #: How often an unchanged node status is posted again (the kubelet's report frequency
    #: with leases is 5 minutes; shorter here so the status heartbeat is seen in tests too).
    status_report: float = 60.0
    #: Delete the nodes (and so their leases) when the simulator stops.
    delete_nodes_on_exit: bool = True
    #: Seconds allowed for one API request.
    request_timeout: float = 15.0


def nodes(count: int, gpus: int, prefix: str = "nodesim") -> list[NodeSpec]:
    """`count` GPU nodes named `<prefix>-0`, `<prefix>-1`, ..., with the in-process
    simulation's topology (`default_nodes`): two zones, two nodes to a rack and two racks to a
    block within a zone, so the Nodes carry region, zone, block and rack labels."""
    return [replace(spec, name=f"{prefix}-{i}")
            for i, spec in enumerate(default_nodes(count, gpus))]
