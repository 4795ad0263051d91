"""nodesim's kubelets play the DGDR profiler: a profiling Job's pod runs, its output ConfigMap is
written before the pod ends, and the Job completes (feasible SLA) or fails (infeasible), against
the local API server with its own nodes and kubelets off."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from hack.localcluster.simulation import PARTS, SimulationConfig
from hack.localcluster.testing import Kubectl, running_cluster
from hack.nodesim import NodeSim, NodeSimConfig, PodDelays, nodes

Json = dict[str, Any]


@pytest.fixture
async def kubectl(tmp_path: Path) -> AsyncIterator[Kubectl]:
    config = SimulationConfig(parts=PARTS - {"nodes", "kubelet"}, nodes=[])
    async with running_cluster(tmp_path, simulation=config), NodeSim(
            tmp_path / "kubeconfig", NodeSimConfig(nodes=nodes(1, 8), delays=PodDelays(
                pod_start=0.05, ready_delay=0.05))):
        yield Kubectl(tmp_path / "kubeconfig", tmp_path / "kubectl-cache")


def profiling_job(dgdr: str, ttft: float) -> Json:
    config = {"sla": {"ttft": ttft, "itl": 10}, "deployment": {"model": "Qwen/Qwen3-0.6B"},
              "engine": {"backend": "vllm"}}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": f"profile-{dgdr}"},
            "spec": {"backoffLimit": 0, "template": {"spec": {
                "restartPolicy": "Never",
                "containers": [{"name": "profiler", "image": "example.com/profiler:1",
                                "args": ["--profile-config", yaml.safe_dump(config)],
                                "env": [{"name": "DGDR_NAME", "value": dgdr}]}]}}}}


async def test_a_feasible_profile_writes_its_output_and_completes(kubectl: Kubectl) -> None:
    await kubectl("apply", "-f", "-", stdin=json.dumps(profiling_job("fast", 500)))
    await kubectl("wait", "--for=condition=Complete", "job/profile-fast", "--timeout=30s")
    output = json.loads(await kubectl("get", "configmap", "dgdr-output-fast", "-o", "json"))
    assert yaml.safe_load(output["data"]["profiler_status.yaml"])["status"] == "success"
    graph = next(yaml.safe_load_all(output["data"]["config_with_planner.yaml"]))
    assert graph["kind"] == "DynamoGraphDeployment"


async def test_an_infeasible_profile_fails_with_its_reason(kubectl: Kubectl) -> None:
    await kubectl("apply", "-f", "-", stdin=json.dumps(profiling_job("slow", 1)))
    await kubectl("wait", "--for=condition=Failed", "job/profile-slow", "--timeout=30s")
    output = json.loads(await kubectl("get", "configmap", "dgdr-output-slow", "-o", "json"))
    status = yaml.safe_load(output["data"]["profiler_status.yaml"])
    assert status["status"] == "failed" and status["message"]
