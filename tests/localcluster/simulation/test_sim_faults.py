"""Fault injection, each fault seen the way a plain kubernetes_asyncio client sees it."""

from __future__ import annotations

import asyncio
import ssl
import time
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from kubernetes_asyncio import client, watch
from simulation_support import condition, deployment, eventually

from hack.localcluster.server import LocalCluster
from hack.localcluster.testing import api_client, running_cluster

NS = "default"
Json = dict[str, Any]


def configmap(name: str) -> Json:
    return {"metadata": {"name": name}, "data": {"k": "v"}}


async def watch_until_end(core: client.CoreV1Api, events: list[Json],
                          resource_version: str | None = None) -> float:
    """A plain watch loop over configmaps; returns how long the stream lasted."""
    start = time.monotonic()
    kwargs: Json = {"timeout_seconds": 60}
    if resource_version is not None:
        kwargs["resource_version"] = resource_version
    async with watch.Watch().stream(core.list_namespaced_config_map, NS, **kwargs) as stream:
        async for event in stream:
            events.append(event)
    return time.monotonic() - start


async def test_closed_watch_streams_end(core: client.CoreV1Api,
                                        sim_cluster: LocalCluster) -> None:
    events: list[Json] = []
    loop = asyncio.create_task(watch_until_end(core, events))
    await core.create_namespaced_config_map(NS, configmap("a"))
    await eventually(lambda: len(events) == 1)
    assert sim_cluster.faults.close_watches() >= 1
    lasted = await asyncio.wait_for(loop, 5)
    assert lasted < 5  # ended by the fault, not by its 60 s timeout
    assert [e["type"] for e in events] == ["ADDED"]


async def test_compacted_history_answers_410(core: client.CoreV1Api,
                                             sim_cluster: LocalCluster) -> None:
    rv = (await core.list_namespaced_config_map(NS)).metadata.resource_version
    await core.create_namespaced_config_map(NS, configmap("b"))
    sim_cluster.faults.compact()
    with pytest.raises(client.ApiException) as err:
        await watch_until_end(core, [], resource_version=rv)
    assert err.value.status == 410
    # A fresh list gives a version to watch from again.
    fresh = (await core.list_namespaced_config_map(NS)).metadata.resource_version
    events: list[Json] = []
    loop = asyncio.create_task(watch_until_end(core, events, resource_version=fresh))
    await core.create_namespaced_config_map(NS, configmap("c"))
    await eventually(lambda: len(events) == 1)
    sim_cluster.faults.close_watches()
    await loop


async def test_429_with_retry_after(core: client.CoreV1Api, sim_cluster: LocalCluster) -> None:
    rule = sim_cluster.faults.error(429, verbs=("list",), resources=("configmaps",),
                                    retry_after=2, times=1)
    with pytest.raises(client.ApiException) as err:
        await core.list_namespaced_config_map(NS)
    assert err.value.status == 429
    assert err.value.headers["Retry-After"] == "2"
    assert '"reason":"TooManyRequests"' in err.value.body
    assert rule.hits == 1 and rule not in sim_cluster.faults.rules
    await core.list_namespaced_config_map(NS)  # the rule retired after one hit
    await core.list_namespaced_pod(NS)


@pytest.mark.parametrize(("code", "reason"), [(500, "InternalError"),
                                              (503, "ServiceUnavailable")])
async def test_server_errors(core: client.CoreV1Api, sim_cluster: LocalCluster, code: int,
                             reason: str) -> None:
    sim_cluster.faults.error(code, verbs=("create",), resources=("configmaps",))
    with pytest.raises(client.ApiException) as err:
        await core.create_namespaced_config_map(NS, configmap("d"))
    assert err.value.status == code and reason in err.value.body
    sim_cluster.faults.clear()
    await core.create_namespaced_config_map(NS, configmap("d"))


async def test_a_fraction_of_requests_fail(core: client.CoreV1Api,
                                           sim_cluster: LocalCluster) -> None:
    rule = sim_cluster.faults.error(500, fraction=0.5, resources=("configmaps",))
    failures = 0
    for _ in range(40):
        try:
            await core.list_namespaced_config_map(NS)
        except client.ApiException:
            failures += 1
    assert 5 < failures < 35 and failures == rule.hits


async def test_watch_requests_can_fail(core: client.CoreV1Api,
                                       sim_cluster: LocalCluster) -> None:
    sim_cluster.faults.error(503, verbs=("watch",), times=1)
    with pytest.raises(client.ApiException) as err:
        await watch_until_end(core, [])
    assert err.value.status == 503


async def test_hanging_requests_time_out_in_the_client(core: client.CoreV1Api,
                                                       sim_cluster: LocalCluster) -> None:
    rule = sim_cluster.faults.timeout(verbs=("get",), resources=("configmaps",))
    await core.create_namespaced_config_map(NS, configmap("e"))
    start = time.monotonic()
    with pytest.raises(asyncio.TimeoutError):
        await core.read_namespaced_config_map("e", NS, _request_timeout=0.3)
    assert 0.25 < time.monotonic() - start < 2
    assert rule.hits == 1
    sim_cluster.faults.remove(rule)
    await core.read_namespaced_config_map("e", NS, _request_timeout=2)


async def test_latency(core: client.CoreV1Api, sim_cluster: LocalCluster) -> None:
    sim_cluster.faults.latency(0.2, verbs=("list",))
    start = time.monotonic()
    await core.list_namespaced_config_map(NS)
    assert time.monotonic() - start >= 0.2


async def test_api_server_restart(core: client.CoreV1Api, sim_cluster: LocalCluster) -> None:
    events: list[Json] = []
    loop = asyncio.create_task(watch_until_end(core, events))
    await core.create_namespaced_config_map(NS, configmap("kept"))
    await eventually(lambda: len(events) == 1)  # the stream is open
    restart = asyncio.create_task(sim_cluster.faults.restart_server(down_for=0.3))
    await asyncio.sleep(0.1)
    with pytest.raises(aiohttp.ClientError):
        await core.list_namespaced_config_map(NS, _request_timeout=1)
    await restart
    assert await asyncio.wait_for(loop, 5) < 5  # the stream ended with the server
    names = [c.metadata.name for c in (await core.list_namespaced_config_map(NS)).items]
    assert "kept" in names


async def test_restart_from_data_dir_keeps_state(tmp_path: Path) -> None:
    data = tmp_path / "data"
    async with running_cluster(tmp_path, data_dir=data) as first:
        port = first.port
        api = await api_client(tmp_path / "kubeconfig")
        try:
            await client.CoreV1Api(api).create_namespaced_config_map(NS, configmap("durable"))
        finally:
            await api.close()
    async with running_cluster(tmp_path, data_dir=data, port=port, token=first.config.token):
        api = await api_client(tmp_path / "kubeconfig")
        try:
            got = await client.CoreV1Api(api).read_namespaced_config_map("durable", NS)
            assert got.data == {"k": "v"}
        finally:
            await api.close()


async def test_node_not_ready(core: client.CoreV1Api, apps: client.AppsV1Api,
                              sim_cluster: LocalCluster) -> None:
    await apps.create_namespaced_deployment(NS, deployment("svc", replicas=4, gpus=8))

    async def spread() -> list[client.V1Pod] | None:
        pods = (await core.list_namespaced_pod(NS, label_selector="app=svc")).items
        ok = len(pods) == 4 and all(condition(p, "Ready") and condition(p, "Ready").status ==
                                    "True" for p in pods)
        return pods if ok else None

    pods = await eventually(spread)
    victim = pods[0]
    node_name = victim.spec.node_name
    node_events: list[Json] = []

    async def watch_node() -> None:
        async with watch.Watch().stream(core.list_node, timeout_seconds=60,
                                        field_selector=f"metadata.name={node_name}") as stream:
            async for event in stream:
                node_events.append(event)
                ready = condition(event["object"], "Ready")
                if ready is not None and ready.status == "Unknown":
                    return

    watcher = asyncio.create_task(watch_node())
    await asyncio.sleep(0.05)
    sim_cluster.faults.set_node_ready(node_name, False)
    await asyncio.wait_for(watcher, 5)
    node = await core.read_node(node_name)
    ready = condition(node, "Ready")
    assert (ready.status, ready.reason) == ("Unknown", "NodeStatusUnknown")
    assert {(t.key, t.effect) for t in node.spec.taints} == {
        ("node.kubernetes.io/unreachable", "NoSchedule"),
        ("node.kubernetes.io/unreachable", "NoExecute")}

    async def evicted() -> client.V1Pod | None:
        p = await core.read_namespaced_pod(victim.metadata.name, NS)
        return p if p.metadata.deletion_timestamp else None

    stuck = await eventually(evicted)
    assert condition(stuck, "Ready").status == "False"

    # The replacement cannot go anywhere: every other node's GPUs are taken.
    async def pending_replacement() -> bool:
        pods = (await core.list_namespaced_pod(NS, label_selector="app=svc")).items
        waiting = [p for p in pods if not p.spec.node_name]
        return len(waiting) == 1 and "untolerated taint {node.kubernetes.io/unreachable: }" in (
            condition(waiting[0], "PodScheduled").message or "")

    await eventually(pending_replacement)
    # Back online: the terminating pod is finished off, the replacement is scheduled there.
    sim_cluster.faults.set_node_ready(node_name, True)
    d = await eventually(lambda: _available(apps, "svc", 4))
    assert d.status.ready_replicas == 4


async def _available(apps: client.AppsV1Api, name: str, n: int) -> client.V1Deployment | None:
    d = await apps.read_namespaced_deployment(name, NS)
    return d if d.status.available_replicas == n and d.status.replicas == n else None


async def test_killed_pods_are_replaced(core: client.CoreV1Api, apps: client.AppsV1Api,
                                        sim_cluster: LocalCluster) -> None:
    await apps.create_namespaced_deployment(NS, deployment("k", replicas=2))
    await eventually(lambda: _available(apps, "k", 2))
    rv = (await core.list_namespaced_pod(NS)).metadata.resource_version
    deleted: list[str] = []

    async def watch_pods() -> None:
        async with watch.Watch().stream(core.list_namespaced_pod, NS, resource_version=rv,
                                        timeout_seconds=60, label_selector="app=k") as stream:
            async for event in stream:
                if event["type"] == "DELETED":
                    deleted.append(event["object"].metadata.name)
                    return

    watcher = asyncio.create_task(watch_pods())
    killed = sim_cluster.faults.kill_pods(NS, "app=k")
    assert len(killed) == 2
    await asyncio.wait_for(watcher, 5)
    assert deleted[0] in killed
    await eventually(lambda: _available(apps, "k", 2))


async def test_http_control_endpoint(sim_cluster: LocalCluster, core: client.CoreV1Api) -> None:
    ctx = ssl.create_default_context(cadata=sim_cluster.certs.ca_pem.decode())
    url = f"{sim_cluster.url}/localcluster/faults"
    auth = {"Authorization": f"Bearer {sim_cluster.config.token}"}
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=ctx)) as http:
        async with http.post(url, json={"action": "error"}) as response:
            assert response.status == 401
        async with http.post(url, headers=auth, json={
                "action": "error", "code": 429, "verbs": ["list"], "resources": ["pods"],
                "times": 1}) as response:
            assert response.status == 200
            rule = await response.json()
            assert (rule["code"], rule["remaining"]) == (429, 1)
        with pytest.raises(client.ApiException) as err:
            await core.list_namespaced_pod(NS)
        assert err.value.status == 429
        async with http.get(url, headers=auth) as response:
            assert (await response.json())["rules"] == []
        async with http.post(url, headers=auth, json={"action": "compact"}) as response:
            assert "compactedAt" in await response.json()
        async with http.post(url, headers=auth, json={"action": "node-not-ready",
                                                      "node": "gpu-node-3"}) as response:
            assert (await response.json())["ready"] is False
        async with http.post(url, headers=auth, json={"action": "bogus"}) as response:
            assert response.status == 400
        async with http.post(url, headers=auth, json={"action": "restart",
                                                      "downFor": 0.1}) as response:
            assert (await response.json()) == {"restarting": True}

    async def unready() -> bool:
        try:
            node = await core.read_node("gpu-node-3", _request_timeout=1)
        except (TimeoutError, aiohttp.ClientError):
            return False
        return bool(condition(node, "Ready").status == "Unknown")

    await eventually(unready)
