"""The manager process surface: /healthz, /readyz and /metrics on one server, and a SIGTERM
that stops a leader cleanly, releasing its lease, within a bounded time."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from pathlib import Path

import aiohttp
from harness import eventually, manager, running, widget

from controller.client import KubeClient
from controller.leader_election import LeaderElectionConfig
from controller.reconcile import Request
from controller.resource import LEASES, Resource
from hack.localcluster.server import LocalCluster

REQUIRED_METRICS = (
    "controller_runtime_reconcile_total", "controller_runtime_reconcile_errors_total",
    "controller_runtime_reconcile_time_seconds", "controller_runtime_max_concurrent_reconciles",
    "controller_runtime_active_workers", "workqueue_depth", "workqueue_adds_total",
    "workqueue_queue_duration_seconds", "workqueue_work_duration_seconds",
    "workqueue_retries_total", "workqueue_unfinished_work_seconds",
    "workqueue_longest_running_processor_seconds", "leader_election_master_status",
    "rest_client_requests_total",
)


async def test_health_ready_and_metrics(cluster: LocalCluster, kubeconfig: Path,
                                        client: KubeClient, widgets: Resource) -> None:
    mgr = await manager(kubeconfig, leader_election=LeaderElectionConfig(
        name="probe-lock", namespace="default", identity="probe", lease_duration=1.0,
        renew_deadline=0.6, retry_period=0.1))
    seen: list[Request] = []

    async def reconcile(request: Request) -> None:
        seen.append(request)

    mgr.add_controller("probed", reconcile, for_=widgets)
    await client.create(widgets, widget("m"))
    async with running(mgr), aiohttp.ClientSession() as http:
        await eventually(lambda: mgr.status_port != 0)
        base = f"http://127.0.0.1:{mgr.status_port}"

        async def status(path: str) -> int:
            async with http.get(base + path, timeout=aiohttp.ClientTimeout(total=2)) as r:
                return r.status

        assert await status("/healthz") == 200
        await eventually(lambda: mgr.cache.has_synced)
        assert await status("/readyz") == 200
        await eventually(lambda: len(seen) == 1)
        async with http.get(base + "/metrics", timeout=aiohttp.ClientTimeout(total=2)) as r:
            assert r.status == 200
            text = await r.text()
        for name in REQUIRED_METRICS:
            assert f"\n{name}" in text, name
        assert 'controller_runtime_reconcile_total{controller="probed",result="success"} 1.0' \
            in text
        assert 'leader_election_master_status{name="probe-lock"} 1.0' in text
        port = cluster.port
        assert f'rest_client_requests_total{{code="200",host="127.0.0.1:{port}",method="GET"}}' \
            in text


async def test_not_ready_until_caches_sync(kubeconfig: Path, widgets: Resource) -> None:
    mgr = await manager(kubeconfig)
    missing = Resource("test.example.com", "v1", "nothings", "Nothing")  # never served
    mgr.cache.informer(missing)
    async with running(mgr), aiohttp.ClientSession() as http:
        await eventually(lambda: mgr.status_port != 0)
        await asyncio.sleep(0.2)
        url = f"http://127.0.0.1:{mgr.status_port}"
        async with http.get(url + "/readyz") as r:
            assert r.status == 500
        async with http.get(url + "/healthz") as r:
            assert r.status == 200


async def test_sigterm_stops_cleanly_and_releases_the_lease(kubeconfig: Path,
                                                            client: KubeClient) -> None:
    for i in range(4):
        await client.create(Resource("", "v1", "configmaps", "ConfigMap"),
                            {"metadata": {"name": f"cm{i}", "namespace": "default"}})
    script = Path(__file__).with_name("manager_process.py")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(script), str(kubeconfig), "sigterm-holder",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"})
    output: list[str] = []
    try:
        assert proc.stdout is not None
        async with asyncio.timeout(15):
            while True:
                line = (await proc.stdout.readline()).decode()
                assert line, "the manager exited early:\n" + "".join(output)
                output.append(line)
                if line.startswith("leading"):
                    break
        await asyncio.sleep(0.1)  # reconciles are in flight
        sent = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        rest, _ = await asyncio.wait_for(proc.communicate(), 10)
        took = time.monotonic() - sent
        output.append(rest.decode())
        assert proc.returncode == 0, "".join(output)
        assert "stopped" in rest.decode()
        assert took < 3.0, took  # graceful timeout (2 s) bounds it; in-flight work is 0.5 s
        lease = await client.get(LEASES, "default", "sigterm-lock")
        assert not lease["spec"].get("holderIdentity")
        assert lease["spec"]["leaseDurationSeconds"] == 1
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
