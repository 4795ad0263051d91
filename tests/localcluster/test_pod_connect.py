"""pods/log, exec and portforward as kube-apiserver answers them before and without a kubelet."""

from __future__ import annotations

import json
import ssl
from typing import Any

import aiohttp
import pytest
from kubernetes_asyncio import client

from hack.localcluster.rbac import request_attributes
from hack.localcluster.server import LocalCluster

NS = "default"


def two_containers(name: str, node: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "a", "image": "busybox"},
                                           {"name": "b", "image": "busybox"}],
                            "initContainers": [{"name": "setup", "image": "busybox"}]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


async def call(cluster: LocalCluster, method: str, path: str,
               headers: dict[str, str] | None = None) -> tuple[int, str]:
    """A raw request as the cluster admin (the static admin token)."""
    context = ssl.create_default_context(cadata=cluster.certs.ca_pem.decode())
    headers = {**(headers or {}), "Authorization": f"Bearer {cluster.config.token}"}
    async with aiohttp.ClientSession() as http, http.request(
            method, cluster.url + path, headers=headers, ssl=context) as response:
        return response.status, await response.text()


async def test_container_must_be_named_and_valid(api: client.ApiClient) -> None:
    core = client.CoreV1Api(api)
    await core.create_namespaced_pod(NS, two_containers("duo"))
    with pytest.raises(client.ApiException) as caught:
        await core.read_namespaced_pod_log("duo", NS)
    assert caught.value.status == 400
    assert json.loads(caught.value.body)["message"] == (
        "a container name must be specified for pod duo, choose one of: [a b] or one of the "
        "init containers: [setup]")
    with pytest.raises(client.ApiException) as caught:
        await core.read_namespaced_pod_log("duo", NS, container="c")
    assert json.loads(caught.value.body)["message"] == "container c is not valid for pod duo"
    # Not bound to a node: no logs yet, and nothing to exec in.
    assert await core.read_namespaced_pod_log("duo", NS, container="a") == ""


async def test_exec_without_a_host_or_a_kubelet(cluster: LocalCluster,
                                                api: client.ApiClient) -> None:
    core = client.CoreV1Api(api)
    await core.create_namespaced_pod(NS, two_containers("idle"))
    upgrade = {"Connection": "Upgrade", "Upgrade": "SPDY/3.1",
               "X-Stream-Protocol-Version": "v4.channel.k8s.io"}
    path = f"/api/v1/namespaces/{NS}/pods/idle/exec?container=a&command=ls&stdout=true"
    code, body = await call(cluster, "POST", path, upgrade)
    assert (code, json.loads(body)["message"]) == (400, "pod idle does not have a host assigned")
    # Bound to a node no kubelet answers for: the API server's dial fails.
    await core.create_namespaced_pod(NS, two_containers("lost", node="gone-node"))
    path = f"/api/v1/namespaces/{NS}/pods/lost/exec?container=a&command=ls&stdout=true"
    code, body = await call(cluster, "POST", path, upgrade)
    assert code == 500
    assert "dial tcp gone-node:10250: connect: connection refused" in json.loads(body)["message"]
    code, body = await call(cluster, "GET",
                            f"/api/v1/namespaces/{NS}/pods/lost/portforward")
    assert code == 500
    code, _ = await call(cluster, "GET", f"/api/v1/namespaces/{NS}/pods/nope/log")
    assert code == 404


def test_websocket_streams_are_authorized_as_create() -> None:
    def verb(method: str, sub: str) -> str:
        return request_attributes(method, f"/api/v1/namespaces/ns/pods/x/{sub}", {}).verb

    assert [verb("GET", s) for s in ("exec", "attach", "portforward")] == ["create"] * 3
    assert [verb("POST", s) for s in ("exec", "attach", "portforward")] == ["create"] * 3
    assert verb("GET", "log") == "get"
