"""What planner, EPP and TRT-LLM multinode pods need besides their workloads: the shared
accounts and their RBAC, the EPP's ConfigMap and InferencePool, the MPI Secret's copy; made by
the graph, or by a DCD of its own."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
import yaml
from backend_cases import SETTINGS, component, dcd_children, graph, hub_dcd, hub_of

from backends.children import Write
from backends.errors import GenerationError
from backends.graph_children import graph_children
from backends.mpi_secret import DIGEST_LABEL, component_needs_mpi_secret, mpi_services

Json = dict[str, Any]
EPP_CONFIG = {"plugins": [{"type": "dyn-kv", "parameters": {"blockSize": 16}}],
              "schedulingProfiles": [{"name": "default", "plugins": [{"pluginRef": "dyn-kv"}]}]}
WITH_POOL = replace(SETTINGS, inference_pool_enabled=True)


def children_of(dgd: Any, settings: Any, **options: Any) -> Any:
    """`graph_children` of a graph written in `v1alpha1` (taken to the hub)."""
    return graph_children(hub_of(dgd), settings, **options)


def objects(desired: Any) -> dict[tuple[str, str], Any]:
    return {(c.obj["kind"], c.name): c for c in desired.children}


def test_a_planner_gets_its_account_bound_to_a_role_of_the_namespace() -> None:
    children = objects(children_of(graph({"P": {"componentType": "planner"}}), SETTINGS))
    binding = children[("RoleBinding", "planner-serviceaccount-binding")]
    assert binding.write is Write.UNOWNED and binding.immutable == ("roleRef",)
    assert binding.obj["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                                      "name": "planner-role"}
    assert binding.obj["subjects"] == [{"kind": "ServiceAccount", "name": "planner-serviceaccount",
                                        "namespace": "team"}]
    role = children[("Role", "planner-role")].obj
    assert {"apiGroups": ["nvidia.com"],
            "resources": ["dynamographdeploymentscalingadapters/scale"],
            "verbs": ["patch"]} in role["rules"]
    assert children[("ServiceAccount", "planner-serviceaccount")].write is Write.UNOWNED


def test_a_planner_cluster_role_replaces_the_role_for_every_graph() -> None:
    desired = children_of(graph({"W": {"componentType": "worker"}}), SETTINGS,
                             planner_cluster_role="dynamo-planner")
    children = objects(desired)
    assert ("Role", "planner-role") not in children
    assert children[("RoleBinding", "planner-serviceaccount-binding")].obj["roleRef"]["kind"] == \
        "ClusterRole"


def test_an_epp_cluster_role_replaces_the_epp_role() -> None:
    services = {"Epp": {"componentType": "epp", "eppConfig": {"config": {}}},
                "W": {"componentType": "worker"}}
    desired = children_of(graph(services), WITH_POOL,
                             epp_cluster_role="dynamo-operator-epp")
    children = objects(desired)
    assert ("Role", "epp-role") not in children
    binding = children[("RoleBinding", "epp-serviceaccount-binding")]
    assert binding.write is Write.UNOWNED
    assert binding.obj["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io",
                                      "kind": "ClusterRole", "name": "dynamo-operator-epp"}
    assert binding.obj["subjects"] == [{"kind": "ServiceAccount", "name": "epp-serviceaccount",
                                        "namespace": graph(services).metadata["namespace"]}]


def test_a_graph_without_planner_or_epp_has_no_shared_accounts() -> None:
    kinds = {k for k, _ in objects(children_of(graph({"W": {"componentType": "worker"}}),
                                                  SETTINGS))}
    assert "ServiceAccount" in kinds  # discovery's own
    names = {n for _, n in objects(children_of(graph({"W": {}}), SETTINGS))}
    assert not names & {"planner-serviceaccount", "epp-serviceaccount"}


def _epp_graph(config: Json) -> Any:
    return graph({"Epp": {"componentType": "epp", "eppConfig": config},
                  "Worker": {"componentType": "worker"}}, name="g")


def test_an_epp_gets_its_config_map_pool_and_rbac() -> None:
    children = objects(children_of(_epp_graph({"config": EPP_CONFIG}), WITH_POOL))
    config_map = children[("ConfigMap", "g-epp-config")]
    assert config_map.write is Write.OWNED
    document = yaml.safe_load(config_map.obj["data"]["epp-config-dynamo.yaml"])
    assert document == {**EPP_CONFIG, "apiVersion": "inference.networking.x-k8s.io/v1alpha1",
                        "kind": "EndpointPickerConfig"}
    assert config_map.obj["metadata"]["labels"] == {
        "nvidia.com/dynamo-graph-deployment-name": "g", "nvidia.com/dynamo-component": "Epp",
        "nvidia.com/dynamo-component-type": "epp"}
    pool = children[("InferencePool", "g-pool")].obj
    assert pool["apiVersion"] == "inference.networking.k8s.io/v1"
    assert pool["spec"] == {
        "targetPorts": [{"number": 8000}],
        "selector": {"matchLabels": {"nvidia.com/dynamo-component-type": "worker",
                                     "nvidia.com/dynamo-namespace": "team-g"}},
        "endpointPickerRef": {"kind": "Service", "name": "g-epp", "port": {"number": 9002}},
    }
    role = children[("Role", "epp-role")].obj
    assert {"apiGroups": ["inference.networking.k8s.io"],
            "resources": ["inferencepools", "inferencepools/status"],
            "verbs": ["get", "list", "watch"]} in role["rules"]
    binding = children[("RoleBinding", "epp-serviceaccount-binding")].obj
    assert binding["subjects"][0]["name"] == "epp-serviceaccount"


def test_an_epp_with_its_own_config_map_gets_none_made() -> None:
    ref = {"configMapRef": {"name": "mine", "key": "epp.yaml"}}
    children = objects(children_of(_epp_graph(ref), WITH_POOL))
    assert not [k for k in children if k[0] == "ConfigMap"]
    assert ("InferencePool", "g-pool") in children


def test_an_epp_without_the_inference_pool_api_says_what_to_install() -> None:
    with pytest.raises(GenerationError, match=r"EPP service\(s\) Epp need the InferencePool API "
                                              r"\(inference.networking.k8s.io\)"):
        children_of(_epp_graph({"config": EPP_CONFIG}), SETTINGS)


def _trtllm(nodes: int) -> Any:
    return graph({"W": {"componentType": "worker", "multinode": {"nodeCount": nodes}}},
                 backend="trtllm")


def test_the_mpi_secret_is_copied_with_a_digest_and_no_owner() -> None:
    assert mpi_services(hub_of(_trtllm(2))) == ["W"]
    assert mpi_services(hub_of(graph({"W": {"multinode": {"nodeCount": 2}}},
                                     backend="vllm"))) == []
    source = {"metadata": {"name": "mpi-run-ssh-secret", "namespace": "dynamo-system",
                           "uid": "u", "annotations": {"a": "b"}},
              "type": "Opaque", "data": {"private.key": "a2V5"}}
    copy = objects(children_of(_trtllm(2), SETTINGS, mpi_secret=source))[
        ("Secret", "mpi-run-ssh-secret")]
    assert copy.write is Write.UNOWNED and copy.drift_label == DIGEST_LABEL
    assert copy.obj["metadata"]["namespace"] == "team"
    assert copy.obj["data"] == source["data"] and copy.obj["type"] == "Opaque"
    assert set(copy.obj["metadata"]) == {"name", "namespace", "labels"}
    changed = {**source, "data": {"private.key": "b3RoZXI="}}
    recopied = objects(children_of(_trtllm(2), SETTINGS, mpi_secret=changed))[
        ("Secret", "mpi-run-ssh-secret")]
    assert recopied.obj["metadata"]["labels"][DIGEST_LABEL] != \
        copy.obj["metadata"]["labels"][DIGEST_LABEL]


def test_a_standalone_epp_dcd_gets_what_its_graph_would_make() -> None:
    dcd = component({"componentType": "epp", "backendFramework": "vllm",
                     "eppConfig": {"config": EPP_CONFIG}}, name="picker")
    children = objects(dcd_children(dcd, WITH_POOL))
    assert ("ConfigMap", "picker-epp-config") in children
    pool = children[("InferencePool", "picker-pool")].obj
    assert pool["spec"]["endpointPickerRef"]["name"] == "picker"
    assert pool["spec"]["selector"]["matchLabels"]["nvidia.com/dynamo-namespace"] == "team-picker"
    assert children[("ServiceAccount", "epp-serviceaccount")].write is Write.UNOWNED
    with pytest.raises(GenerationError, match="InferencePool API"):
        dcd_children(dcd, SETTINGS)


def test_a_standalone_trtllm_multinode_dcd_copies_the_mpi_secret() -> None:
    dcd = component({"componentType": "worker", "backendFramework": "trtllm",
                     "multinode": {"nodeCount": 2}})
    assert component_needs_mpi_secret(hub_dcd(dcd))
    source = {"metadata": {"name": "mpi-run-ssh-secret", "namespace": "keys"},
              "data": {"private.key": "a2V5"}}
    copy = objects(dcd_children(dcd, SETTINGS, mpi_secret=source))[
        ("Secret", "mpi-run-ssh-secret")]
    assert copy.drift_label == DIGEST_LABEL and copy.obj["metadata"]["namespace"] == "team"
    graph_dcd = component({"componentType": "worker", "backendFramework": "trtllm",
                           "multinode": {"nodeCount": 2},
                           "labels": {"nvidia.com/dynamo-graph-deployment-name": "g"}})
    assert not component_needs_mpi_secret(hub_dcd(graph_dcd))
