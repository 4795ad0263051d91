"""`dynamo-operator rollout`'s pure parts: naming the graph, and the undo patch (the commands
run against the operator in e2e/test_rollout_cli.py)."""

from __future__ import annotations

from typing import Any

import pytest

from reconcilers.operator.cli_rollout import graph_name
from reconcilers.operator.rollout_undo import UndoError, undo_patch

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
