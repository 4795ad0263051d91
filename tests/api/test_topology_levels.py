"""A graph's topology fields against the ClusterTopologies they name
(`api.validation.topology_levels`): which are read, and what is said of what was read."""

from __future__ import annotations

from typing import Any

from api.validation.topology_levels import (
    ClusterTopologyRead,
    topologies_to_read,
    topology_level_errors,
)

Json = dict[str, Any]
FABRIC = ClusterTopologyRead(("zone", "rack", "host"))


def graph(*constraints: Json | None, generation: int | None = 1,
          annotations: dict[str, str] | None = None, **spec: Any) -> Json:
    metadata: Json = {"name": "g", "annotations": annotations or {}}
    if generation is not None:
        metadata["generation"] = generation
    components = [{"name": f"c{i}", "type": "worker",
                   **({"topologyConstraint": c} if c is not None else {})}
                  for i, c in enumerate(constraints or (None,))]
    return {"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment",
            "metadata": metadata, "spec": {"components": components, **spec}}


def packed(domain: str | None = "rack", name: str = "fabric") -> Json:
    return {"clusterTopologyName": name, **({"packDomain": domain} if domain else {})}


def policy(name: str = "fabric", domain: str = "rack") -> Json:
    return {"kvTransferPolicy": {"clusterTopologyName": name, "domain": domain}}


def errors(obj: Json, read: dict[str, ClusterTopologyRead], grove: bool = True) -> list[str]:
    return [str(e) for e in topology_level_errors(obj, read, grove_enabled=grove)]


def test_only_a_graph_grove_runs_is_judged_at_its_creation() -> None:
    both = graph(topologyConstraint=packed(name="a"), experimental=policy("b"))
    assert topologies_to_read(both, grove_enabled=True) == ("a", "b")
    assert topologies_to_read(graph(topologyConstraint=packed(), experimental=policy()),
                              grove_enabled=True) == ("fabric",)
    assert topologies_to_read(graph(topologyConstraint=packed(), generation=None),
                              grove_enabled=True) == ("fabric",)
    assert topologies_to_read(graph(topologyConstraint=packed(), generation=2),
                              grove_enabled=True) == ()
    assert topologies_to_read(both, grove_enabled=False) == ()
    opted_out = graph(topologyConstraint=packed(), annotations={
        "nvidia.com/enable-grove": "false"})
    assert topologies_to_read(opted_out, grove_enabled=True) == ()
    assert topologies_to_read(graph(), grove_enabled=True) == ()


def test_constraints_that_break_their_own_rules_are_not_read() -> None:
    """No packDomain to inherit and a component without one: said by the object's rules."""
    lacking = graph({"packDomain": "host"}, None, topologyConstraint=packed(None))
    assert topologies_to_read(lacking, grove_enabled=True) == ()


def test_pack_domains_are_levels_and_components_no_broader() -> None:
    ok = graph({"packDomain": "host"}, None, topologyConstraint=packed("rack"))
    assert errors(ok, {"fabric": FABRIC}) == []
    bad = graph({"packDomain": "zone"}, {"packDomain": "block"},
                topologyConstraint=packed("datacenter"))
    assert errors(bad, {"fabric": FABRIC}) == [
        'spec.topologyConstraint.packDomain: Invalid value: "datacenter": does not exist in '
        'ClusterTopology "fabric"; available domains: [host rack zone]',
        'spec.components[1].topologyConstraint.packDomain: Invalid value: "block": does not '
        'exist in ClusterTopology "fabric"; available domains: [host rack zone]']
    wide = graph({"packDomain": "zone"}, topologyConstraint=packed("host"))
    assert errors(wide, {"fabric": FABRIC}) == [
        'spec.components[0].topologyConstraint.packDomain: Invalid value: "zone": must be '
        'equal to or narrower than the deployment-level domain "host"']
    # Not read (an update, a test without a cluster): nothing said.
    assert errors(bad, {}) == []


def test_a_topology_missing_or_unreadable_is_said() -> None:
    obj = graph(topologyConstraint=packed(), experimental=policy("other"))
    assert errors(obj, {"fabric": ClusterTopologyRead(None),
                        "other": ClusterTopologyRead(None, failure="etcdserver: timeout")}) == [
        'spec.topologyConstraint.clusterTopologyName: Invalid value: "fabric": references a '
        "ClusterTopology resource that was not found",
        'spec.experimental.kvTransferPolicy.clusterTopologyName: Invalid value: "other": '
        "failed to read ClusterTopology: etcdserver: timeout"]


def test_a_policy_domain_is_a_level_and_needs_the_grove_pathway() -> None:
    assert errors(graph(experimental=policy(domain="block")), {"fabric": FABRIC}) == [
        'spec.experimental.kvTransferPolicy.domain: Invalid value: "block": does not exist in '
        'ClusterTopology "fabric"; available domains: [host rack zone]']
    assert errors(graph(experimental=policy()), {}, grove=False) == [
        "spec.experimental.kvTransferPolicy.clusterTopologyName: Forbidden: requires the Grove "
        "pathway, but Grove is disabled in the operator configuration"]
    labelled = graph(experimental={"kvTransferPolicy": {
        "labelKey": "topology.kubernetes.io/zone", "domain": "zone"}})
    assert errors(labelled, {}, grove=False) == []
