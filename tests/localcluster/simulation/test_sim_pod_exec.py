"""pods/exec on the simulated kubelets: the failures of a runtime that cannot exec, per protocol."""

from __future__ import annotations

import json
import ssl

import aiohttp
from kubernetes_asyncio import client
from simulation_support import eventually, pod

from hack.localcluster.server import LocalCluster

NS = "default"
EXEC = f"/api/v1/namespaces/{NS}/pods/box/exec?container=app&command=ls&stdout=true"


def session_args(cluster: LocalCluster) -> tuple[ssl.SSLContext, dict[str, str]]:
    context = ssl.create_default_context(cadata=cluster.certs.ca_pem.decode())
    return context, {"Authorization": f"Bearer {cluster.config.token}"}


async def running(core: client.CoreV1Api) -> bool:
    return bool((await core.read_namespaced_pod("box", NS)).status.phase == "Running")


async def test_exec_fails_as_the_runtime_would(core: client.CoreV1Api,
                                               sim_cluster: LocalCluster) -> None:
    await core.create_namespaced_pod(NS, pod("box"))
    await eventually(lambda: running(core))
    context, auth = session_args(sim_cluster)
    async with aiohttp.ClientSession(headers=auth) as http:
        # Not an upgrade at all.
        async with http.post(sim_cluster.url + EXEC, ssl=context) as response:
            assert response.status == 400
            assert (await response.json())["message"] == "Upgrade request required"
        # SPDY (older kubectl, or the fallback): the kubelet's 500 and its text.
        async with http.post(sim_cluster.url + EXEC, ssl=context, headers={
                "Connection": "Upgrade", "Upgrade": "SPDY/3.1",
                "X-Stream-Protocol-Version": "v4.channel.k8s.io"}) as response:
            assert response.status == 500
            text = await response.text()
            assert "code = Unimplemented" in text and "cannot exec" in text
        # Websocket v5 (kubectl 1.30+): upgraded, then a Status on the error channel.
        async with http.ws_connect(sim_cluster.url.replace("https", "wss") + EXEC,
                                   ssl=context, protocols=("v5.channel.k8s.io",)) as ws:
            message = await ws.receive_bytes(timeout=5)
            assert message[0] == 3
            status = json.loads(message[1:])
            assert (status["status"], status["reason"], status["code"]) == (
                "Failure", "InternalError", 500)
            assert status["message"].startswith(
                "Internal error occurred: unable to upgrade connection: rpc error:")
        # Port-forward speaks SPDY (plain or in a websocket), nothing else.
        async with http.post(sim_cluster.url + f"/api/v1/namespaces/{NS}/pods/box/portforward",
                             ssl=context, headers={"Connection": "Upgrade",
                                                   "Upgrade": "h2c"}) as response:
            assert response.status == 400
            assert "SPDY/3.1 or websocket" in (await response.json())["message"]


async def test_exec_in_a_stopped_container(core: client.CoreV1Api,
                                           sim_cluster: LocalCluster) -> None:
    body = pod("box", restart="Never", annotations={"localcluster.dev/job-outcome": "succeed",
                                                    "localcluster.dev/job-duration": "0"})
    await core.create_namespaced_pod(NS, body)

    async def done() -> bool:
        return bool((await core.read_namespaced_pod("box", NS)).status.phase == "Succeeded")

    await eventually(done)
    context, auth = session_args(sim_cluster)
    async with aiohttp.ClientSession(headers=auth) as http, http.post(
            sim_cluster.url + EXEC, ssl=context,
            headers={"Connection": "Upgrade", "Upgrade": "SPDY/3.1"}) as response:
        assert response.status == 500
        assert await response.text() == 'container not found ("app")'
