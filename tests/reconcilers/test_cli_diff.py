"""`dynamo-operator diff`'s pure parts: the surge's GPUs per rolled component, and the exit
status of an error (the full command runs against the operator in e2e/test_rollout_cli.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from api.conversion import HUB, convert
from backends.hub_graph import hub_graph
from backends.worker_generation import rolled_workers
from reconcilers.operator.surge_gpus import surge


def _graph(replicas: int, annotations: dict[str, str] | None = None) -> dict[str, Any]:
    worker = {"componentType": "worker", "subComponentType": "decode", "replicas": replicas,
              "resources": {"limits": {"gpu": "4"}}}
    return {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment",
            "metadata": {"name": "g", "namespace": "ns", "annotations": annotations or {}},
            "spec": {"backendFramework": "vllm", "services": {
                "Frontend": {"componentType": "frontend"}, "Decode": worker}}}


@pytest.mark.parametrize(("replicas", "annotations", "extra"), [
    (8, {}, 2),  # 25% of 8
    (3, {}, 1),  # 25% of 3, rounded up
    (1, {}, 1),
    (4, {"nvidia.com/deployment-rolling-update-max-surge": "0",
         "nvidia.com/deployment-rolling-update-max-unavailable": "0"}, 1),  # zero/zero: one
    (2, {"nvidia.com/deployment-rolling-update-max-surge": "5"}, 2),  # never above desired
    (4, {"nvidia.com/deployment-strategy": "Recreate"}, 0),
])
def test_the_surge_takes_the_budget_of_each_rolled_component(
        replicas: int, annotations: dict[str, str], extra: int) -> None:
    obj = _graph(replicas, annotations)
    graph = hub_graph(obj)
    [decode] = surge(graph, convert(obj, HUB), rolled_workers(graph))
    assert (decode.component, decode.replicas, decode.gpus_per_replica) == ("Decode", extra, 4)
    assert decode.gpus == 4 * extra


def test_an_unreachable_cluster_exits_above_one(tmp_path: Path) -> None:
    manifest = tmp_path / "graph.yaml"
    manifest.write_text("apiVersion: nvidia.com/v1alpha1\nkind: DynamoGraphDeployment\n"
                        "metadata: {name: g}\nspec: {services: {}}\n")
    # Its own process: the command configures logging for its process (cached loggers, warnings
    # only), which in this one would silence the log lines later tests capture.
    result = subprocess.run([str(Path(sys.executable).parent / "dynamo-operator"), "diff",
                             "-f", str(manifest), "--kubeconfig",
                             str(tmp_path / "missing-kubeconfig")],
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 2, result
    assert "dynamo-operator diff:" in result.stderr
