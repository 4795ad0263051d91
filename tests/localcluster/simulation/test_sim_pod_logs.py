"""pods/log from the simulated kubelets: what containers printed, picked as the kubelet picks."""

from __future__ import annotations

import asyncio
import json

import pytest
from kubernetes_asyncio import client
from simulation_support import eventually, pod

from hack.localcluster.server import LocalCluster
from hack.localcluster.simulation import MODE, Delays, SimulationConfig
from hack.localcluster.simulation.container_logs import MAX_LINES, ContainerLog

NS = "default"


@pytest.fixture
def sim_config() -> SimulationConfig:
    # A crashed container waits long enough in its back-off for the test to look.
    return SimulationConfig(delays=Delays(crash_backoff=0.5, crash_backoff_max=0.5))


def worker(name: str) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": name, "labels": {"nvidia.com/dynamo-component-type": "worker"}},
        "spec": {"containers": [{"name": "main", "image": "nvcr.io/dynamo:1", "ports": [
            {"name": "system", "containerPort": 9090}]}]}}


async def running(core: client.CoreV1Api, name: str) -> bool:
    p = await core.read_namespaced_pod(name, NS)
    return bool(p.status.phase == "Running")


async def bad_request(call: object) -> str:
    assert asyncio.iscoroutine(call)
    with pytest.raises(client.ApiException) as caught:
        await call
    assert caught.value.status == 400, caught.value.body
    body = json.loads(caught.value.body)
    assert body["reason"] == "BadRequest"
    return str(body["message"])


async def test_logs_of_a_running_container(core: client.CoreV1Api) -> None:
    await core.create_namespaced_pod(NS, pod("talker"))
    await eventually(lambda: running(core, "talker"))
    text = await core.read_namespaced_pod_log("talker", NS)
    assert text.endswith("\n")
    assert "container 'app' started from image 'nginx:1.27'" in text.splitlines()[0]
    stamped = await core.read_namespaced_pod_log("talker", NS, timestamps=True)
    stamp, _, rest = stamped.splitlines()[0].partition(" ")
    assert stamp.endswith("Z") and len(stamp) == len("2026-01-01T00:00:00.000000000Z")
    assert rest == text.splitlines()[0]
    assert await core.read_namespaced_pod_log("talker", NS, tail_lines=0) == ""
    assert await core.read_namespaced_pod_log("talker", NS, limit_bytes=5) == text[:5]
    assert await core.read_namespaced_pod_log("talker", NS, since_seconds=3600) == text
    message = await bad_request(core.read_namespaced_pod_log("talker", NS, previous=True))
    assert message == 'previous terminated container "app" in pod "talker" not found'


async def test_worker_lines_and_the_container_to_read(core: client.CoreV1Api,
                                                      sim_cluster: LocalCluster) -> None:
    body = worker("engine")
    body["spec"]["containers"].append({"name": "sidecar", "image": "busybox:1.36"})  # type: ignore[index]
    await core.create_namespaced_pod(NS, body)
    await eventually(lambda: running(core, "engine"))
    text = await core.read_namespaced_pod_log("engine", NS, container="main")
    assert "System status server listening on 0.0.0.0:9090" in text
    assert sim_cluster.simulation is not None
    endpoint = sim_cluster.simulation.workers.endpoint(NS, "engine")
    assert endpoint is not None
    endpoint.log("INFO dynamo_llm::lora: LoRA adapter 'x' loaded successfully from s3://x")
    text = await core.read_namespaced_pod_log("engine", NS, container="main", tail_lines=1)
    assert text == "INFO dynamo_llm::lora: LoRA adapter 'x' loaded successfully from s3://x\n"
    message = await bad_request(core.read_namespaced_pod_log("engine", NS))
    assert message == ("a container name must be specified for pod engine, choose one of: "
                       "[main sidecar]")
    message = await bad_request(core.read_namespaced_pod_log("engine", NS, container="nope"))
    assert message == "container nope is not valid for pod engine"


async def test_previous_logs_after_a_restart(core: client.CoreV1Api) -> None:
    await core.create_namespaced_pod(NS, pod("crasher", annotations={MODE: "crashloop"}))

    async def restarted() -> bool:
        p = await core.read_namespaced_pod("crasher", NS)
        statuses = p.status.container_statuses or []
        return bool(statuses and statuses[0].last_state.terminated)

    await eventually(restarted)
    previous = await core.read_namespaced_pod_log("crasher", NS, previous=True)
    assert previous.splitlines()[-1].startswith("exiting with code 1")
    # While in the back-off the current log is the crashed run's too (the kubelet reads the
    # last terminated container); once restarted, a new run with its own start line.

    async def running_again() -> str | None:
        p = await core.read_namespaced_pod("crasher", NS)
        st = p.status.container_statuses[0]
        if st.state.running and st.restart_count >= 1:
            return str(await core.read_namespaced_pod_log("crasher", NS))
        return None

    current = await eventually(running_again)
    assert "started (restart" in current.splitlines()[0]
    assert "exiting with code" not in current.splitlines()[0]


async def test_a_waiting_container_has_no_logs_yet(core: client.CoreV1Api) -> None:
    await core.create_namespaced_pod(NS, pod("pending", annotations={
        MODE: "image-pull-failure"}))

    async def pulling() -> bool:
        p = await core.read_namespaced_pod("pending", NS)
        statuses = p.status.container_statuses or []
        return bool(statuses and statuses[0].state.waiting
                    and statuses[0].state.waiting.reason in ("ErrImagePull", "ImagePullBackOff"))

    await eventually(pulling)
    message = await bad_request(core.read_namespaced_pod_log("pending", NS))
    assert message.startswith('container "app" in pod "pending" is waiting to start: ')
    assert message.endswith(("image can't be pulled", "trying and failing to pull image"))


async def test_an_unscheduled_pod_has_empty_logs(core: client.CoreV1Api) -> None:
    body = pod("nowhere")
    body["spec"]["nodeSelector"] = {"no-such": "node"}
    await core.create_namespaced_pod(NS, body)
    assert await core.read_namespaced_pod_log("nowhere", NS) == ""


async def test_a_container_log_keeps_the_last_lines_and_follows() -> None:
    log = ContainerLog(restarts=0)
    for i in range(MAX_LINES + 10):
        log.write(f"line {i}")
    lines = log.snapshot()
    assert len(lines) == MAX_LINES and lines[0].text == "line 10"
    seen: list[str] = []

    async def follow() -> None:
        async for line in log.follow(log.first + len(log.lines) - 1):
            seen.append(line.text)

    task = asyncio.create_task(follow())
    await asyncio.sleep(0)
    log.write("new")
    log.end()
    await asyncio.wait_for(task, 1)
    assert seen == [f"line {MAX_LINES + 9}", "new"]
