"""`Simulation`: the simulated cluster behind the API server, and its test-facing switches.

It builds the parts the configuration enables (nodes, scheduler, kubelet, workload
controllers), feeds them every committed change, and owns their tasks and timers. Tests
reach in through `behaviors` (pod readiness and its delay, crash loops, image pulls, job
results, SIGTERM handling and drain time), `workers` (Dynamo worker and frontend pods' HTTP
endpoints: adapters, calls, faults, a frontend's serving pairs per worker generation),
`metrics` (pod usage and external metrics for the HPA), `set_node_ready`, `clock` and
`settle`.
"""

from __future__ import annotations

import random
from typing import Any

from ..operations import Operations
from .behaviors import Behaviors
from .config import SimulationConfig
from .deployments import DeploymentController
from .dra_driver import DraDriver
from .endpoints import EndpointsController
from .grove import PodCliqueScalingGroupController, PodCliqueSetController
from .grove_podclique import PodCliqueController
from .grove_topology import DefaultClusterTopology
from .hpa import HorizontalPodAutoscalerController
from .jobs import JobController
from .kubelet import Kubelet
from .kubelet_api import SimulatedKubelets
from .leaderworkersets import LeaderWorkerSetController
from .loop import Context, ControlLoop, LoopRunner
from .metrics import Metrics
from .nodes import NodeController
from .replicasets import ReplicaSetController
from .replicationcontrollers import ReplicationControllerController
from .resource_claims import ResourceClaimController
from .scheduler import Scheduler
from .statefulsets import StatefulSetController
from .workers import Workers

Json = dict[str, Any]


class Simulation:
    """Nodes, scheduler, kubelets and controllers, as `SimulationConfig.parts` says."""

    def __init__(self, ops: Operations, config: SimulationConfig | None = None) -> None:
        self.config = config or SimulationConfig()
        self.ctx = Context(ops=ops, config=self.config, rng=random.Random(self.config.seed))
        self.ctx.behaviors.changed = self._behaviors_changed
        on = self.config.enabled
        self.nodes = NodeController(self.ctx) if on("nodes") else None
        self.scheduler = Scheduler(self.ctx) if on("scheduler") else None
        self.kubelet = Kubelet(self.ctx) if on("kubelet") else None
        #: What kube-apiserver reaches on the nodes: logs, exec, port-forward.
        self.kubelets = SimulatedKubelets(self.kubelet) if self.kubelet is not None else None
        loops: list[ControlLoop | None] = [
            self.nodes, self.scheduler, self.kubelet,
            ReplicaSetController(self.ctx) if on("replicasets") else None,
            ReplicationControllerController(self.ctx) if on("replicationcontrollers") else None,
            StatefulSetController(self.ctx) if on("statefulsets") else None,
            DeploymentController(self.ctx) if on("deployments") else None,
            JobController(self.ctx) if on("jobs") else None,
            EndpointsController(self.ctx) if on("endpoints") else None,
            LeaderWorkerSetController(self.ctx) if on("leaderworkersets") else None,
            ResourceClaimController(self.ctx) if on("resourceclaims") else None,
            DraDriver(self.ctx) if on("dradriver") else None,
        ]
        if on("grove"):
            loops += [PodCliqueSetController(self.ctx), PodCliqueScalingGroupController(self.ctx),
                      PodCliqueController(self.ctx), DefaultClusterTopology(self.ctx)]
        self.metrics = Metrics()
        self.hpa = HorizontalPodAutoscalerController(self.ctx, self.metrics) if on("hpa") else None
        loops.append(self.hpa)
        self._runner = LoopRunner([lp for lp in loops if lp is not None])
        ops.storage.add_listener(self._runner.dispatch())

    # --- lifecycle -----------------------------------------------------------------------

    def start(self) -> None:
        self._runner.start()

    async def stop(self) -> None:
        self.ctx.clock.stop()
        await self._runner.stop()
        if self.kubelet is not None:
            await self.kubelet.workers.close()

    async def settle(self) -> None:
        """Wait until no simulated component has queued work (pending timers aside)."""
        await self._runner.settle()

    # --- test API ------------------------------------------------------------------------

    @property
    def clock(self) -> Any:
        return self.ctx.clock

    @property
    def behaviors(self) -> Behaviors:
        return self.ctx.behaviors

    @property
    def workers(self) -> Workers:
        """The Dynamo worker pods' HTTP endpoints (the kubelet must be on)."""
        if self.kubelet is None:
            raise RuntimeError("the simulated kubelet is off: no worker endpoints")
        return self.kubelet.workers

    def set_node_ready(self, name: str, ready: bool) -> None:
        """Make a node NotReady (its kubelet stops; its pods are evicted) or Ready again."""
        if self.nodes is not None and name not in self.nodes.specs:
            raise KeyError(f"no simulated node {name!r}")
        if ready:
            self.ctx.nodes_down.discard(name)
        else:
            self.ctx.nodes_down.add(name)
        if self.nodes is not None:
            self.nodes.enqueue((name,))
        if self.kubelet is not None:
            self.kubelet.enqueue_all(self.kubelet.pods_on(name))

    def node_names(self) -> list[str]:
        return [n.name for n in self.config.nodes]

    def _behaviors_changed(self) -> None:
        if self.kubelet is not None:
            self.kubelet.enqueue_all(self.kubelet.pods_on())
