"""The graph benchmark's floor plan: the operator's recorded requests become, per graph, the
writes it made (bodies as sent, owner uids by reference, failed writes left out), split where
the final status begins, and the lists and watches it asked for."""

from __future__ import annotations

import json

from hack.bench.graphs.floor import resource_of
from hack.bench.graphs.recording import Recorded, plan

NS = "/apis/nvidia.com/v1beta1/namespaces/ns"


def rec(verb: str, resource: str, method: str, path: str, body: object = None,
        code: int = 201, query: list[tuple[str, str]] | None = None) -> Recorded:
    raw = json.dumps(body).encode() if body is not None else None
    return Recorded(0.0, verb, resource, method, path, query or [], "application/json", raw,
                    code)


def owned(name: str, kind: str, owner: str, uid: str) -> dict[str, object]:
    return {"kind": kind, "metadata": {"name": name, "ownerReferences": [
        {"kind": "DynamoGraphDeployment" if kind == "DynamoComponentDeployment"
         else "DynamoComponentDeployment", "name": owner, "uid": uid}]}}


def test_writes_are_planned_per_graph_in_order_and_final_statuses_wait() -> None:
    records = [
        rec("list", "deployments.apps", "GET", "/apis/apps/v1/deployments", code=200,
            query=[("limit", "500")]),
        rec("watch", "deployments.apps", "GET", "/apis/apps/v1/deployments", code=0,
            query=[("watch", "true"), ("resourceVersion", "7"), ("timeoutSeconds", "400")]),
        rec("create", "dynamocomponentdeployments.nvidia.com", "POST",
            f"{NS}/dynamocomponentdeployments",
            owned("g0-frontend", "DynamoComponentDeployment", "g0", "old-g0")),
        rec("create", "deployments.apps", "POST", "/apis/apps/v1/namespaces/ns/deployments",
            owned("g0-frontend", "Deployment", "g0-frontend", "old-dcd")),
        rec("create", "deployments.apps", "POST", "/apis/apps/v1/namespaces/ns/deployments",
            owned("g0-frontend", "Deployment", "g0-frontend", "old-dcd"), code=409),
        rec("patch", "dynamographdeployments.nvidia.com/status", "PATCH",
            f"{NS}/dynamographdeployments/g0/status",
            {"metadata": {"resourceVersion": "12"}, "status": {"state": "pending"}}, code=200),
        rec("patch", "dynamocomponentdeployments.nvidia.com/status", "PATCH",
            f"{NS}/dynamocomponentdeployments/g0-frontend/status",
            {"status": {"conditions": [{"type": "Available", "status": "True"}]}}, code=200),
        rec("create", "deployments.apps", "POST", "/apis/apps/v1/namespaces/ns/deployments",
            owned("g0-decode", "Deployment", "g0-frontend", "old-dcd")),
        rec("patch", "dynamographdeployments.nvidia.com/status", "PATCH",
            f"{NS}/dynamographdeployments/g0/status",
            {"metadata": {"resourceVersion": "15"}, "status": {"state": "successful"}},
            code=200),
        rec("create", "events", "POST", "/api/v1/namespaces/ns/events",
            {"involvedObject": {"name": "g0", "uid": "old-g0"}, "reason": "Ready"}),
        rec("create", "leases.coordination.k8s.io", "POST",
            "/apis/coordination.k8s.io/v1/namespaces/ns/leases", {"metadata": {"name": "l"}}),
    ]
    uids = {"old-g0": ("DynamoGraphDeployment", "g0"),
            "old-dcd": ("DynamoComponentDeployment", "g0-frontend")}
    made = plan(records, ["g0", "g1"], uids, json.loads)

    [watch] = made["watches"]
    assert watch["limit"] == "500" and watch["lists"] == 1 and watch["watches"] == 1
    assert ["resourceVersion", "7"] not in watch["watch_query"]
    steps = made["graphs"]["g0"]
    assert [(s["resource"], s["wait_for"]) for s in steps["steps"]] == [
        ("dynamocomponentdeployments.nvidia.com", []), ("deployments.apps", []),
        ("dynamographdeployments.nvidia.com/status", []),
        # A DCD's final status waits for its own Deployment, the graph's for all so far; a
        # Deployment the operator created after a final status is not held back by it.
        ("dynamocomponentdeployments.nvidia.com/status", ["g0-frontend"]),
        ("deployments.apps", []),
        ("dynamographdeployments.nvidia.com/status", ["g0-frontend", "g0-decode"]),
        ("events", [])]
    assert steps["deployments"] == ["g0-frontend", "g0-decode"]
    assert made["graphs"]["g1"] == {"steps": [], "deployments": []}
    # Owners by reference, to be filled in on the new cluster; no stale precondition.
    dcd, deployment, pending = steps["steps"][:3]
    assert dcd["uids"] == [[["metadata", "ownerReferences", 0, "uid"],
                            "DynamoGraphDeployment", "g0"]]
    assert deployment["uids"][0][1:] == ["DynamoComponentDeployment", "g0-frontend"]
    assert "resourceVersion" not in pending["body"]["metadata"]
    assert dcd["decode"] and not pending["decode"] and not steps["steps"][-1]["decode"]
    # The failed create is not planned; the lease belongs to no graph.
    assert made["writes"]["create deployments.apps"] == 2
    assert [g["resource"] for g in made["global"]] == ["leases.coordination.k8s.io"]


def test_collection_paths_name_their_resource_and_namespace() -> None:
    resource, namespace = resource_of("/apis/apps/v1/namespaces/ns/deployments")
    assert (resource.group, resource.version, resource.plural, namespace) == (
        "apps", "v1", "deployments", "ns")
    resource, namespace = resource_of("/api/v1/pods")
    assert (resource.group, resource.plural, resource.namespaced, namespace) == (
        "", "pods", False, None)
