"""`dynamo-operator` as its own process against the local API server: probes, metrics (the
controllers named by their kinds, objects counted by the state each kind reports), leader
election, a reconciled DCD, and a clean stop on SIGTERM."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
from operator_harness import eventually, install_crds, setup_client, wait_for
from prometheus_client.parser import text_string_to_metric_families

from controller.client import KubeClient
from controller.resource import LEASES
from hack.our_crds import COMPONENT_DEPLOYMENTS
from hack.processes import free_port
from reconcilers.machinery.resources import DEPLOYMENT_REQUESTS, DEPLOYMENTS

NS = "default"
#: The controllers' names: their kinds, as the original's `Named(consts.ResourceType...)`.
CONTROLLERS = ("DynamoComponentDeployment", "DynamoGraphDeployment", "DynamoModel",
               "DynamoGraphDeploymentRequest", "DynamoGraphDeploymentScalingAdapter")
#: A request's v1beta1 phases, its status label on dynamo_operator_resources_total.
PHASES = ("Pending", "Profiling", "Ready", "Deploying", "Deployed", "Failed")


@pytest.fixture
async def kube(kubeconfig: Path) -> AsyncIterator[KubeClient]:
    client = await setup_client(kubeconfig)
    await install_crds(client)
    try:
        yield client
    finally:
        await client.close()


async def http_get(port: int, path: str) -> tuple[int, str]:
    async with aiohttp.ClientSession() as session, session.get(
            f"http://127.0.0.1:{port}{path}", timeout=aiohttp.ClientTimeout(total=2)) as r:
        return r.status, await r.text()


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """The samples of a /metrics text, by name and sorted labels."""
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


async def test_operator_process(kube: KubeClient, kubeconfig: Path, tmp_path: Path) -> None:
    probes, metrics = free_port(), free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "POD_NAMESPACE")}
    log_path = tmp_path / "operator.log"
    with log_path.open("wb") as log:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "reconcilers.operator", "--kubeconfig", str(kubeconfig),
            "--leader-election-namespace", NS, "--log-format", "json",
            "--health-probe-bind-address", f"127.0.0.1:{probes}",
            "--metrics-bind-address", f"127.0.0.1:{metrics}", "--metrics-secure=false",
            stdout=asyncio.subprocess.DEVNULL, stderr=log, env=env)
    try:
        async def ready() -> bool:
            assert proc.returncode is None, "the operator exited"
            try:
                return (await http_get(probes, "/readyz"))[0] == 200
            except (aiohttp.ClientError, TimeoutError):  # a loaded machine: not yet
                return False

        await eventually(ready, within=20)
        assert await http_get(probes, "/healthz") == (200, "ok")
        assert (await http_get(probes, "/metrics"))[0] == 404
        status, text = await http_get(metrics, "/metrics")
        assert status == 200
        series = samples(text)
        for controller in CONTROLLERS:
            for result in ("success", "error", "requeue", "requeue_after"):
                assert ("controller_runtime_reconcile_total",
                        (("controller", controller), ("result", result))) in series
            assert ("controller_runtime_reconcile_errors_total",
                    (("controller", controller),)) in series
            assert ("controller_runtime_reconcile_time_seconds_count",
                    (("controller", controller),)) in series
            assert ("workqueue_depth", (("name", controller),)) in series
        assert (await http_get(metrics, "/healthz"))[0] == 404

        await kube.create(COMPONENT_DEPLOYMENTS, {
            "apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoComponentDeployment",
            "metadata": {"name": "w", "namespace": NS},
            "spec": {"componentType": "worker", "replicas": 1,
                     "extraPodSpec": {"mainContainer": {"image": "nvcr.io/x/y:1"}}}})
        await wait_for(kube, DEPLOYMENTS, NS, "w", within=20)
        await kube.create(DEPLOYMENT_REQUESTS, {
            "apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeploymentRequest",
            "metadata": {"name": "q", "namespace": NS},
            "spec": {"model": "Qwen/Qwen3-0.6B", "autoApply": False}})

        async def counted() -> bool:
            """The DCD counted once, by its Available condition; the request by its phase."""
            phase = ((await kube.get(DEPLOYMENT_REQUESTS, NS, "q")).get("status")
                     or {}).get("phase")
            series = samples((await http_get(metrics, "/metrics"))[1])

            def count(kind: str, status: str) -> float:
                return series.get(("dynamo_operator_resources_total", (
                    ("namespace", NS), ("resource_type", kind), ("status", status))), 0)

            assert sum(count("DynamoComponentDeployment", s)
                       for s in ("ready", "not_ready", "unknown")) <= 1
            return (phase in PHASES and count("DynamoGraphDeploymentRequest", phase) == 1
                    and count("DynamoComponentDeployment", "not_ready")
                    + count("DynamoComponentDeployment", "ready") == 1)

        await eventually(counted, within=20)
        requests = [labels for (name, labels) in samples((await http_get(metrics, "/metrics"))[1])
                    if name == "dynamo_operator_resources_total"
                    and ("resource_type", "DynamoGraphDeploymentRequest") in labels]
        assert len(requests) == 1, requests  # one request, one series: its phase
        lease = await kube.get(LEASES, NS, "dynamo-operator-leader")
        assert lease["spec"]["holderIdentity"]

        proc.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(proc.wait(), 15) == 0
        lease = await kube.get(LEASES, NS, "dynamo-operator-leader")
        assert not lease["spec"].get("holderIdentity")  # released for the next leader
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
        print(log_path.read_text()[-4000:])  # shown when the test fails
