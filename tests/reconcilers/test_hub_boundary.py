"""reconcilers.machinery.hub on plain objects: the view, what is sent, the status diff and the
payload it cannot send, the component index; and managedFields read in both shapes."""

from __future__ import annotations

from typing import Any

from api.conversion import convert
from controller.managed_fields import owners_of
from reconcilers.machinery import hub
from reconcilers.machinery.resources import COMPONENT_DEPLOYMENTS, GRAPH_DEPLOYMENTS, PODS
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
    assert hub.from_wire(GRAPH_DEPLOYMENTS, live) == view
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


def test_the_component_index_of_a_service() -> None:
    assert hub.component_index(graph(), "decode") == 1
    assert hub.component_index(graph(), "prefill") is None


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
