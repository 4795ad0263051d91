"""Simulated Dynamo workers: HTTP on each running worker pod's IP and system port, their
adapters, their faults, and their lifetime (pod deletion, container restart)."""

from __future__ import annotations

import asyncio
import resource
from typing import Any

import aiohttp
import pytest
from kubernetes_asyncio import client
from simulation_support import eventually, pod

from hack.localcluster.server import LocalCluster
from hack.localcluster.simulation.worker_faults import LOAD_PATH, UNLOAD_PATH, Fault
from hack.localcluster.simulation.workers import Workers, endpoint_budget

NS = "default"
SYSTEM = [{"name": "system", "containerPort": 9090}]
WORKER = {"nvidia.com/dynamo-component-type": "worker"}


def worker_pod(name: str, **labels: str) -> dict[str, Any]:
    p = pod(name, ports=SYSTEM)
    p["metadata"]["labels"] = {"app": name, **WORKER, **labels}
    return p


def workers_of(cluster: LocalCluster) -> Workers:
    assert cluster.simulation is not None
    return cluster.simulation.workers


async def serving(core: client.CoreV1Api, workers: Workers, name: str) -> str:
    """The pod's base URL once its worker endpoint is up."""
    async def up() -> str | None:
        p = await core.read_namespaced_pod(name, NS)
        if workers.endpoint(NS, name) is None or not p.status.pod_ip:
            return None
        return f"http://{p.status.pod_ip}:9090"
    return str(await eventually(up))


async def post(url: str, body: Any, seconds: float = 2.0) -> tuple[int, Any]:
    async with aiohttp.ClientSession() as session, session.post(
            url, json=body, timeout=aiohttp.ClientTimeout(total=seconds)) as r:
        return r.status, await r.json(content_type=None)


async def test_worker_answers_probes_and_loads_and_unloads_adapters(
        core: client.CoreV1Api, sim_cluster: LocalCluster) -> None:
    workers = workers_of(sim_cluster)
    await core.create_namespaced_pod(NS, worker_pod("w0"))
    url = await serving(core, workers, "w0")
    async with aiohttp.ClientSession() as session:
        for path, status in (("/health", "healthy"), ("/live", "live")):
            async with session.get(url + path) as r:
                assert r.status == 200
                assert (await r.json())["status"] == status

    load = {"lora_name": "my-lora", "source": {"uri": "s3://b/my-lora"}}
    code, answer = await post(url + LOAD_PATH, load)
    assert code == 200
    assert answer["status"] == "success"
    assert answer["message"] == "LoRA adapter 'my-lora' loaded successfully"
    assert workers.loaded(NS, "w0") == {"my-lora"}
    code, answer = await post(url + LOAD_PATH, load)
    assert (code, answer["message"]) == (200, "LoRA adapter 'my-lora' already loaded")

    code, answer = await post(url + LOAD_PATH, {"lora_name": "x"})
    assert (code, answer["status"]) == (400, "error")
    code, answer = await post(url + UNLOAD_PATH, {"lora_name": "my-lora"})
    assert (code, answer["status"]) == (200, "success")
    assert workers.loaded(NS, "w0") == set()
    code, answer = await post(url + UNLOAD_PATH, {"lora_name": "my-lora"})
    assert code == 404
    assert "not found" in answer["message"]
    assert [c.status for c in workers.calls(NS, LOAD_PATH)] == [200, 200, 400]


async def test_only_dynamo_workers_are_served(core: client.CoreV1Api,
                                              sim_cluster: LocalCluster) -> None:
    workers = workers_of(sim_cluster)
    await core.create_namespaced_pod(NS, pod("plain", ports=SYSTEM))
    await core.create_namespaced_pod(NS, worker_pod("w0"))
    await serving(core, workers, "w0")
    assert workers.endpoint(NS, "plain") is None


async def test_faults_refuse_hang_and_fail_first(core: client.CoreV1Api,
                                                 sim_cluster: LocalCluster) -> None:
    workers = workers_of(sim_cluster)
    for name, role in (("a", "x"), ("b", "y"), ("c", "y")):
        await core.create_namespaced_pod(NS, worker_pod(name, role=role))
    urls = {n: await serving(core, workers, n) for n in "abc"}
    load = {"lora_name": "l", "source": {"uri": "hf://org/l"}}

    workers.set_fault(NS, Fault.refuse(507, '{"status": "error", "message": "full"}'), name="a")
    assert await post(urls["a"] + LOAD_PATH, load) == (507, {"status": "error",
                                                             "message": "full"})
    workers.set_fault(NS, Fault.hang(), selector="role=y")
    with pytest.raises(asyncio.TimeoutError):
        await post(urls["b"] + LOAD_PATH, load, seconds=0.3)
    workers.set_fault(NS, Fault.fail_first(2), name="c")
    codes = [(await post(urls["c"] + LOAD_PATH, load))[0] for _ in range(3)]
    assert codes == [500, 500, 200]
    workers.faults.clear()
    assert (await post(urls["a"] + LOAD_PATH, load))[0] == 200
    assert workers.loaded(NS, "c") == {"l"}


async def test_endpoint_goes_with_the_pod_and_a_restart_empties_it(
        core: client.CoreV1Api, sim_cluster: LocalCluster) -> None:
    sim = sim_cluster.simulation
    assert sim is not None
    workers = sim.workers
    await core.create_namespaced_pod(NS, worker_pod("w0"))
    url = await serving(core, workers, "w0")
    await post(url + LOAD_PATH, {"lora_name": "l", "source": {"uri": "s3://b/l"}})
    first = workers.endpoint(NS, "w0")

    sim.behaviors.set_mode(NS, "crashloop", name="w0")
    await eventually(lambda: (workers.endpoint(NS, "w0") or first) is not first)
    sim.behaviors.set_mode(NS, "run", name="w0")
    url = await serving(core, workers, "w0")
    assert workers.loaded(NS, "w0") == set()

    await core.delete_namespaced_pod("w0", NS)
    await eventually(lambda: workers.endpoint(NS, "w0") is None)
    with pytest.raises(aiohttp.ClientConnectionError):
        await post(url + "/live", None)


async def test_workers_past_the_open_files_budget_run_without_an_endpoint(
        core: client.CoreV1Api, sim_cluster: LocalCluster) -> None:
    workers = workers_of(sim_cluster)
    started: list[str] = []
    workers.on_start = lambda p: started.append(p["metadata"]["name"])
    workers.budget = 1
    await core.create_namespaced_pod(NS, worker_pod("w0"))
    await serving(core, workers, "w0")
    await core.create_namespaced_pod(NS, worker_pod("w1"))

    async def ready() -> bool | None:
        p = await core.read_namespaced_pod("w1", NS)
        conditions = {c.type: c.status for c in p.status.conditions or []}
        return True if conditions.get("Ready") == "True" else None
    await eventually(ready)
    assert workers.endpoint(NS, "w1") is None, "past the budget: no socket"
    await asyncio.sleep(0.3)  # the kubelet looks at the pod again: told of its start once
    assert started == ["w0", "w1"]
    await core.delete_namespaced_pod("w0", NS)
    await eventually(lambda: workers.endpoint(NS, "w0") is None)


def test_the_budget_leaves_the_api_server_room() -> None:
    budget = endpoint_budget()
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    assert 0 < budget <= soft - min(4096, soft // 4)
