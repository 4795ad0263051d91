"""`NodeSim`: simulated nodes and kubelets as a client of any Kubernetes API server.

kwok's model: nothing runs inside the cluster. The nodes are registered through the API and
kept Ready (`node_agent`); the pods the cluster's own scheduler binds to them are run and
reported (`pod_agent`, `pod_lifecycle`); everything else (ReplicaSets, Deployments, Jobs,
garbage collection, endpoints) is the cluster's own controllers' part. Use it as an async
context manager:

    async with NodeSim(kubeconfig, NodeSimConfig(nodes=nodes(2, 8))) as sim:
        ...

`sim.behaviors` sets readiness, readiness and stop delays, Job outcomes and SIGTERM handling
as in the in-process simulation; `sim.workers` holds the simulated Dynamo workers' and
frontends' HTTP endpoints (a frontend's `/localcluster/serving-pairs`, and
`sim.workers.serving_pairs`, count the complete prefill+decode pairs per worker generation
from the bound pods the pod watch shows), and a starting worker with Kubernetes discovery
writes its DynamoWorkerMetadata (`worker_metadata`).
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from pathlib import Path
from types import TracebackType
from typing import Any

import structlog

from controller.client import ClientConfig, KubeClient
from hack.localcluster.simulation.behaviors import Behaviors
from hack.localcluster.simulation.container_logs import ContainerLogs
from hack.localcluster.simulation.workers import Workers

from .config import NodeSimConfig
from .node_agent import NodeAgent
from .pod_agent import PodAgent
from .pod_lifecycle import PodLifecycle
from .worker_metadata import RemotePublisher

log = structlog.get_logger("nodesim")

USER_AGENT = "nodesim"


class NodeSim:
    """Simulated nodes and kubelets against the API server of `kubeconfig`."""

    def __init__(self, kubeconfig: Path, config: NodeSimConfig | None = None,
                 name: str | None = None) -> None:
        self.kubeconfig = kubeconfig
        self.config = config or NodeSimConfig()
        self.name = name or f"nodesim-{uuid.uuid4().hex[:6]}"
        self.behaviors = Behaviors()
        self.workers = Workers(ContainerLogs())
        self._client: KubeClient | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self.node_agent: NodeAgent | None = None
        self.pod_agent: PodAgent | None = None
        self.lifecycle: PodLifecycle | None = None
        self.publisher: RemotePublisher | None = None

    @property
    def node_names(self) -> list[str]:
        return [spec.name for spec in self.config.nodes]

    async def start(self) -> NodeSim:
        client = self._client = await KubeClient.connect(
            self.kubeconfig, ClientConfig(qps=None, timeout=self.config.request_timeout,
                                          user_agent=USER_AGENT, field_manager=USER_AGENT))
        try:
            version = await client.request("GET", "/version")
            nodes = self.node_agent = NodeAgent(client, self.config, self.name,
                                                str(version.get("gitVersion", "")))
            await nodes.register()
            self.publisher = RemotePublisher(client)
            self.workers.on_start = self.publisher.publish
            self.lifecycle = PodLifecycle(client, self.config.delays, self.behaviors,
                                          self.workers, nodes.host_ip)
            pods = self.pod_agent = PodAgent(client, set(self.node_names), self.lifecycle)
            self.workers.pods = pods.pods_in  # what a simulated frontend sees
            self._tasks = [asyncio.create_task(nodes.run(), name="nodesim nodes"),
                           asyncio.create_task(pods.run(), name="nodesim pods")]
            await asyncio.wait_for(pods.synced.wait(), self.config.request_timeout)
        except BaseException:
            await self.stop()
            raise
        log.info("nodesim started", nodes=len(self.node_names), owner=self.name)
        return self

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks = []
        await self.workers.close()
        if self.publisher is not None:
            await self.publisher.close()
        if self._client is not None:
            if self.node_agent is not None and self.config.delete_nodes_on_exit:
                await self.node_agent.unregister()
            await self._client.close()
            self._client = None

    async def wait(self) -> None:
        """Run until a background task ends (it only does by failing) or we are cancelled."""
        done, _ = await asyncio.wait(self._tasks, return_when=asyncio.FIRST_COMPLETED)
        for task in done:
            with contextlib.suppress(asyncio.CancelledError):
                task.result()

    def figures(self) -> dict[str, Any]:
        """Writes made so far, for reports."""
        return {"nodes": len(self.node_names),
                "pods": len(self.pod_agent.pods) if self.pod_agent else 0,
                "status_writes": self.lifecycle.status_writes if self.lifecycle else 0,
                "pod_deletes": self.lifecycle.deletes if self.lifecycle else 0,
                "lease_renewals": self.node_agent.lease_renewals if self.node_agent else 0}

    async def __aenter__(self) -> NodeSim:
        return await self.start()

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None,
                        trace: TracebackType | None) -> None:
        await self.stop()
