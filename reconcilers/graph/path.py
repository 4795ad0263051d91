"""What the graph controller reads of a graph's workloads, whichever path runs them."""

from __future__ import annotations

from typing import Any

from backends.hub_graph import HubGraph
from reconcilers.graph.readiness import ServiceReadiness
from reconcilers.machinery.children import Synced
from reconcilers.machinery.context import OperatorContext

Json = dict[str, Any]


class WorkloadPath:
    """The workloads of one graph, for one reconcile: one DCD per service (ComponentPath) or
    one Grove PodCliqueSet (GrovePath). Reads only; the child writer does the writing."""

    def __init__(self, ctx: OperatorContext, live: Json, graph: HubGraph) -> None:
        self.ctx = ctx
        self.live = live
        self.namespace = str(live["metadata"]["namespace"])
        self.graph = str(live["metadata"]["name"])
        self.services = dict(graph.components())

    async def observe(self) -> tuple[dict[str, str | None], list[ServiceReadiness]]:
        """Before anything is written: the restart token each existing workload carries,
        and every service's readiness."""
        raise NotImplementedError

    async def readiness(self, synced: Synced) -> list[ServiceReadiness]:
        """Every service's readiness from the workloads as the writer left them."""
        raise NotImplementedError
