"""reconcilers.machinery.hub on plain objects: the view, what is sent, the status diff and the
payload it cannot send, the component index; and managedFields read in both shapes."""

from __future__ import annotations

from typing import Any

from api.conversion import convert
from controller.managed_fields import owners_of
from reconcilers.machinery import hub
from reconcilers.machinery.resources import (
    COMPONENT_DEPLOYMENTS,
    DEPLOYMENT_REQUESTS,
    GRAPH_DEPLOYMENTS,
    PODS,
)
from reconcilers.machinery.status_writer import merge_patch

Json = dict[str, Any]


def graph() -> Json:
    return {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment",
            "metadata": {"name": "g", "namespace": "t", "uid": "u", "resourceVersion": "7"},
            "spec": {"backendFramework": "vllm", "services": {
                "Frontend": {"componentType": "frontend", "replicas": 1},
                "decode": {"componentType": "worker", "replicas": 2}}}}


def test_the_view_round_trips_the_live_object() -> None:
    live = convert(graph(), "v1beta1")
    view = hub.cache_view(live)
    assert view["apiVersion"] == "nvidia.com/v1alpha1"
    assert view["spec"] == graph()["spec"]
    assert hub.to_wire(GRAPH_DEPLOYMENTS, view) == live
    # Graphs and DCDs are cached and read as the hub: a write's answer stays the hub.
    assert hub.from_wire(GRAPH_DEPLOYMENTS, live) is live
    dcd = convert(component(), "v1beta1")
    assert hub.from_wire(COMPONENT_DEPLOYMENTS, dcd) is dcd
    # DGDRs are still cached as views.
    request = {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeploymentRequest",
               "metadata": {"name": "r", "namespace": "t"}, "spec": {"model": "m"}}
    stored = convert(request, "v1beta1")
    assert hub.from_wire(DEPLOYMENT_REQUESTS, stored) == hub.cache_view(stored) == request
    # Other kinds and empty answers pass as they are.
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}
    assert hub.to_wire(PODS, pod) is pod and hub.from_wire(COMPONENT_DEPLOYMENTS, {}) == {}


def test_a_status_diff_on_the_hub() -> None:
    view = graph()
    status = {"state": "successful", "services": {"decode": {
        "componentKind": "Deployment", "componentName": "g-decode",
        "componentNames": ["g-decode"], "replicas": 2}}}
    on_hub = hub.hub_status(view, status)
    assert merge_patch(on_hub.old, on_hub.new) == {"state": "successful", "components": {
        "decode": {"componentKind": "Deployment", "componentNames": ["g-decode"],
                   "replicas": 2}}}
    assert on_hub.metadata_patch is None


def test_a_request_status_the_hub_cannot_show_is_its_payload() -> None:
    request = {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeploymentRequest",
               "metadata": {"name": "r", "namespace": "t"}, "spec": {"model": "m"}}
    status = {"state": "Deploying", "backend": "vllm",
              "deployment": {"name": "g", "namespace": "t", "created": True}}
    on_hub = hub.hub_status(request, status)
    assert on_hub.new["phase"] == "Deploying" and on_hub.metadata_patch is not None
    assert list(on_hub.metadata_patch["annotations"]) == ["nvidia.com/dgdr-status"]
    assert on_hub.metadata_patch["annotations"]["nvidia.com/dgdr-status"] is not None
    written = convert({**request, "status": status}, "v1beta1")
    assert hub.view(written)["status"] == status


def component() -> Json:
    return {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoComponentDeployment",
            "metadata": {"name": "g-decode", "namespace": "t", "uid": "c", "generation": 1},
            "spec": {"backendFramework": "vllm", "serviceName": "decode", "replicas": 2}}


def test_the_spec_view_of_a_graph_is_made_once_per_change() -> None:
    live = convert(graph(), "v1beta1")
    live["metadata"]["generation"] = 1
    live["status"] = {"state": "pending"}
    view = hub.spec_view(live)
    assert view["apiVersion"] == "nvidia.com/v1alpha1" and "status" not in view
    assert view["spec"] == graph()["spec"]
    # A status write (a new resourceVersion, the same spec) reuses it; a new spec does not.
    written = {**live, "metadata": {**live["metadata"], "resourceVersion": "8"},
               "status": {"state": "successful"}}
    assert hub.spec_view(written) is view
    edited = convert(graph(), "v1beta1")
    edited["metadata"]["generation"] = 2
    edited["spec"]["components"][1]["replicas"] = 3
    assert hub.spec_view(edited)["spec"]["services"]["decode"]["replicas"] == 3
    assert hub.spec_view(graph()) == graph()


def test_managed_fields_in_both_shapes() -> None:
    def entry(manager: str, fields: Json) -> Json:
        return {"manager": manager, "operation": "Update", "fieldsType": "FieldsV1",
                "fieldsV1": {"f:spec": fields}}

    obj = {"metadata": {"managedFields": [
        entry("alpha-writer", {"f:services": {"f:decode": {"f:replicas": {}}}}),
        entry("beta-writer", {"f:components": {'k:{"name":"decode"}': {"f:replicas": {}}}}),
        entry("other", {"f:components": {'k:{"name":"prefill"}': {"f:replicas": {}}}}),
    ]}}
    alpha = ("spec", "services", "decode", "replicas")
    beta = ("spec", "components", {"name": "decode"}, "replicas")
    assert owners_of(obj, alpha) == {"alpha-writer"}
    assert owners_of(obj, beta) == {"beta-writer"}
    assert owners_of(obj, alpha, beta) == {"alpha-writer", "beta-writer"}
