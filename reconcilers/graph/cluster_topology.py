"""The ClusterTopology a graph's KV transfer policy names, read for its render.

A policy with `clusterTopologyName` projects every level of that Grove ClusterTopology into
the worker pods (`backends.kv_transfer_policy`), so the levels must be known when the pods'
template is written. They are read with one GET per reconcile of such a graph (no informer:
few graphs name one, and a topology changes rarely), as the original reads it while it renders
the PodCliqueSet; a graph that names none, or is not on the Grove path, costs nothing.
"""

from __future__ import annotations

from typing import Any

from backends.hub_graph import HubGraph
from backends.kv_transfer_policy import kv_transfer_policy
from controller.errors import NotFound
from reconcilers.machinery.context import OperatorContext
from reconcilers.machinery.resources import CLUSTER_TOPOLOGIES

Json = dict[str, Any]

__all__ = ["cluster_topologies"]


async def cluster_topologies(ctx: OperatorContext, graph: HubGraph, *, grove: bool
                             ) -> dict[str, tuple[str, ...]]:
    """{name: its levels' domains, broadest first} of the ClusterTopology the graph's policy
    names, when the graph runs on Grove; {} when it names none or that topology does not exist
    (the render then says so)."""
    policy = kv_transfer_policy(graph)
    name = policy.cluster_topology_name if policy is not None else None
    if not grove or not name:
        return {}
    try:
        topology = await ctx.client.get(CLUSTER_TOPOLOGIES, None, name)
    except NotFound:
        return {}
    levels = (topology.get("spec") or {}).get("levels") or []
    return {name: tuple(str(level.get("domain", "")) for level in levels
                        if isinstance(level, dict))}
