"""The Kubernetes discovery identity of a graph's pods: its Role grants exactly what the
original's does (deploy/operator/internal/discovery/resource.go: endpoints and pods read,
endpointslices read, dynamoworkermetadatas written), its labels fit a label value, and the
bound ServiceAccount may do that and no more on a real API server (access reviews)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from backends.discovery_rbac import discovery_rbac_of, discovery_rules, label_value
from backends.graph_objects import discovery_rbac
from backends.hub_graph import HubGraph, hub_graph
from controller.client import ClientConfig, KubeClient
from controller.metrics import Metrics
from controller.resource import Resource
from hack.localcluster.testing import running_cluster

Json = dict[str, Any]

#: The original's discovery Role rules, in its order.
ORIGINAL_RULES = [
    {"apiGroups": [""], "resources": ["endpoints", "pods"], "verbs": ["get", "list", "watch"]},
    {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"],
     "verbs": ["get", "list", "watch"]},
    {"apiGroups": ["nvidia.com"], "resources": ["dynamoworkermetadatas"],
     "verbs": ["create", "get", "list", "watch", "update", "patch", "delete"]},
]


def _graph(name: str) -> HubGraph:
    return hub_graph({
        "apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment",
        "metadata": {"name": name, "namespace": "ns"},
        "spec": {"services": {"Frontend": {"componentType": "frontend", "replicas": 1}}}})


def _by_kind(objects: list[Json]) -> dict[str, Json]:
    return {o["kind"]: o for o in objects}


def test_the_graphs_role_grants_the_originals_rules() -> None:
    built = _by_kind(discovery_rbac(_graph("g")))
    assert sorted(built) == ["Role", "RoleBinding", "ServiceAccount"]
    role = built["Role"]
    assert role["metadata"]["name"] == "g-k8s-service-discovery-role"
    assert role["rules"] == ORIGINAL_RULES
    binding = built["RoleBinding"]
    assert binding["metadata"]["name"] == "g-k8s-service-discovery-binding"
    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                                  "name": "g-k8s-service-discovery-role"}
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "g-k8s-service-discovery",
                                    "namespace": "ns"}]
    for obj in built.values():
        assert obj["metadata"]["labels"] == {
            "app.kubernetes.io/managed-by": "dynamo-operator",
            "app.kubernetes.io/component": "rbac",
            "app.kubernetes.io/name": "g-k8s-service-discovery",
            "nvidia.com/dynamo-graph-deployment-name": "g"}


def test_a_dcd_of_its_own_gets_the_same_rules() -> None:
    assert _by_kind(discovery_rbac_of("solo", "ns"))["Role"]["rules"] == ORIGINAL_RULES


def test_rules_are_fresh_lists() -> None:
    first, second = discovery_rules(), discovery_rules()
    first[0]["verbs"].append("delete")
    assert second == ORIGINAL_RULES


def test_a_long_account_name_is_cut_to_a_label_value_with_a_hash() -> None:
    long = "a" * 60 + "-k8s-service-discovery"
    value = label_value(long)
    assert len(value) == 63 and value.startswith("a" * 54 + "-")
    assert value == label_value(long) != label_value(long + "x")
    assert label_value("b" * 63) == "b" * 63
    # sha256("b" * 64) begins a0fab137, as the original's test says.
    assert label_value("b" * 64) == "b" * 54 + "-a0fab137"
    objects = discovery_rbac_of("a" * 60, "ns")
    assert {o["metadata"]["labels"]["app.kubernetes.io/name"] for o in objects} == {value}


# --- on a real API server ------------------------------------------------------------------------

ACCOUNT = "system:serviceaccount:ns:g-k8s-service-discovery"
REVIEWS = Resource("authorization.k8s.io", "v1", "localsubjectaccessreviews",
                   "LocalSubjectAccessReview")
KINDS = {"ServiceAccount": Resource("", "v1", "serviceaccounts", "ServiceAccount"),
         "Role": Resource("rbac.authorization.k8s.io", "v1", "roles", "Role"),
         "RoleBinding": Resource("rbac.authorization.k8s.io", "v1", "rolebindings",
                                 "RoleBinding")}
NAMESPACES = Resource("", "v1", "namespaces", "Namespace", namespaced=False)


async def _allowed(client: KubeClient, group: str, resource: str, verb: str) -> bool:
    review = await client.create(REVIEWS, {
        "apiVersion": "authorization.k8s.io/v1", "kind": "LocalSubjectAccessReview",
        "metadata": {"namespace": "ns"},
        "spec": {"user": ACCOUNT, "groups": ["system:serviceaccounts",
                                             "system:serviceaccounts:ns"],
                 "resourceAttributes": {"namespace": "ns", "group": group,
                                        "resource": resource, "verb": verb}}})
    return bool(review["status"].get("allowed"))


#: (group, resource, verb) -> whether the discovery account may.
ACCESS = {
    ("nvidia.com", "dynamoworkermetadatas", "create"): True,
    ("nvidia.com", "dynamoworkermetadatas", "patch"): True,
    ("nvidia.com", "dynamoworkermetadatas", "delete"): True,
    ("nvidia.com", "dynamoworkermetadatas", "deletecollection"): False,
    ("", "pods", "watch"): True,
    ("", "pods", "delete"): False,
    ("", "endpoints", "list"): True,
    ("discovery.k8s.io", "endpointslices", "watch"): True,
    ("discovery.k8s.io", "endpointslices", "create"): False,
    ("nvidia.com", "dynamographdeployments", "get"): False,
}


async def test_the_bound_account_may_do_that_and_no_more(tmp_path: Path) -> None:
    async with running_cluster(tmp_path, authorization_mode="RBAC"):
        client = await KubeClient.connect(tmp_path / "kubeconfig", ClientConfig(qps=None),
                                          Metrics())
        try:
            await client.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace",
                                             "metadata": {"name": "ns"}})
            for obj in discovery_rbac(_graph("g")):
                await client.create(KINDS[obj["kind"]], obj)
            got = {key: await _allowed(client, *key) for key in ACCESS}
            assert got == ACCESS
        finally:
            await client.close()
