"""What the graph controller would write for a graph, computed from a live cluster, writing
nothing: the read half of a reconcile (`reconcilers.graph.reconciler`), for `diff`.

The graph given may be one not yet applied (a server-side dry run of a file): its children are
rendered as a reconcile of it would render them now, from what runs (the restart tokens its
DCDs carry, the worker generations and their pods, the rollout's first step, the MPI Secret,
the ClusterTopology a KV transfer policy names).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from backends import constants
from backends.children import DesiredChildren
from backends.graph_children import graph_children, uses_grove
from backends.hub_graph import HubGraph
from backends.mpi_secret import mpi_services
from backends.worker_generation import LEGACY, rolled_workers, worker_dcd_name
from controller.store import OWNER_UID_INDEX
from reconcilers.graph.cluster_topology import cluster_topologies
from reconcilers.graph.components import ComponentPath
from reconcilers.graph.grove import GrovePath
from reconcilers.graph.path import WorkloadPath
from reconcilers.graph.restart import plan_restart
from reconcilers.graph.revisions import owned_revisions
from reconcilers.graph.rollout import Rollout, observe_rollout
from reconcilers.machinery.context import OperatorContext
from reconcilers.machinery.mpi_secret import mpi_source
from reconcilers.machinery.resources import COMPONENT_DEPLOYMENTS

Json = dict[str, Any]

__all__ = ["Preview", "live_generations", "preview"]


@dataclass(frozen=True)
class Preview:
    """The desired children of a graph, and its worker rollout (None: no worker rolls by
    generation, as on the Grove path)."""

    desired: DesiredChildren
    rollout: Rollout | None


async def preview(ctx: OperatorContext, live: Json, graph: HubGraph, *,
                  planner_cluster_role: str = "", epp_cluster_role: str = "") -> Preview:
    """The graph's desired children as a reconcile would render them now. `live`: the graph
    as stored (the hub), with the uid its children are owned by. Raises GenerationError and
    TerminalError as a reconcile would fail."""
    services = [name for name, _ in graph.components()]
    kind = GrovePath if uses_grove(graph, ctx.settings) else ComponentPath
    path: WorkloadPath = kind(ctx, live, graph)
    rollout = None
    if isinstance(path, ComponentPath):
        rollout = await observe_rollout(ctx, live, graph, ctx.settings)
        path.rollout = rollout
    tokens, observed = await path.observe()
    previous = (live.get("status") or {}).get("restart")
    plan = plan_restart(graph.model.spec.restart,
                        previous if isinstance(previous, dict) else None, services, tokens,
                        {r.service for r in observed if r.ready})
    mpi_secret = await mpi_source(ctx, path.namespace, mpi_services(graph), "Preview")
    desired = graph_children(graph, ctx.settings, tokens=plan.tokens,
                             planner_cluster_role=planner_cluster_role,
                             epp_cluster_role=epp_cluster_role, mpi_secret=mpi_secret,
                             workers=rollout.plan if rollout is not None else None,
                             revisions=await owned_revisions(ctx, live),
                             topologies=await cluster_topologies(
                                 ctx, graph, grove=isinstance(path, GrovePath)))
    return Preview(desired, rollout)


async def live_generations(ctx: OperatorContext, uid: str, graph: HubGraph) -> set[str]:
    """The worker generations the graph's live DCDs belong to: their worker-hash labels, or
    `LEGACY` for DCDs named as before generations existed."""
    services = set(rolled_workers(graph))
    found = set()
    for dcd in await ctx.cache.by_index(COMPONENT_DEPLOYMENTS, OWNER_UID_INDEX, uid):
        meta = dcd["metadata"]
        labels = meta.get("labels") or {}
        service = labels.get(constants.LABEL_COMPONENT)
        if service not in services or meta.get("deletionTimestamp"):
            continue
        generation = str(labels.get(constants.LABEL_WORKER_HASH) or LEGACY)
        if meta["name"] == worker_dcd_name(graph.name, service, generation):
            found.add(generation)
    return found
