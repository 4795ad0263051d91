"""The DCD controller against the simulated cluster: pods are scheduled, pulled and become
ready, so readiness is what real rollouts produce."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from operator_harness import (
    CRDS,
    DCD_CRD,
    PLAIN_SETTINGS,
    Operator,
    condition,
    eventually,
    get_or_none,
    install_crds,
    running_operator,
    setup_client,
    wait_for,
)

from backends.settings import OperatorSettings
from controller.client import KubeClient
from hack.localcluster.server import LocalCluster
from hack.our_crds import COMPONENT_DEPLOYMENTS
from reconcilers.component import reconciler as component_deployment
from reconcilers.machinery.resources import DEPLOYMENTS, LEADER_WORKER_SETS

Json = dict[str, Any]
NS = "default"
LWS_CRD = Path(__file__).resolve().parents[2] / "hack" / "crds" / "leaderworkerset.yaml"


def dcd(name: str, replicas: int = 2, image: str = "nvcr.io/x/worker:1", **spec: Any) -> Json:
    return {
        "apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoComponentDeployment",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"componentType": "worker", "replicas": replicas,
                 "extraPodSpec": {"mainContainer": {"image": image, "command": ["python3"],
                                                    "args": ["-m", "dynamo.vllm"]}},
                 **spec},
    }


@pytest.fixture
def sim_kubeconfig(sim_cluster: LocalCluster, tmp_path: Path) -> Path:
    return tmp_path / "sim" / "kubeconfig"


@pytest.fixture
async def kube(sim_kubeconfig: Path) -> AsyncIterator[KubeClient]:
    client = await setup_client(sim_kubeconfig)
    await install_crds(client, DCD_CRD)
    try:
        yield client
    finally:
        await client.close()


def available_is(status: str, text: str = "") -> Any:
    def check(obj: Json) -> bool:
        c = condition(obj, "Available")
        return c.get("status") == status and text in c.get("message", "")
    return check


async def test_rollout_is_not_available_until_new_pods_are(
        kube: KubeClient, sim_kubeconfig: Path, sim_cluster: LocalCluster) -> None:
    sim = sim_cluster.simulation
    assert sim is not None
    async with running_operator(sim_kubeconfig, [component_deployment.register]):
        await kube.create(COMPONENT_DEPLOYMENTS, dcd("w"))
        obj = await wait_for(kube, COMPONENT_DEPLOYMENTS, NS, "w", available_is("True"))
        assert obj["status"]["service"]["availableReplicas"] == 2
        # New pods never get ready: the rollout stalls while the old pods still cover the
        # count (the original operator called that available).
        sim.behaviors.set_ready(NS, False, selector="rev=2")
        await kube.patch(COMPONENT_DEPLOYMENTS, NS, "w", {"spec": {
            "extraPodMetadata": {"labels": {"rev": "2"}},
            "extraPodSpec": {"mainContainer": {"image": "nvcr.io/x/worker:2"}}}})
        # Which step of the rollout the message names is progress, not written each time
        # (issue 20): the condition turns False once, for the new generation.
        obj = await wait_for(kube, COMPONENT_DEPLOYMENTS, NS, "w", available_is("False"))
        assert condition(obj, "Available")["reason"] == "DeploymentNotReady"
        await asyncio.sleep(0.5)
        obj = await kube.get(COMPONENT_DEPLOYMENTS, NS, "w")
        assert condition(obj, "Available")["status"] == "False"
        dep = await kube.get(DEPLOYMENTS, NS, "w")
        assert dep["status"]["availableReplicas"] >= 1
        sim.behaviors.set_ready(NS, True, selector="rev=2")
        await wait_for(kube, COMPONENT_DEPLOYMENTS, NS, "w", available_is("True"))


async def test_image_pull_failure_is_reported(
        kube: KubeClient, sim_kubeconfig: Path, sim_cluster: LocalCluster) -> None:
    assert sim_cluster.simulation is not None
    sim_cluster.simulation.behaviors.set_mode(NS, "image-pull-failure",
                                              selector="nvidia.com/selector=w")
    async with running_operator(sim_kubeconfig, [component_deployment.register]):
        await kube.create(COMPONENT_DEPLOYMENTS, dcd("w", replicas=1))
        pulling = available_is("False", "ImagePull")
        # Until the Deployment's status catches up with its first spec, the message says so.
        obj = await wait_for(kube, COMPONENT_DEPLOYMENTS, NS, "w", lambda o: pulling(o) and (
            "0/1 replicas available" in condition(o, "Available")["message"]))
        assert "ErrImagePull" in condition(obj, "Available")["message"]


async def test_multinode_runs_on_leader_worker_sets(
        kube: KubeClient, sim_kubeconfig: Path) -> None:
    await kube.create(CRDS, yaml.safe_load(LWS_CRD.read_text()))

    async def served() -> bool:
        try:
            await kube.list(LEADER_WORKER_SETS, NS)
        except Exception:
            return False
        return True

    await eventually(served)
    settings = OperatorSettings(lws_enabled=True, volcano_enabled=False)
    assert settings != PLAIN_SETTINGS
    spec = {"multinode": {"nodeCount": 2}, "resources": {"limits": {"gpu": "1"}}}
    async with running_operator(sim_kubeconfig, [component_deployment.register],
                                settings) as op:
        assert isinstance(op, Operator)
        await kube.create(COMPONENT_DEPLOYMENTS, dcd("mn", **spec))
        lws = await wait_for(kube, LEADER_WORKER_SETS, NS, "mn-0")
        assert lws["spec"]["leaderWorkerTemplate"]["size"] == 2
        assert lws["spec"]["replicas"] == 2  # one LeaderWorkerSet holds every replica
        obj = await wait_for(kube, COMPONENT_DEPLOYMENTS, NS, "mn", available_is("True"),
                             within=20)
        assert condition(obj, "Available")["reason"] == "LeaderWorkerSetReady"
        assert obj["status"]["service"]["componentKind"] == "LeaderWorkerSet"
        assert obj["status"]["service"]["componentNames"] == ["mn-0"]
        assert obj["status"]["service"]["readyReplicas"] == 2
        assert await get_or_none(kube, DEPLOYMENTS, NS, "mn") is None
        assert await get_or_none(kube, LEADER_WORKER_SETS, NS, "mn-1") is None
        # Scale down: the LeaderWorkerSet's replicas follow.
        await kube.patch(COMPONENT_DEPLOYMENTS, NS, "mn", {"spec": {"replicas": 1}})
        await wait_for(kube, LEADER_WORKER_SETS, NS, "mn-0",
                       lambda o: o["spec"]["replicas"] == 1)
        await wait_for(kube, COMPONENT_DEPLOYMENTS, NS, "mn", lambda o: available_is("True")(o)
                       and o["status"]["service"]["readyReplicas"] == 1, within=20)
