"""How the graph reads Grove's TopologyLevelsUnavailable (`reconcilers.graph.topology_condition`,
pure): the graph's TopologyLevelsAvailable status and reason for each of Grove's, and when a
lost topology earns a Warning."""

from __future__ import annotations

from typing import Any

import pytest

from reconcilers.graph.topology_condition import graph_condition, lost_topology_event

Json = dict[str, Any]


def pcs(status: str | None, reason: str = "", message: str = "") -> Json:
    if status is None:
        return {"status": {}}
    return {"status": {"conditions": [{"type": "TopologyLevelsUnavailable", "status": status,
                                       "reason": reason, "message": message}]}}


@pytest.mark.parametrize(("grove", "wanted"), [
    (pcs(None), ("Unknown", "TopologyConditionPending")),
    (pcs("False", "AllClusterTopologyLevelsAvailable"), ("True", "AllTopologyLevelsAvailable")),
    (pcs("True", "ClusterTopologyLevelsUnavailable", "Unavailable topology domains: [rack]"),
     ("False", "TopologyLevelsUnavailable")),
    (pcs("Unknown", "ClusterTopologyNotFound", "ClusterTopology resource not found"),
     ("False", "TopologyDefinitionNotFound")),
    (pcs("True", "ClusterTopologyNotFound", "gone"), ("False", "TopologyDefinitionNotFound")),
    # What the original reads as no loss: scheduling not topology-aware, an unnamed topology.
    (pcs("Unknown", "TopologyAwareSchedulingDisabled"), ("True", "AllTopologyLevelsAvailable")),
    (pcs("Unknown", "TopologyNameMissing"), ("True", "AllTopologyLevelsAvailable")),
])
def test_the_graphs_condition_from_groves(grove: Json, wanted: tuple[str, str]) -> None:
    status, reason, message = graph_condition(grove)
    assert (status, reason) == wanted
    if status == "False":
        assert message == grove["status"]["conditions"][0]["message"]


def test_a_lost_topology_is_told_once_per_change() -> None:
    def status(value: str, reason: str, message: str) -> Json:
        return {"conditions": [{"type": "TopologyLevelsAvailable", "status": value,
                                "reason": reason, "message": message}]}
    ok = status("True", "AllTopologyLevelsAvailable", "fine")
    lost = status("False", "TopologyLevelsUnavailable", "Unavailable topology domains: [zone]")
    assert lost_topology_event(ok, lost) == (
        "TopologyLevelsUnavailable",
        "Topology constraints are no longer enforced: Unavailable topology domains: [zone]")
    assert lost_topology_event(None, lost) is not None
    assert lost_topology_event(lost, lost) is None
    assert lost_topology_event(lost, ok) is None
    more = status("False", "TopologyLevelsUnavailable", "Unavailable topology domains: [rack zone]")
    assert lost_topology_event(lost, more) is not None
