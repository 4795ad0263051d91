"""kubectl logs, exec, port-forward and wait against the simulated kubelets, as on a cluster."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import AsyncIterator

import aiohttp
import pytest

from hack.localcluster.server import LocalCluster
from hack.localcluster.testing import Kubectl, eventually, kubectl_binary

pytestmark = pytest.mark.kubectl

WORKER = """
apiVersion: v1
kind: Pod
metadata:
  name: engine
  labels: {nvidia.com/dynamo-component-type: worker}
spec:
  containers:
    - name: main
      image: nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.8.0
      ports: [{name: system, containerPort: 9090}]
    - name: sidecar
      image: busybox:1.36
"""


@contextlib.asynccontextmanager
async def kubectl_process(k: Kubectl, *args: str, env: dict[str, str] | None = None
                          ) -> AsyncIterator[asyncio.subprocess.Process]:
    """A long-running kubectl (port-forward, logs -f), stopped at the end."""
    env = {**os.environ, "KUBECONFIG": str(k.kubeconfig), "KUBECACHEDIR": str(k.cache_dir),
           "HOME": str(k.cache_dir), **(env or {})}
    proc = await asyncio.create_subprocess_exec(
        kubectl_binary(), *args, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, stdin=asyncio.subprocess.DEVNULL, env=env)
    try:
        yield proc
    finally:
        if proc.returncode is None:
            proc.terminate()
        await proc.wait()


async def test_logs_exec_and_port_forward(sim_kubectl: Kubectl,
                                          sim_cluster: LocalCluster) -> None:
    await sim_kubectl("apply", "-f", "-", stdin=WORKER)
    await sim_kubectl("wait", "--for=condition=Ready", "pod/engine", "--timeout=20s")

    # logs: the default container is the first (kubectl says so), -c picks another.
    result = await sim_kubectl.run("logs", "engine")
    assert result.code == 0, result.stderr
    assert 'Defaulted container "main" out of: main, sidecar' in result.stderr
    assert "System status server listening on 0.0.0.0:9090" in result.stdout
    out = await sim_kubectl("logs", "engine", "-c", "sidecar", "--timestamps", "--tail=1")
    assert out.count("\n") == 1 and "container 'sidecar' started" in out
    assert out.split(" ", 1)[0].endswith("Z")
    result = await sim_kubectl.run("logs", "engine", "--previous")
    assert result.code == 1
    assert result.stderr.strip().splitlines()[-1] == (
        'Error from server (BadRequest): previous terminated container "main" in pod "engine" '
        "not found")

    # exec: fails as a runtime that cannot exec fails, never a 404.
    result = await sim_kubectl.run("exec", "engine", "-c", "main", "--", "ls")
    assert result.code != 0
    assert "unable to upgrade connection" in result.stderr
    assert "cannot exec" in result.stderr and "NotFound" not in result.stderr

    # port-forward: reaches the worker's system port, with SPDY tunneled in a websocket (what
    # kubectl tries first) and with a plain SPDY upgrade (its fallback); the worker's log
    # shows what it did.
    for websockets in ("true", "false"):
        async with kubectl_process(sim_kubectl, "port-forward", "pod/engine", ":9090", env={
                "KUBECTL_PORT_FORWARD_WEBSOCKETS": websockets}) as pf:
            assert pf.stdout is not None
            line = (await asyncio.wait_for(pf.stdout.readline(), 20)).decode()
            assert line.startswith("Forwarding from 127.0.0.1:") and line.strip().endswith(
                "-> 9090"), line
            port = int(line.split("127.0.0.1:")[1].split()[0])
            async with aiohttp.ClientSession() as http:
                async with http.get(f"http://127.0.0.1:{port}/health") as response:
                    assert response.status == 200
                    assert (await response.json())["status"] == "healthy"
                async with http.post(f"http://127.0.0.1:{port}/engine/v1/load_lora", json={
                        "lora_name": "ada", "source": {"uri": "s3://bucket/ada"}}) as response:
                    assert response.status == 200, await response.text()
    assert sim_cluster.simulation is not None
    assert sim_cluster.simulation.workers.loaded("default", "engine") == {"ada"}
    out = await sim_kubectl("logs", "engine", "-c", "main", "--tail=2")
    assert out == ("INFO dynamo_llm::lora: LoRA adapter 'ada' loaded successfully from "
                   "s3://bucket/ada\n"
                   "INFO dynamo_llm::lora: LoRA adapter 'ada' already loaded from "
                   "s3://bucket/ada\n")


async def test_port_forward_to_a_closed_port_reports_the_runtime_error(
        sim_kubectl: Kubectl) -> None:
    await sim_kubectl("apply", "-f", "-", stdin=WORKER)
    await sim_kubectl("wait", "--for=condition=Ready", "pod/engine", "--timeout=20s")
    async with kubectl_process(sim_kubectl, "port-forward", "pod/engine", ":8000") as pf:
        assert pf.stdout is not None and pf.stderr is not None
        line = (await asyncio.wait_for(pf.stdout.readline(), 20)).decode()
        port = int(line.split("127.0.0.1:")[1].split()[0])
        with contextlib.suppress(OSError):
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"GET / HTTP/1.0\r\n\r\n")
            await writer.drain()
            assert await asyncio.wait_for(reader.read(), 20) == b""
            writer.close()
        await asyncio.wait_for(pf.wait(), 20)  # kubectl gives up on the broken forward
        err = (await pf.stderr.read()).decode()
    assert "error forwarding port 8000 to pod engine_default" in err
    assert "connection refused" in err


async def test_logs_follow_until_the_pod_stops(sim_kubectl: Kubectl,
                                               sim_cluster: LocalCluster) -> None:
    await sim_kubectl("apply", "-f", "-", stdin=WORKER)
    await sim_kubectl("wait", "--for=condition=Ready", "pod/engine", "--timeout=20s")
    assert sim_cluster.simulation is not None
    endpoint = sim_cluster.simulation.workers.endpoint("default", "engine")
    assert endpoint is not None
    async with kubectl_process(sim_kubectl, "logs", "-f", "engine", "-c", "main") as follower:
        assert follower.stdout is not None
        stdout = follower.stdout

        async def line_with(text: str) -> str:
            while True:
                line = (await asyncio.wait_for(stdout.readline(), 20)).decode()
                if text in line or not line:
                    return line

        await line_with("System status server listening")
        endpoint.log("INFO a line written while kubectl follows")
        assert "while kubectl follows" in await line_with("while kubectl follows")
        await sim_kubectl("delete", "pod", "engine", "--wait=false")
        assert "SIGTERM" in await line_with("SIGTERM")
        assert await asyncio.wait_for(follower.wait(), 20) == 0  # the run ended: so does -f


async def test_wait_for_not_ready_while_a_pod_is_deleted(sim_kubectl: Kubectl) -> None:
    await sim_kubectl("apply", "-f", "-", stdin=WORKER)
    await sim_kubectl("wait", "--for=condition=Ready", "pod/engine", "--timeout=20s")
    async with kubectl_process(sim_kubectl, "wait", "--for=condition=Ready=false",
                               "pod/engine", "--timeout=20s") as waiter:
        await asyncio.sleep(1.0)  # kubectl is watching
        await sim_kubectl("delete", "pod", "engine", "--wait=false")
        assert waiter.stdout is not None
        out = (await asyncio.wait_for(waiter.stdout.read(), 20)).decode()
        assert await waiter.wait() == 0
    assert out.strip() == "pod/engine condition met"

    async def gone() -> bool:
        result = await sim_kubectl.run("get", "pod", "engine", "-o", "json")
        return result.code == 1 and "NotFound" in result.stderr

    await eventually(gone, within=10)


async def test_get_pod_json_after_stop_shows_terminated_containers(
        sim_kubectl: Kubectl, sim_cluster: LocalCluster) -> None:
    assert sim_cluster.simulation is not None
    await sim_kubectl("apply", "-f", "-", stdin=WORKER.replace(
        "  labels:", "  annotations: {localcluster.dev/stop: ignore-sigterm}\n  labels:"))
    await sim_kubectl("wait", "--for=condition=Ready", "pod/engine", "--timeout=20s")
    await sim_kubectl("delete", "pod", "engine", "--wait=false", "--grace-period=2")
    out = await sim_kubectl("wait", "--for=condition=Ready=false", "pod/engine",
                            "--timeout=20s")
    assert out.strip() == "pod/engine condition met"
    pod = json.loads((await sim_kubectl.run("get", "pod", "engine", "-o", "json")).stdout
                     or "{}")
    if pod:  # still there for the removal step
        states = [s["state"] for s in pod["status"]["containerStatuses"]]
        assert all(s["terminated"]["exitCode"] == 137 for s in states)
