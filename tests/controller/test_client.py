"""The API client against the local server: JSON verbs, writes whose answer is not decoded,
error classes, client-side QPS limits, request metrics and the user agent."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from controller.client import ClientConfig, KubeClient
from controller.errors import UNAPPLICABLE_PATCH, ApiError, Conflict, NotFound, lost_race
from controller.metrics import Metrics
from controller.resource import CONFIG_MAPS
from hack.localcluster.server import LocalCluster


async def test_verbs_and_errors(kubeconfig: Path) -> None:
    metrics = Metrics()
    client = await KubeClient.connect(kubeconfig, ClientConfig(qps=None), metrics)
    try:
        created = await client.create(CONFIG_MAPS, {"metadata": {"name": "a",
                                                                 "namespace": "default"},
                                                    "data": {"k": "v"}})
        assert created["metadata"]["uid"]
        with pytest.raises(Conflict):
            await client.create(CONFIG_MAPS, {"metadata": {"name": "a", "namespace": "default"}})
        patched = await client.patch(CONFIG_MAPS, "default", "a", {"data": {"k": "w"}})
        assert patched["data"] == {"k": "w"}
        stale = {**created, "data": {"k": "x"}}
        with pytest.raises(Conflict) as conflict:
            await client.update(CONFIG_MAPS, stale)
        assert conflict.value.code == 409 and conflict.value.reason == "Conflict"
        listed = await client.list(CONFIG_MAPS, "default")
        assert [o["metadata"]["name"] for o in listed["items"]] == ["a"]
        await client.delete(CONFIG_MAPS, "default", "a")
        with pytest.raises(NotFound):
            await client.get(CONFIG_MAPS, "default", "a")
        with pytest.raises(ApiError) as bad:
            await client.request("GET", "/api/v1/nonsense/x/y/z/w")
        assert bad.value.code == 404
        sample = metrics.registry.get_sample_value
        assert sample("rest_client_requests_total",
                      {"code": "409", "method": "POST", "host": client.host}) == 1
        assert sample("rest_client_requests_total",
                      {"code": "201", "method": "POST", "host": client.host}) == 1
    finally:
        await client.close()


async def test_writes_whose_answer_is_not_decoded(kubeconfig: Path) -> None:
    """decode=False: success returns {} (the write happened), a refusal still raises."""
    client = await KubeClient.connect(kubeconfig, ClientConfig(qps=None))
    try:
        cm = {"metadata": {"name": "quiet", "namespace": "default"}, "data": {"k": "v"}}
        assert await client.create(CONFIG_MAPS, cm, decode=False) == {}
        assert (await client.get(CONFIG_MAPS, "default", "quiet"))["data"] == {"k": "v"}
        assert await client.patch(CONFIG_MAPS, "default", "quiet", {"data": {"k": "w"}},
                                  decode=False) == {}
        assert (await client.get(CONFIG_MAPS, "default", "quiet"))["data"] == {"k": "w"}
        with pytest.raises(Conflict):
            await client.create(CONFIG_MAPS, cm, decode=False)
        with pytest.raises(NotFound):
            await client.patch(CONFIG_MAPS, "default", "absent", {"data": {}}, decode=False)
    finally:
        await client.close()


async def test_client_side_qps_limit(kubeconfig: Path, cluster: LocalCluster) -> None:
    client = await KubeClient.connect(kubeconfig, ClientConfig(qps=20.0, burst=5,
                                                               user_agent="qps-test/1"))
    try:
        start = time.monotonic()
        for _ in range(15):
            await client.list(CONFIG_MAPS, "default")
        took = time.monotonic() - start
        # 5 at once from the burst, then 10 more at 20 per second.
        assert took >= 0.45, took
        assert cluster.stats.count(verb="list", user_agent="qps-test/1") == 15
    finally:
        await client.close()


async def test_proxy_environment_is_read_once(kubeconfig: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    # Read when the client is made, not looked up again (in a thread) for every request.
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example:3128")
    monkeypatch.setenv("NO_PROXY", "")
    client = await KubeClient.connect(kubeconfig, ClientConfig(qps=None))
    try:
        assert client.api.rest_client.proxy == "http://proxy.example:3128"
        assert not client.api.rest_client.pool_manager.trust_env
    finally:
        await client.close()
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    client = await KubeClient.connect(kubeconfig, ClientConfig(qps=None))
    try:
        assert not client.api.rest_client.proxy
        await client.list(CONFIG_MAPS, "default")
    finally:
        await client.close()


async def test_watch_events_cut_across_chunks_arrive_whole(kubeconfig: Path) -> None:
    """A watch is read a chunk at a time: events a chunk holds come as one batch, and an
    event larger than a chunk (a 300 kB object) comes whole, in order."""
    client = await KubeClient.connect(kubeconfig, ClientConfig(qps=None))
    try:
        start = (await client.list(CONFIG_MAPS, "default"))["metadata"]["resourceVersion"]
        big = "x" * 300_000
        for i in range(5):
            data = {"k": big if i == 2 else str(i)}
            await client.create(CONFIG_MAPS, {"metadata": {"name": f"w{i}",
                                                           "namespace": "default"},
                                              "data": data})
        seen: list[dict[str, object]] = []
        async with client.watch(CONFIG_MAPS, "default", resource_version=start,
                                timeout_seconds=1, read_timeout=5) as events:
            async for event in events:
                seen.append(event)
                if len(seen) == 5:
                    break
        assert [e["object"]["metadata"]["name"] for e in seen] == [  # type: ignore[index]
            f"w{i}" for i in range(5)]
        assert seen[2]["object"]["data"]["k"] == big  # type: ignore[index]
    finally:
        await client.close()


async def test_a_failed_json_patch_test_is_a_lost_race_and_nothing_else_is(
        client: KubeClient) -> None:
    """kube-apiserver answers a failed `test` with 422 and only its generic patch text; that
    (and a vanished object) reads as a Conflict, a refused value does not."""
    await client.create(CONFIG_MAPS, {"metadata": {"name": "r", "namespace": "default"},
                                      "data": {"k": "v"}})
    with pytest.raises(ApiError) as failed:
        await client.patch(CONFIG_MAPS, "default", "r", [
            {"op": "test", "path": "/data/k", "value": "other"},
            {"op": "replace", "path": "/data/k", "value": "w"}], patch_type="json")
    assert failed.value.code == 422 and failed.value.message == UNAPPLICABLE_PATCH
    assert isinstance(lost_race(failed.value), Conflict)
    with pytest.raises(NotFound) as gone:
        await client.patch(CONFIG_MAPS, "default", "missing", [
            {"op": "replace", "path": "/data/k", "value": "w"}], patch_type="json")
    assert isinstance(lost_race(gone.value), Conflict)
    with pytest.raises(ApiError) as refused:
        await client.patch(CONFIG_MAPS, "default", "r", [
            {"op": "add", "path": "/metadata/labels", "value": {"not a key!": "x"}}],
            patch_type="json")
    assert refused.value.code in (400, 422) and lost_race(refused.value) is None
