"""The graph's `TopologyLevelsAvailable` condition: whether the topology levels its constraints
pack in still exist in the ClusterTopology, as Grove reports it on the PodCliqueSet.

Grove sets `TopologyLevelsUnavailable` on the PodCliqueSet (`backends.topology` writes its
constraints); the graph carries it the other way round, as the original does:

- no condition on the PodCliqueSet yet: Unknown, `TopologyConditionPending`;
- Grove says True (levels gone): False, `TopologyLevelsUnavailable` with Grove's message, and a
  Warning event of that reason; `TopologyDefinitionNotFound` when Grove's reason is
  `ClusterTopologyNotFound` (Grove reports that one as Unknown: the original reads only True
  as a loss, so a deleted topology would read as available; here it reads as lost, which is
  what the original's reason was made for);
- otherwise: True, `AllTopologyLevelsAvailable`.

Only a graph with a topology constraint on the Grove path has the condition (it is removed
otherwise); until the PodCliqueSet exists the previous condition stays.
"""

from __future__ import annotations

from typing import Any

from backends.graph_children import uses_grove
from backends.hub_graph import HubGraph
from backends.topology import has_topology_constraints
from reconcilers.machinery.conditions import get_condition, set_condition
from reconcilers.machinery.context import OperatorContext
from reconcilers.machinery.resources import POD_CLIQUE_SETS

Json = dict[str, Any]

__all__ = ["CONDITION", "lost_topology_event", "with_topology_condition"]

CONDITION = "TopologyLevelsAvailable"
GROVE_CONDITION = "TopologyLevelsUnavailable"
ALL_AVAILABLE = "AllTopologyLevelsAvailable"
UNAVAILABLE = "TopologyLevelsUnavailable"
NOT_FOUND = "TopologyDefinitionNotFound"
PENDING = "TopologyConditionPending"
GROVE_NOT_FOUND = "ClusterTopologyNotFound"


def graph_condition(pcs: Json) -> tuple[str, str, str]:
    """(status, reason, message) of the graph's condition from its PodCliqueSet."""
    grove = get_condition((pcs.get("status") or {}).get("conditions"), GROVE_CONDITION)
    if grove is None:
        return ("Unknown", PENDING,
                "Waiting for the topology condition of the scheduling framework")
    reason = str(grove.get("reason") or "")
    if reason == GROVE_NOT_FOUND and grove.get("status") in ("True", "Unknown"):
        return "False", NOT_FOUND, str(grove.get("message") or "")
    if grove.get("status") == "True":
        return "False", UNAVAILABLE, str(grove.get("message") or "")
    return ("True", ALL_AVAILABLE,
            "All required topology levels are available in the cluster topology")


async def with_topology_condition(ctx: OperatorContext, live: Json, graph: HubGraph,
                                  status: Json) -> None:
    """Set (or remove) the condition in the status about to be written, in place."""
    conditions = list(status.get("conditions") or [])
    if not has_topology_constraints(graph) or not uses_grove(graph, ctx.settings):
        if get_condition(conditions, CONDITION) is not None:
            status["conditions"] = [c for c in conditions if c.get("type") != CONDITION]
        return
    meta = live["metadata"]
    pcs = await ctx.cache.get_or_none(POD_CLIQUE_SETS, meta.get("namespace", ""), meta["name"])
    if pcs is None:
        return
    value, reason, message = graph_condition(pcs)
    status["conditions"] = set_condition(conditions, CONDITION, value, reason, message)


def lost_topology_event(previous: Json | None, status: Json) -> tuple[str, str] | None:
    """(reason, message) of the Warning a newly lost topology deserves: the condition turned
    False, or its reason or message changed while False."""
    new = get_condition(status.get("conditions"), CONDITION)
    if new is None or new.get("status") != "False":
        return None
    old = get_condition((previous or {}).get("conditions"), CONDITION) or {}
    if all(old.get(k) == new.get(k) for k in ("status", "reason", "message")):
        return None
    return (str(new.get("reason")),
            f"Topology constraints are no longer enforced: {new.get('message', '')}")
