"""The simulated kubelet's status of init containers: one that runs to completion is
terminated (Completed); a sidecar (restartPolicy Always, as a GMS server) runs on beside the
containers, started and ready, as the kubelet reports it."""

from __future__ import annotations

from kubernetes_asyncio import client
from simulation_support import eventually, pod

NS = "default"


async def test_a_sidecar_init_container_runs_on_and_a_plain_one_completes(
        core: client.CoreV1Api) -> None:
    body = pod("gms")
    body["spec"]["initContainers"] = [
        {"name": "setup", "image": "busybox:1.36"},
        {"name": "gms-server", "image": "busybox:1.36", "restartPolicy": "Always"},
    ]
    await core.create_namespaced_pod(NS, body)

    async def running() -> client.V1Pod | None:
        p = await core.read_namespaced_pod("gms", NS)
        return p if p.status.phase == "Running" else None

    p = await eventually(running)
    setup, server = p.status.init_container_statuses
    assert setup.name == "setup" and setup.state.terminated.reason == "Completed"
    assert setup.started is False
    assert server.name == "gms-server"
    assert server.state.running.started_at is not None and server.state.terminated is None
    assert (server.started, server.ready) == (True, True)
