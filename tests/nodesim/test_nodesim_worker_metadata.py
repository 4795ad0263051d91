"""hack.nodesim's workers publish their DynamoWorkerMetadata through the API, as the in-process
kubelet's do: created when the worker runs, owned by its pod, removed with it by the local
server's garbage collector."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import yaml

from controller.client import ClientConfig, KubeClient
from controller.metrics import Metrics
from hack.localcluster.server import LocalCluster
from hack.localcluster.simulation import PARTS, SimulationConfig
from hack.localcluster.testing import Kubectl, eventually, running_cluster
from hack.nodesim import NodeSim, NodeSimConfig, PodDelays, nodes
from hack.our_crds import install_our_crds

POD = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "w0", "labels": {"nvidia.com/dynamo-component-type": "worker"}},
    "spec": {"containers": [{
        "name": "main", "image": "example.com/vllm:1",
        "ports": [{"name": "system", "containerPort": 9090}],
        "env": [{"name": "DYN_DISCOVERY_BACKEND", "value": "kubernetes"},
                {"name": "DYN_NAMESPACE", "value": "default-g"}],
        "args": ["python3 -m dynamo.vllm --model Qwen/Qwen3-0.6B"]}]},
}


@pytest.fixture
async def cluster(tmp_path: Path) -> AsyncIterator[LocalCluster]:
    config = SimulationConfig(parts=PARTS - {"nodes", "kubelet"}, nodes=[])
    async with running_cluster(tmp_path, simulation=config) as running:
        yield running


async def test_a_nodesim_worker_publishes_and_loses_its_metadata_with_its_pod(
        cluster: LocalCluster, tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kube = await KubeClient.connect(kubeconfig, ClientConfig(qps=None), Metrics())
    try:
        await install_our_crds(kube, names=["dynamoworkermetadatas.nvidia.com"])
    finally:
        await kube.close()
    kubectl = Kubectl(kubeconfig, tmp_path / "kubectl-cache")
    config = NodeSimConfig(nodes=nodes(1, 4), delays=PodDelays(
        pod_start=0.05, ready_delay=0.1, container_stop=0.05, pod_termination=0.05))
    async with NodeSim(kubeconfig, config):
        await kubectl("apply", "-f", "-", stdin=yaml.safe_dump(POD))
        await kubectl("wait", "--for=condition=Ready", "pod/w0", "--timeout=30s")
        uid = (await kubectl("get", "pod", "w0", "-o", "jsonpath={.metadata.uid}")).strip()

        async def published() -> dict[str, object] | None:
            out = await kubectl("get", "dwm", "-o", "json")
            items = json.loads(out)["items"]
            return items[0] if items else None
        dwm = await eventually(published)
        assert dwm["metadata"]["name"] == "w0"
        assert [r["uid"] for r in dwm["metadata"]["ownerReferences"]] == [uid]
        [card] = dwm["spec"]["data"]["model_cards"].values()
        assert card["card_json"] == {"display_name": "Qwen/Qwen3-0.6B"}

        await kubectl("delete", "pod", "w0", "--wait=true", "--timeout=30s")

        async def gone() -> bool:
            return not json.loads(await kubectl("get", "dwm", "-o", "json"))["items"]
        await eventually(gone)
