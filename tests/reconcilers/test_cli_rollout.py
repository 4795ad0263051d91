"""`dynamo-operator rollout`'s pure parts: naming the graph, and the undo patch (the commands
run against the operator in e2e/test_rollout_cli.py)."""

from __future__ import annotations

from typing import Any

import pytest

from api.conversion import HUB, SPOKE, convert
from backends.hub_graph import hub_graph
from backends.worker_generation import worker_hash
from backends.worker_revisions import worker_revisions
from hack.localcluster.patch.merge_patch import json_merge_patch
from reconcilers.operator.cli_rollout import graph_name
from reconcilers.operator.rollout_undo import UndoError, spoke_patch, undo_patch

Json = dict[str, Any]


def test_the_graph_is_named_as_kubectl_names_it() -> None:
    assert graph_name("dgd/g") == graph_name("dynamographdeployments.nvidia.com/g") == "g"
    assert graph_name("g") == "g"
    with pytest.raises(ValueError, match="not a DynamoGraphDeployment"):
        graph_name("deployment/g")


def _component(name: str, image: str, replicas: int | None = None) -> Json:
    component: Json = {"name": name, "type": "decode",
                       "podTemplate": {"spec": {"containers": [{"name": "main",
                                                                "image": image}]}}}
    if replicas is not None:
        component["replicas"] = replicas
    return component


def test_undo_writes_the_workers_back_keeping_scale_and_the_rest() -> None:
    graph = {"metadata": {"name": "g", "resourceVersion": "7"},
             "spec": {"env": [{"name": "A", "value": "2"}], "components": [
                 {"name": "Frontend", "type": "frontend"},
                 {**_component("Decode", "img:2", 5), "scalingAdapter": {}}]}}
    revision = {"metadata": {"name": "g-abc", "annotations": {
                    "kubernetes.io/change-cause": "first"}},
                "data": {"components": [_component("Decode", "img:1"),
                                        _component("Prefill", "img:1")],
                         "backendFramework": "vllm"}}
    patch = undo_patch(graph, revision)
    assert patch["metadata"] == {"resourceVersion": "7",
                                 "annotations": {"kubernetes.io/change-cause": "first"}}
    assert patch["spec"] == {"env": None, "backendFramework": "vllm", "components": [
        {"name": "Frontend", "type": "frontend"},
        {**_component("Decode", "img:1", 5), "scalingAdapter": {}},
        _component("Prefill", "img:1")]}
    with pytest.raises(UndoError):
        undo_patch(graph, {"metadata": {"name": "g-x"}, "data": {}})


def test_a_v1alpha1_graph_goes_back_in_two_steps_to_the_revision_itself() -> None:
    """As the server applies them: the `v1alpha1` patch on the view of the stored graph, then
    the `v1beta1` one; the `v1beta1` patch alone lands on a third configuration."""
    def stored(team: str, image: str, replicas: int) -> dict[str, Any]:
        return convert({
            "apiVersion": SPOKE, "kind": "DynamoGraphDeployment",
            "metadata": {"name": "g", "namespace": "ns", "resourceVersion": "7"},
            "spec": {"services": {
                "Frontend": {"componentType": "frontend"},
                "W": {"componentType": "worker", "replicas": replicas, "dynamoNamespace": "d",
                      "annotations": {"team": team},
                      "extraPodSpec": {"mainContainer": {"image": image}}}}}}, HUB)

    before = stored("a", "img:1", 2)
    [revision] = worker_revisions(hub_graph(before), [])
    assert revision["data"]["services"]["W"]["annotations"] == {"team": "a"}
    assert "replicas" not in revision["data"]["services"]["W"]
    now = stored("b", "img:2", 5)
    wanted = worker_hash(hub_graph(before))

    alone = json_merge_patch(now, undo_patch(now, revision))
    assert worker_hash(hub_graph(alone)) not in (wanted, worker_hash(hub_graph(now)))

    view = convert(now, SPOKE)
    patch = spoke_patch(view, revision)
    assert patch is not None and patch["metadata"] == {"resourceVersion": "7"}
    first = convert(json_merge_patch(view, patch), HUB)
    both = json_merge_patch(first, undo_patch(first, revision))
    assert worker_hash(hub_graph(both)) == wanted
    assert convert(both, SPOKE)["spec"]["services"]["W"]["replicas"] == 5  # scale kept
    # A graph that says nothing only v1alpha1 can: its revision holds no services.
    plain = convert({"apiVersion": SPOKE, "kind": "DynamoGraphDeployment",
                     "metadata": {"name": "g", "namespace": "ns"},
                     "spec": {"services": {"W": {"componentType": "worker"}}}}, HUB)
    assert "services" not in worker_revisions(hub_graph(plain), [])[0]["data"]
    assert spoke_patch(convert(plain, SPOKE), worker_revisions(hub_graph(plain), [])[0]) is None
