"""The rules of a v1beta1 graph's topology fields (`api.validation.topology`, through
`v1beta1_shape`): topology constraints at both levels, the KV transfer policy, and what an
update may not change; and how a stored graph that breaks them is reported."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from api.errors import InvalidObject
from api.hub_errors import validate_stored
from api.v1alpha1 import DynamoGraphDeployment
from api.validation.v1beta1_shape import v1beta1_shape

Json = dict[str, Any]


def component(name: str, kind: str = "worker", **fields: Any) -> Json:
    return {"name": name, "type": kind, "replicas": 1,
            "podTemplate": {"spec": {"containers": [{"name": "main", "image": "img:1"}]}},
            **fields}


def graph(*components: Json, **spec: Any) -> Json:
    return {"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment",
            "metadata": {"name": "g", "namespace": "ns"},
            "spec": {"backendFramework": "vllm",
                     "components": list(components) or [component("frontend", "frontend")],
                     **spec}}


def policy(**fields: Any) -> Json:
    return {"kvTransferPolicy": {"labelKey": "topology.kubernetes.io/zone", "domain": "zone",
                                 **fields}}


def errors(obj: Json, old: Json | None = None) -> list[str]:
    return [str(e) for e in v1beta1_shape(obj, old)]


def test_valid_topology_fields_pass() -> None:
    ok = graph(component("prefill", topologyConstraint={"packDomain": "host"}),
               component("decode"),
               topologyConstraint={"clusterTopologyName": "grove-topology",
                                   "packDomain": "zone"},
               experimental=policy(enforcement="preferred", preferredWeight=0.85))
    assert errors(ok) == []
    assert errors(graph(experimental={"kvTransferPolicy": {
        "clusterTopologyName": "grove-topology", "domain": "rack"}})) == []


def test_a_component_constraint_needs_the_graphs_cluster_topology() -> None:
    alone = graph(component("w", topologyConstraint={"packDomain": "rack"}))
    assert errors(alone) == [
        "spec.topologyConstraint: Required value: a graph whose components set a "
        "topologyConstraint names its ClusterTopology here (clusterTopologyName)"]


def test_without_a_graph_pack_domain_every_component_has_its_own() -> None:
    partial = graph(component("a", topologyConstraint={"packDomain": "rack"}), component("b"),
                    topologyConstraint={"clusterTopologyName": "t"})
    assert errors(partial) == [
        "spec.components[1].topologyConstraint: Required value: spec.topologyConstraint has no "
        "packDomain for the components to inherit: set one there or give every component its "
        "own"]


@pytest.mark.parametrize("domain", ["Rack", "-rack", "rack-", "a_b", ""])
def test_pack_domains_are_topology_level_names(domain: str) -> None:
    bad = graph(component("a", topologyConstraint={"packDomain": domain}),
                topologyConstraint={"clusterTopologyName": "t", "packDomain": "zone"})
    (error,) = errors(bad)
    assert error.startswith("spec.components[0].topologyConstraint.packDomain: ")


@pytest.mark.parametrize(("given", "path", "message"), [
    ({"domain": "zone"}, "spec.experimental.kvTransferPolicy",
     "exactly one of labelKey or clusterTopologyName is required"),
    ({"labelKey": "zone", "clusterTopologyName": "t", "domain": "zone"},
     "spec.experimental.kvTransferPolicy",
     "exactly one of labelKey or clusterTopologyName is required"),
    ({"labelKey": "not a key", "domain": "zone"}, "spec.experimental.kvTransferPolicy.labelKey",
     "name part must consist of alphanumeric characters"),
    ({"clusterTopologyName": "Topo", "domain": "zone"},
     "spec.experimental.kvTransferPolicy.clusterTopologyName", "RFC 1123 subdomain"),
    ({"labelKey": "zone", "domain": "Zone"}, "spec.experimental.kvTransferPolicy.domain",
     "a topology domain must consist of lower case"),
    ({"labelKey": "zone", "domain": "zone", "enforcement": "preferred"},
     "spec.experimental.kvTransferPolicy.preferredWeight",
     "Required value: is required when enforcement is preferred"),
    ({"labelKey": "zone", "domain": "zone", "preferredWeight": 0.5},
     "spec.experimental.kvTransferPolicy.preferredWeight",
     "Forbidden: may only be set when enforcement is preferred"),
    ({"labelKey": "zone", "domain": "zone", "enforcement": "preferred", "preferredWeight": 1.5},
     "spec.experimental.kvTransferPolicy.preferredWeight",
     "Invalid value: 1.5: must be between 0 and 1"),
])
def test_kv_transfer_policy_rules(given: Json, path: str, message: str) -> None:
    (error,) = errors(graph(experimental={"kvTransferPolicy": given}))
    assert error.startswith(f"{path}: ") and message in error, error


def test_an_update_may_not_change_topology_or_the_policy() -> None:
    old = graph(component("w", topologyConstraint={"packDomain": "rack"}), component("f"),
                topologyConstraint={"clusterTopologyName": "t", "packDomain": "zone"},
                experimental=policy())
    assert errors(copy.deepcopy(old), old) == []
    # Left out, enforcement is required: stored with the default, the policy is the same.
    defaulted = copy.deepcopy(old)
    defaulted["spec"]["experimental"]["kvTransferPolicy"]["enforcement"] = "required"
    assert errors(defaulted, old) == []
    changed = copy.deepcopy(old)
    changed["spec"]["topologyConstraint"]["packDomain"] = "block"
    changed["spec"]["components"][0]["topologyConstraint"] = {"packDomain": "host"}
    changed["spec"]["experimental"]["kvTransferPolicy"]["domain"] = "rack"
    assert [e.split(":")[0] for e in errors(changed, old)] == [
        "spec.topologyConstraint", "spec.components[0].topologyConstraint",
        "spec.experimental.kvTransferPolicy"]
    removed = copy.deepcopy(old)
    del removed["spec"]["experimental"]
    assert errors(removed, old) == [
        "spec.experimental.kvTransferPolicy: Forbidden: is immutable and cannot be added, "
        "removed, or changed after creation; delete and recreate the DynamoGraphDeployment to "
        "change the KV transfer policy"]
    # A component that is new has no constraint to keep.
    grown = copy.deepcopy(old)
    grown["spec"]["components"].append(component("n", topologyConstraint={"packDomain": "x"}))
    assert errors(grown, old) == []


def test_a_stored_graph_breaking_them_is_invalid_naming_the_field() -> None:
    stored = graph(component("w", topologyConstraint={"packDomain": "rack"}))
    with pytest.raises(InvalidObject) as raised:
        validate_stored(DynamoGraphDeployment, stored)
    assert [e.path for e in raised.value.errors] == ["spec.topologyConstraint"]
