"""Issue 29 item 4 rendered (the builders, pure): a graph's `topologyConstraint` as Grove's
topology packing, and `experimental.kvTransferPolicy` as the workers' env, Downward API volume
and topology source annotation, on the DCD path and on Grove.

One fixture per field (`fixtures/topology/`, written in v1beta1), each rendered from its
v1beta1 form and from its v1alpha1 form (what a v1alpha1 reader gets of it: the v1beta1-only
fields in the conversion payload, a component's topologyConstraint as its own field) to the
same objects; the large ones against golden files (`golden/topology/`)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from backend_cases import SETTINGS, check_golden, containers, env

from api.conversion import SPOKE, convert
from api.hub_errors import validate_stored
from api.v1alpha1 import DynamoGraphDeployment
from backends.component_deployment import component_deployment
from backends.component_workload import component_objects
from backends.errors import GenerationError
from backends.grove import grove_objects
from backends.hub_component import hub_component
from backends.hub_graph import hub_graph
from backends.kv_transfer_policy import policy_env
from backends.settings import OperatorSettings

Json = dict[str, Any]
FIXTURES = Path(__file__).parent / "fixtures" / "topology"
GROVE = dataclasses.replace(SETTINGS, grove_enabled=True)
LEVELS = ("region", "zone", "block", "rack", "host")
TOPOLOGIES = {"grove-topology": LEVELS}
POLICY_ENV = ("DYN_KV_TRANSFER_DOMAIN", "DYN_KV_TRANSFER_ENFORCEMENT",
              "DYN_KV_TRANSFER_PREFERRED_WEIGHT", "DYN_TOPOLOGY_ENABLED",
              "DYN_TOPOLOGY_MOUNT_PATH")
MOUNT = {"name": "topology-labels", "mountPath": "/etc/dynamo/topology", "readOnly": True}


def fixture(name: str) -> Json:
    obj: Json = yaml.safe_load((FIXTURES / f"{name}.yaml").read_text())
    validate_stored(DynamoGraphDeployment, obj)
    return obj


def versions(name: str) -> dict[str, Json]:
    """The fixture as written (v1beta1) and as a v1alpha1 reader has it."""
    beta = fixture(name)
    alpha = convert(beta, SPOKE)
    assert alpha["apiVersion"] == "nvidia.com/v1alpha1"
    return {"v1beta1": beta, "v1alpha1": alpha}


def grove(obj: Json, topologies: Any = TOPOLOGIES) -> list[Json]:
    return grove_objects(hub_graph(obj), GROVE, topologies=topologies)


def pcs_template(obj: Json) -> Json:
    template: Json = grove(obj)[0]["spec"]["template"]
    return template


def cliques(obj: Json) -> dict[str, Json]:
    return {c["name"]: c for c in pcs_template(obj)["cliques"]}


def dcd_path(obj: Json, service: str) -> list[Json]:
    dcd = component_deployment(hub_graph(obj), service, SETTINGS)
    return [dcd, *component_objects(hub_component(dcd), SETTINGS)]


def pod_spec_of(objects: list[Json]) -> Json:
    deployment = next(o for o in objects if o["kind"] == "Deployment")
    spec: Json = deployment["spec"]["template"]
    return spec


def policy_of(main: Json) -> dict[str, Any]:
    return {k: v for k, v in env(main).items() if k in POLICY_ENV}


@pytest.mark.parametrize("version", ["v1beta1", "v1alpha1"])
def test_a_graph_pack_domain_packs_the_podcliqueset(version: str) -> None:
    obj = versions("graph-pack-domain")[version]
    template = pcs_template(obj)
    assert template["topologyConstraint"] == {"topologyName": "grove-topology",
                                              "packDomain": "zone"}
    # The components inherit it through Grove: none of their own.
    assert all("topologyConstraint" not in c for c in template["cliques"])
    assert grove(obj) == grove(versions("graph-pack-domain")["v1beta1"])


@pytest.mark.parametrize("version", ["v1beta1", "v1alpha1"])
def test_component_pack_domains_go_where_their_replicas_are(version: str) -> None:
    obj = versions("component-pack-domains")[version]
    template = pcs_template(obj)
    assert "topologyConstraint" not in template
    found = cliques(obj)
    assert found["frontend"]["topologyConstraint"] == {"topologyName": "grove-topology",
                                                       "packDomain": "zone"}
    assert found["prefill"]["topologyConstraint"] == {"topologyName": "grove-topology",
                                                      "packDomain": "host"}
    # Multinode: the scaling group is packed, each of its pods is not.
    (group,) = template["podCliqueScalingGroups"]
    assert group["name"] == "decode"
    assert group["topologyConstraint"] == {"topologyName": "grove-topology",
                                           "packDomain": "rack"}
    assert all("topologyConstraint" not in found[n] for n in group["cliqueNames"])
    check_golden("topology/grove-component-pack-domains", grove(obj))


def test_topology_constraints_are_not_rendered_on_the_dcd_path() -> None:
    for name in ("graph-pack-domain", "component-pack-domains"):
        for obj in versions(name).values():
            rendered = json.dumps(dcd_path(obj, "Frontend"))
            assert "grove-topology" not in rendered


@pytest.mark.parametrize("version", ["v1beta1", "v1alpha1"])
def test_a_label_key_policy_reaches_the_workers_on_both_paths(version: str) -> None:
    obj = versions("kv-transfer-label-key")[version]
    wanted = {"DYN_KV_TRANSFER_DOMAIN": "zone", "DYN_KV_TRANSFER_ENFORCEMENT": "preferred",
              "DYN_KV_TRANSFER_PREFERRED_WEIGHT": "0.85", "DYN_TOPOLOGY_ENABLED": "true",
              "DYN_TOPOLOGY_MOUNT_PATH": "/etc/dynamo/topology"}
    label = "metadata.labels['topology.kubernetes.io/zone']"
    volume = {"name": "topology-labels", "downwardAPI": {"items": [
        {"path": "zone", "fieldRef": {"fieldPath": label}}]}}
    source = {"nvidia.com/topology-label-key": "topology.kubernetes.io/zone"}
    found = cliques(obj)
    for service in ("prefill", "decode"):
        # Grove: the clique's pods.
        pod = found[service]["spec"]["podSpec"]
        main = containers(pod)["main"]
        assert policy_of(main) == wanted  # the user's DYN_KV_TRANSFER_DOMAIN is the policy's
        assert MOUNT in main["volumeMounts"]
        assert volume in pod["volumes"]
        assert found[service]["annotations"].items() >= source.items()
        # DCD path: the DCD carries it, its Deployment's pods have it.
        template = pod_spec_of(dcd_path(obj, service))
        main = containers(template["spec"])["main"]
        assert policy_of(main) == wanted
        assert MOUNT in main["volumeMounts"]
        assert _sorted(volume) in [_sorted(v) for v in template["spec"]["volumes"]]
        assert template["metadata"]["annotations"].items() >= source.items()
    # The frontend reads the policy from the workers, not from its own pod.
    frontend = found["frontend"]
    assert policy_of(containers(frontend["spec"]["podSpec"])["main"]) == {}
    assert "nvidia.com/topology-label-key" not in frontend.get("annotations", {})
    assert "topology-labels" not in json.dumps(dcd_path(obj, "Frontend"))
    check_golden("topology/dcd-kv-transfer-label-key", dcd_path(obj, "prefill"))


@pytest.mark.parametrize("version", ["v1beta1", "v1alpha1"])
def test_a_cluster_topology_policy_projects_every_level_on_grove(version: str) -> None:
    obj = versions("kv-transfer-cluster-topology")[version]
    worker = cliques(obj)["decode"]
    pod = worker["spec"]["podSpec"]
    assert policy_of(containers(pod)["main"]) == {
        "DYN_KV_TRANSFER_DOMAIN": "rack", "DYN_KV_TRANSFER_ENFORCEMENT": "required",
        "DYN_TOPOLOGY_ENABLED": "true", "DYN_TOPOLOGY_MOUNT_PATH": "/etc/dynamo/topology"}
    (volume,) = [v for v in pod["volumes"] if v["name"] == "topology-labels"]
    assert volume["downwardAPI"]["items"] == [
        {"path": level,
         "fieldRef": {"fieldPath": f"metadata.labels['nvidia.com/dynamo-topology.{level}']"}}
        for level in LEVELS]
    assert worker["annotations"]["nvidia.com/topology-cluster-topology-name"] == \
        "grove-topology"
    check_golden("topology/grove-kv-transfer-cluster-topology", grove(obj))


def test_a_cluster_topology_policy_needs_the_topology_its_domain_and_grove() -> None:
    obj = fixture("kv-transfer-cluster-topology")
    with pytest.raises(GenerationError, match='"grove-topology": no ClusterTopology'):
        grove(obj, topologies={})
    with pytest.raises(GenerationError, match='domain "rack" is not a level'):
        grove(obj, topologies={"grove-topology": ("zone", "host")})
    with pytest.raises(GenerationError, match="requires the Grove pathway: Grove is disabled"):
        component_deployment(hub_graph(obj), "decode", SETTINGS)
    obj["metadata"]["annotations"] = {"nvidia.com/enable-grove": "false"}
    with pytest.raises(GenerationError, match=r'"nvidia\.com/enable-grove" annotation'):
        component_deployment(hub_graph(obj), "decode", GROVE)


def test_graphs_without_these_fields_carry_nothing_of_them() -> None:
    for name in ("kv-transfer-label-key", "graph-pack-domain"):
        obj = fixture(name)
        obj["spec"].pop("experimental", None)
        obj["spec"].pop("topologyConstraint", None)
        for service in [c["name"] for c in obj["spec"]["components"]]:
            rendered = json.dumps([grove(obj), dcd_path(obj, service)])
            for word in ("topology-labels", "DYN_TOPOLOGY", "nvidia.com/topology-",
                         "topologyConstraint"):
                assert word not in rendered


@pytest.mark.parametrize(("weight", "shown"), [
    (0.85, "0.85"), (0.1, "0.1"), (1, "1"), (0, "0"), (0.5, "0.5"), (1e-05, "0.00001"),
    (0.3333333333, "0.33333334")])
def test_the_preferred_weight_prints_as_a_float32(weight: float, shown: str) -> None:
    from api.v1beta1 import KvTransferPolicy
    policy = KvTransferPolicy(label_key="k", domain="zone", enforcement="preferred",
                              preferred_weight=weight)
    assert {e["name"]: e["value"] for e in policy_env(policy)}[
        "DYN_KV_TRANSFER_PREFERRED_WEIGHT"] == shown


def _sorted(value: Any) -> Any:
    return json.loads(json.dumps(value, sort_keys=True))


def test_the_settings_of_these_renders() -> None:
    """Grove's render takes the operator's Grove path; the DCD path's does not."""
    assert isinstance(GROVE, OperatorSettings) and GROVE.grove_enabled
    assert not SETTINGS.grove_enabled
