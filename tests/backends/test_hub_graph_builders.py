"""The builders moved to `v1beta1` (`backends.hub_graph`, `backends.hub_component`): a graph
or DCD written in `v1alpha1` gets from its hub form what its `v1alpha1` fields say (the claims
of `pvcs`, the adapters of `scalingAdapter.enabled`, the planner's and the EPP's objects by
`componentType`, a DCD's discovery backend and Dynamo namespace), and a change made in
`v1beta1` is what they then build."""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any

from backend_cases import SETTINGS

from api.conversion import convert
from api.load import load_valid
from api.v1alpha1 import DynamoComponentDeployment, DynamoGraphDeployment
from backends.children import ObjectRef, Write
from backends.component_workload import component_children
from backends.graph_children import graph_children
from backends.hub_component import hub_component
from backends.hub_graph import hub_graph
from backends.mpi_secret import component_needs_mpi_secret

Json = dict[str, Any]
WITH_POOL = replace(SETTINGS, inference_pool_enabled=True, lws_enabled=True)
GRAPH: Json = {
    "apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment",
    "metadata": {"name": "g", "namespace": "team", "uid": "u", "generation": 1},
    "spec": {
        "backendFramework": "trtllm",
        "pvcs": [{"name": "models", "create": True, "size": "10Gi", "storageClass": "fast",
                  "volumeAccessMode": "ReadWriteMany"},
                 {"name": "shared"}],
        "services": {
            "Planner": {"componentType": "planner", "labels": {"team": "a"}},
            "Prefill": {"componentType": "worker", "subComponentType": "prefill",
                        "scalingAdapter": {"enabled": True}, "replicas": 3,
                        "multinode": {"nodeCount": 2}},
            "Decode": {"componentType": "worker", "scalingAdapter": {"enabled": False}},
            "Epp": {"componentType": "epp", "eppConfig": {"config": {"plugins": []}}},
        },
    },
}


def desired(obj: Json) -> tuple[dict[tuple[str, str], Any], tuple[ObjectRef, ...]]:
    """The graph's children other than its DCDs, by (kind, name), and the claims it needs
    (the graph validated first, as the reconciler does)."""
    view = obj if obj["apiVersion"] == "nvidia.com/v1alpha1" else convert(obj, "v1alpha1")
    load_valid(DynamoGraphDeployment, view)
    children = graph_children(hub_graph(obj), WITH_POOL)
    return ({(c.obj["kind"], c.name): c for c in children.children
             if c.obj["kind"] != "DynamoComponentDeployment"}, children.required)


def test_the_hub_form_builds_what_the_v1alpha1_fields_say() -> None:
    stored = convert(GRAPH, "v1beta1")
    assert "pvcs" not in stored["spec"]
    children, required = desired(stored)
    assert (children, required) == desired(GRAPH)
    claim = children[("PersistentVolumeClaim", "models")]
    assert claim.write is Write.CREATE_ONLY
    assert claim.obj["spec"] == {"resources": {"requests": {"storage": "10Gi"}},
                                 "accessModes": ["ReadWriteMany"],
                                 "storageClassName": "fast"}
    assert ("PersistentVolumeClaim", "shared") not in children
    assert required == (ObjectRef("v1", "PersistentVolumeClaim", "shared"),)
    adapters = [n for k, n in children if k == "DynamoGraphDeploymentScalingAdapter"]
    assert adapters == ["g-prefill"]
    assert children[("DynamoGraphDeploymentScalingAdapter", "g-prefill")].obj["spec"][
        "replicas"] == 3
    assert ("ServiceAccount", "planner-serviceaccount") in children
    assert ("ConfigMap", "g-epp-config") in children
    assert ("InferencePool", "g-pool") in children


def test_a_change_made_in_v1beta1_is_what_is_built() -> None:
    stored = convert(GRAPH, "v1beta1")
    edited = copy.deepcopy(stored)
    for component in edited["spec"]["components"]:
        component.pop("scalingAdapter", None)
        if component["name"] == "Decode":
            component["scalingAdapter"] = {}
            component["replicas"] = 2
        if component["name"] == "Planner":
            component["type"] = "worker"
    children, _ = desired(edited)
    adapters = {n: c.obj["spec"]["replicas"] for (k, n), c in children.items()
                if k == "DynamoGraphDeploymentScalingAdapter"}
    assert adapters == {"g-decode": 2}
    assert ("ServiceAccount", "planner-serviceaccount") not in children
    # The claims live in the payload only: untouched by the edit.
    assert ("PersistentVolumeClaim", "models") in children


DCD: Json = {
    "apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoComponentDeployment",
    "metadata": {"name": "picker", "namespace": "team"},
    "spec": {"componentType": "epp", "backendFramework": "vllm",
             "annotations": {"nvidia.com/dynamo-discovery-backend": "kubernetes"},
             "dynamoNamespace": "legacy", "eppConfig": {"config": {"plugins": []}}},
}


def standalone(obj: Json) -> dict[tuple[str, str], Any]:
    """A DCD's children (the DCD validated first, as the reconciler does)."""
    view = obj if obj["apiVersion"] == "nvidia.com/v1alpha1" else convert(obj, "v1alpha1")
    load_valid(DynamoComponentDeployment, view)
    desired = component_children(hub_component(obj),
                                 replace(WITH_POOL, discovery_backend="etcd"))
    return {(c.obj["kind"], c.name): c.obj for c in desired.children}


def test_a_dcd_of_its_own_gets_from_its_hub_form_what_its_v1alpha1_fields_say() -> None:
    stored = convert(DCD, "v1beta1")
    assert "annotations" not in stored["spec"] and "dynamoNamespace" not in stored["spec"]
    children = standalone(stored)
    assert children == standalone(DCD)
    assert ("ServiceAccount", "picker-k8s-service-discovery") in children  # its annotation
    pool = children[("InferencePool", "picker-pool")]
    assert pool["spec"]["selector"]["matchLabels"]["nvidia.com/dynamo-namespace"] == "legacy"
    assert component_needs_mpi_secret(hub_component(stored)) is False
