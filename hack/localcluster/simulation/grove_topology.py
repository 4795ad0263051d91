"""Grove's topology-aware scheduling, as far as the PodCliqueSet's status and the cluster's
topologies go: the `TopologyLevelsUnavailable` condition, and a default ClusterTopology of the
simulated nodes.

A PodCliqueSet's topology constraints (`{topologyName, packDomain}` on its template, its
cliques and its scaling groups) all name one ClusterTopology; Grove's PodCliqueSet controller
reports whether the levels they pack in are still among that topology's levels:

- no constraint: False, `AllClusterTopologyLevelsAvailable` ("No topology constraints defined");
- Grove serves no ClusterTopology (topology-aware scheduling off) and a constraint exists:
  Unknown, `TopologyAwareSchedulingDisabled`;
- a constraint without topologyName or packDomain, or two topology names: Unknown,
  `TopologyNameMissing`;
- the named ClusterTopology does not exist: Unknown, `ClusterTopologyNotFound`;
- a pack domain that is not one of its levels: True, `ClusterTopologyLevelsUnavailable`,
  "Unavailable topology domains: [a b]";
- otherwise False, `AllClusterTopologyLevelsAvailable`.

`DefaultClusterTopology` plays the topology an installation of Grove is configured with (Grove
made one, `grove-topology`, from its configuration's levels): when ClusterTopologies are
served and none exists yet, it creates `grove-topology` with the levels the simulated nodes
carry labels for, broadest first (region, zone, block, rack, host), once per simulation.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..storage import Change
from .loop import ControlLoop, Key
from .node_objects import BLOCK_LABEL, HOST_LABEL, RACK_LABEL, REGION_LABEL, ZONE_LABEL
from .objects import set_condition
from .writer import CRDS, NODES, Writer

Json = dict[str, Any]

CLUSTER_TOPOLOGIES = ("grove.io", "clustertopologies")
DEFAULT_NAME = "grove-topology"
LEVELS_UNAVAILABLE = "TopologyLevelsUnavailable"
#: The levels the simulated nodes may carry, broadest first: (domain, node label).
NODE_LEVELS = (("region", REGION_LABEL), ("zone", ZONE_LABEL), ("block", BLOCK_LABEL),
               ("rack", RACK_LABEL), ("host", HOST_LABEL))


def constraints(pcs: Json) -> list[Json]:
    """Every topology constraint of a PodCliqueSet: its template's, its cliques', its scaling
    groups'."""
    template = (pcs.get("spec") or {}).get("template") or {}
    found = [template.get("topologyConstraint")]
    found += [c.get("topologyConstraint") for c in template.get("cliques") or ()]
    found += [g.get("topologyConstraint") for g in template.get("podCliqueScalingGroups") or ()]
    return [c for c in found if isinstance(c, dict)]


def levels_condition(pcs: Json, topology: Callable[[str], Json | None] | None
                     ) -> tuple[str, str, str] | None:
    """(status, reason, message) of the PodCliqueSet's TopologyLevelsUnavailable condition;
    `topology(name)` reads a ClusterTopology (None: ClusterTopologies are not served). None:
    no condition (scheduling is not topology-aware and nothing asks it to be)."""
    found = constraints(pcs)
    if topology is None:
        if found:
            return ("Unknown", "TopologyAwareSchedulingDisabled",
                    "Topology constraints are defined but Topology Aware Scheduling is disabled")
        return None
    if not found:
        return "False", "AllClusterTopologyLevelsAvailable", "No topology constraints defined"
    names = {c.get("topologyName") for c in found}
    if any(not c.get("topologyName") or not c.get("packDomain") for c in found):
        return ("Unknown", "TopologyNameMissing",
                "topology constraints must specify both topologyName and packDomain")
    if len(names) > 1:
        return ("Unknown", "TopologyNameMissing",
                "all topologyConstraint.topologyName values within a PodCliqueSet must match")
    cluster_topology = topology(str(names.pop()))
    if cluster_topology is None:
        return "Unknown", "ClusterTopologyNotFound", "ClusterTopology resource not found"
    available = {str(level.get("domain")) for level in
                 (cluster_topology.get("spec") or {}).get("levels") or ()}
    missing = sorted({str(c["packDomain"]) for c in found} - available)
    if missing:
        return ("True", "ClusterTopologyLevelsUnavailable",
                f"Unavailable topology domains: [{' '.join(missing)}]")
    return "False", "AllClusterTopologyLevelsAvailable", "All topology levels are available"


def set_levels_condition(conditions: list[Json], pcs: Json, writer: Writer, now: str) -> None:
    """Set (or remove) the PodCliqueSet's TopologyLevelsUnavailable condition in place, from
    the ClusterTopologies as they are now."""
    served = writer.served(CLUSTER_TOPOLOGIES) is not None

    def read(name: str) -> Json | None:
        return writer.get(CLUSTER_TOPOLOGIES, "", name)

    found = levels_condition(pcs, read if served else None)
    if found is None:
        conditions[:] = [c for c in conditions if c.get("type") != LEVELS_UNAVAILABLE]
        return
    status, reason, message = found
    set_condition(conditions, LEVELS_UNAVAILABLE, status, now, reason=reason, message=message,
                  extra={"observedGeneration": pcs["metadata"].get("generation", 1)})


def node_levels(nodes: Iterable[Json]) -> list[Json]:
    """The levels the nodes carry a label for, broadest first."""
    keys = {k for node in nodes for k in (node["metadata"].get("labels") or {})}
    return [{"domain": domain, "key": key} for domain, key in NODE_LEVELS if key in keys]


class DefaultClusterTopology(ControlLoop):
    """Creates `grove-topology` from the simulated nodes' levels, once ClusterTopologies are
    served, if no ClusterTopology exists (once per simulation, as an installation does)."""

    manager = "grove-operator"
    component = "grove-operator"
    _KEY: Key = ("",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._done = False

    def initial_keys(self) -> Iterable[Key]:
        return [self._KEY]

    def keys_for(self, change: Change) -> Iterable[Key]:
        if self._done:
            return ()
        if change.resource == CRDS and change.obj["metadata"].get("name") == (
                "clustertopologies.grove.io"):
            return [self._KEY]
        return [self._KEY] if change.resource == NODES else ()

    def reconcile(self, key: Key) -> float | None:
        if self._done or self.writer.served(CLUSTER_TOPOLOGIES) is None:
            return None
        levels = node_levels(self.writer.list_objects(NODES))
        if not levels:
            return None  # no node registered yet: a node's arrival brings us back
        self._done = True
        if self.writer.list_objects(CLUSTER_TOPOLOGIES):
            return None
        self.writer.create(CLUSTER_TOPOLOGIES, "", {
            "metadata": {"name": DEFAULT_NAME}, "spec": {"levels": levels}})
        return None
