"""hack.nodesim against the real Kubernetes 1.20 control plane: simulated nodes and kubelets
as an API client, with the real scheduler, node-lifecycle, ReplicaSet, Deployment and Job
controllers doing their part.

Each test runs its own simulator (nodes with a unique prefix) in its own namespace.
"""

from __future__ import annotations

import asyncio
import json
import signal
import sys
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from controller.client import ClientConfig, KubeClient
from controller.metrics import Metrics
from controller.resource import Resource
from hack.localcluster.testing import Kubectl, eventually
from hack.nodesim import NodeSim, NodeSimConfig, PodDelays, nodes

pytestmark = pytest.mark.timeout(120, func_only=True)

Json = dict[str, Any]
ROOT = Path(__file__).resolve().parents[2]
PODS = Resource("", "v1", "pods", "Pod")


@pytest.fixture
async def sim(real_kubeconfig: Path) -> AsyncIterator[NodeSim]:
    config = NodeSimConfig(nodes=nodes(2, 4, f"ns-{uuid.uuid4().hex[:4]}"),
                           delays=PodDelays(ready_delay=1.0), lease_renew=1.0)
    async with NodeSim(real_kubeconfig, config) as running:
        yield running


@pytest.fixture
async def ns(kubectl: Kubectl) -> AsyncIterator[str]:
    name = f"nodesim-{uuid.uuid4().hex[:6]}"
    await kubectl("create", "namespace", name)
    await eventually(lambda: _has_default_account(kubectl, name), within=30, interval=0.2,
                     what="the default ServiceAccount")
    yield name
    await kubectl.run("delete", "namespace", name, "--wait=false")


async def _has_default_account(kubectl: Kubectl, ns: str) -> bool:
    return (await kubectl.run("-n", ns, "get", "serviceaccount", "default")).code == 0


async def _get(kubectl: Kubectl, *args: str) -> Json:
    return dict(json.loads(await kubectl("get", *args, "-o", "json")))


def _condition(obj: Json, ctype: str) -> str | None:
    for c in (obj.get("status") or {}).get("conditions") or ():
        if c.get("type") == ctype:
            return str(c.get("status"))
    return None


def _deployment(name: str, replicas: int, gpus: int) -> str:
    return json.dumps({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}}, "spec": {
                     "terminationGracePeriodSeconds": 10,
                     "containers": [{
                         "name": "main", "image": "example.com/engine:1",
                         "resources": {"limits": {"nvidia.com/gpu": str(gpus)}},
                         "readinessProbe": {"httpGet": {"path": "/health", "port": 9090},
                                            "initialDelaySeconds": 30}}]}}}})


async def test_nodes_register_with_gpus_and_stay_ready(kubectl: Kubectl, sim: NodeSim) -> None:
    for name in sim.node_names:
        node = await _get(kubectl, "node", name)
        assert node["status"]["allocatable"]["nvidia.com/gpu"] == "4"
        assert _condition(node, "Ready") == "True"
        lease = await _get(kubectl, "-n", "kube-node-lease", "lease", name)
        assert lease["spec"]["holderIdentity"] == name
        assert lease["metadata"]["ownerReferences"][0]["kind"] == "Node"
    # The node-lifecycle controller lifts its not-ready taint and adds none while the leases
    # are renewed (it checks every 5 s; a node is unhealthy after 40 s without renewal).
    async def untainted() -> bool:
        for name in sim.node_names:
            node = await _get(kubectl, "node", name)
            if node["spec"].get("taints"):
                return False
        return True

    await eventually(untainted, within=30, interval=0.5, what="nodes without taints")
    renewed = (await _get(kubectl, "-n", "kube-node-lease", "lease", sim.node_names[0])
               )["spec"]["renewTime"]
    await asyncio.sleep(1.5)
    assert (await _get(kubectl, "-n", "kube-node-lease", "lease", sim.node_names[0])
            )["spec"]["renewTime"] != renewed


async def test_deployment_pods_run_and_become_ready(kubectl: Kubectl, sim: NodeSim,
                                                    ns: str) -> None:
    started = time.monotonic()
    await kubectl("-n", ns, "apply", "-f", "-", stdin=_deployment("engine", 3, 2))
    await kubectl("-n", ns, "rollout", "status", "deployment/engine", "--timeout=60s")
    elapsed = time.monotonic() - started
    pods = (await _get(kubectl, "-n", ns, "pods"))["items"]
    assert len(pods) == 3
    assert {p["spec"]["nodeName"] for p in pods} <= set(sim.node_names)
    for pod in pods:
        status = pod["status"]
        assert status["phase"] == "Running"
        assert status["podIP"].startswith("127.") and status["hostIP"].startswith("127.")
        assert status["containerStatuses"][0]["ready"] is True
        assert "running" in status["containerStatuses"][0]["state"]
    # 2 GPUs each on 4-GPU nodes: the real scheduler spread them, at most two per node.
    per_node = [p["spec"]["nodeName"] for p in pods]
    assert max(per_node.count(n) for n in set(per_node)) == 2
    print(f"3 pods ready through the real Deployment controller in {elapsed:.1f}s")


async def test_pending_when_no_node_has_the_gpus(kubectl: Kubectl, sim: NodeSim,
                                                 ns: str) -> None:
    await kubectl("-n", ns, "apply", "-f", "-", stdin=_deployment("huge", 1, 8))

    async def unschedulable() -> bool:
        pods = (await _get(kubectl, "-n", ns, "pods"))["items"]
        return bool(pods) and any(c.get("reason") == "Unschedulable"
                                  for c in pods[0]["status"].get("conditions") or ())

    await eventually(unschedulable, within=30, interval=0.5, what="an unschedulable pod")


async def test_graceful_deletion_reports_not_ready_before_the_pod_goes(
        kubectl: Kubectl, sim: NodeSim, ns: str, real_kubeconfig: Path) -> None:
    await kubectl("-n", ns, "run", "web", "--image=example.com/web:1", "--restart=Never")
    await kubectl("-n", ns, "wait", "--for=condition=Ready", "pod/web", "--timeout=30s")
    # Watched from before the delete: a kubectl started after it may come too late on a
    # loaded machine, when the simulated containers stop at once.
    client = await KubeClient.connect(real_kubeconfig, ClientConfig(qps=None), Metrics())
    try:
        pod = await client.get(PODS, ns, "web")
        seen: list[tuple[str, Json]] = []

        async def watch_until_deleted() -> None:
            async with client.watch(PODS, ns, resource_version=pod["metadata"]["resourceVersion"],
                                    timeout_seconds=60, read_timeout=60,
                                    field_selector="metadata.name=web") as events:
                async for event in events:
                    seen.append((event["type"], event["object"]))
                    if event["type"] == "DELETED":
                        return
        watching = asyncio.create_task(watch_until_deleted())
        await asyncio.sleep(0.5)  # the watch request is on its way; its RV keeps what follows
        started = time.monotonic()
        await kubectl("-n", ns, "delete", "pod", "web", "--grace-period=10", "--wait=false")
        await asyncio.wait_for(watching, 30)
        # ...then the final delete with grace 0 removes it, well within the grace period.
        assert time.monotonic() - started < 10
    finally:
        await client.close()
    # The kubelet's NotReady step, with the containers terminated, came before the removal.
    not_ready = [obj for kind, obj in seen if kind == "MODIFIED"
                 and obj["metadata"].get("deletionTimestamp")
                 and _condition(obj, "Ready") == "False"]
    assert not_ready, [(kind, _condition(obj, "Ready")) for kind, obj in seen]
    state = not_ready[-1]["status"]["containerStatuses"][0]["state"]
    assert "terminated" in state, state
    assert seen[-1][0] == "DELETED"


async def test_job_pods_complete(kubectl: Kubectl, sim: NodeSim, ns: str) -> None:
    await kubectl("-n", ns, "create", "job", "once", "--image=example.com/tool:1")
    await kubectl("-n", ns, "wait", "--for=condition=Complete", "job/once", "--timeout=60s")
    pods = (await _get(kubectl, "-n", ns, "pods", "-l", "job-name=once"))["items"]
    assert [p["status"]["phase"] for p in pods] == ["Succeeded"]
    state = pods[0]["status"]["containerStatuses"][0]["state"]["terminated"]
    assert state["exitCode"] == 0 and state["reason"] == "Completed"


async def test_job_outcome_from_the_annotation(kubectl: Kubectl, sim: NodeSim, ns: str) -> None:
    job = {"apiVersion": "batch/v1", "kind": "Job",
           "metadata": {"name": "doomed",
                        "annotations": {"localcluster.dev/job-outcome": "fail"}},
           "spec": {"backoffLimit": 0, "template": {"spec": {
               "restartPolicy": "Never",
               "containers": [{"name": "main", "image": "example.com/tool:1"}]}}}}
    await kubectl("-n", ns, "apply", "-f", "-", stdin=json.dumps(job))
    await kubectl("-n", ns, "wait", "--for=condition=Failed", "job/doomed", "--timeout=60s")


async def test_dynamo_worker_pod_serves_http(kubectl: Kubectl, sim: NodeSim, ns: str) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "worker", "labels": {
               "nvidia.com/dynamo-component-type": "worker"}},
           "spec": {"containers": [{"name": "main", "image": "example.com/dynamo:1",
                                    "ports": [{"name": "system", "containerPort": 9090}]}]}}
    await kubectl("-n", ns, "apply", "-f", "-", stdin=json.dumps(pod))
    await kubectl("-n", ns, "wait", "--for=condition=Ready", "pod/worker", "--timeout=30s")
    ip = (await _get(kubectl, "-n", ns, "pod", "worker"))["status"]["podIP"]
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=5)) as session, \
            session.get(f"http://{ip}:9090/health") as response:
        assert response.status == 200
        assert (await response.json())["status"] == "healthy"


async def test_command_line_runs_until_sigterm(kubectl: Kubectl, real_kubeconfig: Path) -> None:
    prefix = f"cli-{uuid.uuid4().hex[:4]}"
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "hack.nodesim", "--kubeconfig", str(real_kubeconfig),
        "--nodes", "1", "--gpus", "2", "--name-prefix", prefix,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
        cwd=ROOT)
    try:
        assert proc.stdout is not None
        line = await asyncio.wait_for(proc.stdout.readline(), 30)
        assert line.decode().strip() == "ready 1 nodes"
        node = await _get(kubectl, "node", f"{prefix}-0")
        assert node["status"]["capacity"]["nvidia.com/gpu"] == "2"
        proc.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(proc.wait(), 30) == 0
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    # It deletes its nodes on the way out (their Leases go with them, by owner reference).
    gone = await kubectl.run("get", "node", f"{prefix}-0")
    assert gone.code != 0 and "NotFound" in gone.stderr
