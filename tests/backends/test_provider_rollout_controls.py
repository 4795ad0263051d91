"""Rollout controls on the paths whose own controller replaces pods: a multinode DCD's
LeaderWorkerSets take the component's surge and unavailable annotations as their
`rolloutStrategy`; a Grove graph's PodCliqueSet takes `nvidia.com/grove-update-strategy`.
Without the annotations nothing changes (an operator upgrade rewrites nothing)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from backends.errors import GenerationError
from backends.render import render
from backends.settings import OperatorSettings

MANIFESTS = Path(__file__).resolve().parents[1] / "api" / "manifests"


def _manifest(name: str) -> dict[str, Any]:
    docs = [d for d in yaml.safe_load_all((MANIFESTS / name).read_text()) if d]
    return copy.deepcopy(next(d for d in docs if d["kind"] == "DynamoGraphDeployment"))


def _annotate_multinode(graph: dict[str, Any], annotations: dict[str, str]) -> None:
    for service in graph["spec"]["services"].values():
        if (service.get("multinode") or {}).get("nodeCount", 1) > 1:
            service["annotations"] = dict(annotations)


def _of_kind(objects: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objects if o["kind"] == kind]


def test_leader_worker_sets_take_the_components_rolling_budgets() -> None:
    graph = _manifest("dgd-sglang-multinode.yaml")
    plain = _of_kind(render(graph), "LeaderWorkerSet")
    assert plain and all("rolloutStrategy" not in o["spec"] for o in plain)
    _annotate_multinode(graph, {
        "nvidia.com/deployment-rolling-update-max-surge": "1",
        "nvidia.com/deployment-rolling-update-max-unavailable": "0"})
    sets = _of_kind(render(graph), "LeaderWorkerSet")
    assert sets and all(o["spec"]["rolloutStrategy"] == {
        "type": "RollingUpdate",
        "rollingUpdateConfiguration": {"maxSurge": 1, "maxUnavailable": 0}} for o in sets)


def test_recreate_is_not_a_leader_worker_set_strategy() -> None:
    graph = _manifest("dgd-sglang-multinode.yaml")
    _annotate_multinode(graph, {
        "nvidia.com/deployment-strategy": "Recreate",
        "nvidia.com/deployment-rolling-update-max-surge": "1"})
    sets = _of_kind(render(graph), "LeaderWorkerSet")
    assert sets and all("rolloutStrategy" not in o["spec"] for o in sets)


@pytest.mark.parametrize("strategy", ["Coherent", "RollingRecreate", "OnDelete"])
def test_the_grove_update_strategy_reaches_the_pod_clique_set(strategy: str) -> None:
    settings = OperatorSettings(grove_enabled=True)
    graph = _manifest("dgd-vllm-disagg.yaml")
    pcs = _of_kind(render(graph, settings), "PodCliqueSet")[0]
    assert "updateStrategy" not in pcs["spec"]
    graph.setdefault("metadata", {})["annotations"] = {
        "nvidia.com/grove-update-strategy": strategy}
    pcs = _of_kind(render(graph, settings), "PodCliqueSet")[0]
    assert pcs["spec"]["updateStrategy"] == {"type": strategy}


def test_an_unknown_grove_update_strategy_is_refused_by_name() -> None:
    graph = _manifest("dgd-vllm-disagg.yaml")
    graph.setdefault("metadata", {})["annotations"] = {
        "nvidia.com/grove-update-strategy": "rollingrecreate"}
    with pytest.raises(GenerationError, match=r"grove-update-strategy.*Coherent"):
        render(graph, OperatorSettings(grove_enabled=True))
