"""hack.nodesim.WorkloadSim against the local API server, whose own LeaderWorkerSet and Grove
controllers are switched off: the same controllers, run as API clients, make the groups and
cliques here as they do on the real control plane
(tests/realcluster/test_workload_controllers_on_real_control_plane.py)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from hack.localcluster.server import LocalCluster
from hack.localcluster.simulation import PARTS, SimulationConfig
from hack.localcluster.testing import Kubectl, eventually, running_cluster
from hack.nodesim import WorkloadSim

Json = dict[str, Any]
ROOT = Path(__file__).resolve().parents[2]
CRD_FILES = [ROOT / "hack" / "crds" / "leaderworkerset.yaml", ROOT / "hack" / "crds" / "grove.yaml"]
POD = {"containers": [{"name": "main", "image": "example.com/engine:1"}]}


@pytest.fixture
async def cluster(tmp_path: Path) -> AsyncIterator[LocalCluster]:
    config = SimulationConfig(parts=PARTS - {"leaderworkersets", "grove"})
    async with running_cluster(tmp_path, simulation=config) as running:
        yield running


@pytest.fixture
async def kubectl(cluster: LocalCluster, tmp_path: Path) -> Kubectl:
    kubectl = Kubectl(tmp_path / "kubeconfig", tmp_path / "kubectl-cache")
    await kubectl("apply", "--server-side", *[a for p in CRD_FILES for a in ("-f", str(p))])
    await kubectl("wait", "--for=condition=Established", "--timeout=30s", "crd", "--all")
    return kubectl


async def _items(kubectl: Kubectl, kind: str, *args: str) -> list[Json]:
    return list(json.loads(await kubectl("get", kind, *args, "-o", "json"))["items"])


async def _ready_pods(kubectl: Kubectl, selector: str) -> list[Json]:
    pods = await _items(kubectl, "pods", "-l", selector)
    return [p for p in pods if any(c["type"] == "Ready" and c["status"] == "True"
                                   for c in p.get("status", {}).get("conditions") or ())]


async def test_leader_worker_sets_get_their_groups(kubectl: Kubectl, tmp_path: Path) -> None:
    lws = {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
           "metadata": {"name": "engine"},
           "spec": {"replicas": 2, "leaderWorkerTemplate": {
               "size": 3, "workerTemplate": {"spec": POD}}}}
    await kubectl("apply", "-f", "-", stdin=json.dumps(lws))
    # Off in the local cluster: nothing makes the pods.
    assert await _items(kubectl, "pods") == []
    async with WorkloadSim(tmp_path / "kubeconfig", kinds=("leaderworkersets",)):
        await eventually(lambda: _ready_pods(kubectl, "leaderworkerset.sigs.k8s.io/name=engine"),
                         within=30, interval=0.2, what="LWS pods")

        async def two_groups_ready() -> bool:
            obj = json.loads(await kubectl("get", "leaderworkersets.leaderworkerset.x-k8s.io",
                                           "engine", "-o", "json"))
            return bool(obj.get("status", {}).get("readyReplicas") == 2)
        await eventually(two_groups_ready, within=30, interval=0.2, what="2 ready groups")
    names = sorted(p["metadata"]["name"] for p in await _items(kubectl, "pods"))
    assert names == ["engine-0", "engine-0-1", "engine-0-2", "engine-1", "engine-1-1",
                     "engine-1-2"]
    service = json.loads(await kubectl("get", "service", "engine", "-o", "json"))
    assert service["spec"]["clusterIP"] == "None"


async def test_pod_clique_sets_get_their_cliques(kubectl: Kubectl, tmp_path: Path) -> None:
    pcs = {"apiVersion": "grove.io/v1alpha1", "kind": "PodCliqueSet",
           "metadata": {"name": "graph"},
           "spec": {"replicas": 1, "template": {"cliques": [
               {"name": "frontend", "spec": {"roleName": "frontend", "replicas": 2,
                                             "podSpec": POD}}]}}}
    await kubectl("apply", "-f", "-", stdin=json.dumps(pcs))
    async with WorkloadSim(tmp_path / "kubeconfig", kinds=("grove",)):
        async def available() -> bool:
            obj = json.loads(await kubectl("get", "podcliquesets.grove.io", "graph",
                                           "-o", "json"))
            return bool(obj.get("status", {}).get("availableReplicas") == 1)
        await eventually(available, within=30, interval=0.2, what="the PodCliqueSet available")
    (clique,) = await _items(kubectl, "podcliques.grove.io")
    assert clique["metadata"]["name"] == "graph-0-frontend"
    assert len(await _ready_pods(kubectl, "grove.io/podclique=graph-0-frontend")) == 2
