"""Topology-aware placement on the Grove path: a graph's `topologyConstraint` and its
components' become the PodCliqueSet's topology packing.

Grove packs each replica of a constrained PodCliqueSet, clique or scaling group within one
domain of a level of a ClusterTopology: `{topologyName: <ClusterTopology>, packDomain:
<level>}`. The graph's constraint names the ClusterTopology for all of them and, with a
packDomain, constrains the PodCliqueSet's template (components without their own inherit it
through Grove). A component's own constraint goes where its replicas are: on its scaling group
when it has one (multinode: the replica's nodes are packed together, not each pod alone),
else on its clique. Every constraint names the topology (Grove requires both fields on each).

A graph without `spec.topologyConstraint` is not packed: a component's constraint alone names
no topology (validation refuses it). On the DCD path the constraints are not rendered, as the
original leaves them to Grove (`reconcilers.graph` reports no topology condition there).
"""

from __future__ import annotations

from typing import Any

from backends import constants
from backends.hub_graph import HubGraph

Json = dict[str, Any]

__all__ = ["has_topology_constraints", "with_topology_constraints"]


def has_topology_constraints(graph: HubGraph) -> bool:
    """The graph or one of its components asks for topology packing."""
    return graph.model.spec.topology_constraint is not None or any(
        c.topology_constraint is not None for _, c in graph.components())


def with_topology_constraints(template: Json, graph: HubGraph) -> None:
    """Set the topology packing on a PodCliqueSet template of the graph, in place."""
    spec = graph.model.spec.topology_constraint
    if spec is None:
        return
    if spec.pack_domain:
        template["topologyConstraint"] = _constraint(spec.cluster_topology_name,
                                                     spec.pack_domain)
    groups = {g.get("name"): g for g in template.get("podCliqueScalingGroups") or []}
    for key, component in graph.components():
        own = component.topology_constraint
        if own is None or not own.pack_domain:
            continue
        constraint = _constraint(spec.cluster_topology_name, own.pack_domain)
        group = groups.get(key.lower())
        if group is not None:
            group["topologyConstraint"] = constraint
            continue
        for clique in template.get("cliques") or []:
            if (clique.get("labels") or {}).get(constants.LABEL_COMPONENT) == key:
                clique["topologyConstraint"] = dict(constraint)


def _constraint(topology: str, domain: str) -> Json:
    return {"topologyName": topology, "packDomain": domain}
