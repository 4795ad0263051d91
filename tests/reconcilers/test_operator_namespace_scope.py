"""Namespace-restricted mode against the local cluster: the marker Lease is created, renewed,
re-created and deleted; renewal failures end in NamespaceScopeLost before the marker expires;
a cluster-wide operator's claims follow the markers, their expiry and the ephemeral rule."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from operator_harness import FAST_WATCH, eventually, get_or_none, setup_client

from controller.cache import Cache
from controller.client import KubeClient
from controller.reconcile import Request
from controller.resource import LEASES, Resource
from hack.localcluster.faults import FaultRule
from hack.localcluster.server import LocalCluster
from reconcilers.operator.flags import parse_options
from reconcilers.operator.namespace_claims import NamespaceClaims
from reconcilers.operator.namespace_lease import (
    LEASE_NAME,
    MarkerLease,
    MarkerLeaseConfig,
    NamespaceScopeLost,
    lease_expiry,
    micro_time,
)
from reconcilers.operator.process import marker_lease

NAMESPACES = Resource("", "v1", "namespaces", "Namespace", namespaced=False)
NS = "team-a"


@pytest.fixture
async def kube(kubeconfig: Path) -> AsyncIterator[KubeClient]:
    client = await setup_client(kubeconfig)
    for name in (NS, "team-b", "ci-ephemeral-1"):
        await client.create(NAMESPACES, {"metadata": {"name": name}})
    try:
        yield client
    finally:
        await client.close()


def config(duration: float = 1.0, interval: float = 0.2) -> MarkerLeaseConfig:
    return MarkerLeaseConfig(namespace=NS, operator_version="1.2.3", duration=duration,
                             renew_interval=interval)


@contextlib.asynccontextmanager
async def holding(lease: MarkerLease) -> AsyncIterator[asyncio.Task[None]]:
    task = asyncio.create_task(lease.hold())
    try:
        yield task
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def marker(kube: KubeClient, namespace: str = NS) -> dict[str, Any] | None:
    return await get_or_none(kube, LEASES, namespace, LEASE_NAME)


def test_failure_budget_and_durations_are_the_originals() -> None:
    assert MarkerLeaseConfig("x", "v").max_failures == 2  # 30 s / 10 s - 1
    assert config(1.0, 0.25).max_failures == 3
    assert config(0.3, 0.1).max_failures == 2  # counted in nanoseconds, not floats
    assert config(1.0, 0.6).max_failures == 1  # never below one
    assert MarkerLeaseConfig("x", "v").holder_identity == "namespace-restricted-operator-v"
    with pytest.raises(ValueError):
        config(1.0, 1.0)
    options = parse_options(["--restricted-namespace", NS, "--leader-elect=false",
                             "--namespace-scope-lease-duration", "1m",
                             "--namespace-scope-lease-renew-interval", "15s"])
    scope = marker_lease(options)
    assert scope is not None and (scope.duration, scope.renew_interval) == (60.0, 15.0)
    assert marker_lease(parse_options(["--leader-elect=false"])) is None


def test_bad_intervals_are_refused_in_restricted_mode_only(
        capsys: pytest.CaptureFixture[str]) -> None:
    bad = ["--leader-elect=false", "--namespace-scope-lease-duration", "10s",
           "--namespace-scope-lease-renew-interval", "10s"]
    parse_options(bad)  # cluster-wide: the marker flags do nothing, as in the original
    with pytest.raises(SystemExit) as done:
        parse_options([*bad, "--restricted-namespace", NS])
    assert done.value.code == 2
    assert "--namespace-scope-lease-renew-interval" in capsys.readouterr().err


def test_expiry_needs_renew_time_and_duration() -> None:
    now = time.time()
    lease = {"spec": {"renewTime": micro_time(now), "leaseDurationSeconds": 30}}
    assert lease_expiry(lease) == pytest.approx(now + 30, abs=1e-5)
    assert lease_expiry({"spec": {"leaseDurationSeconds": 30}}) is None
    assert lease_expiry({"spec": {"renewTime": micro_time(now)}}) is None
    assert lease_expiry({"spec": {"renewTime": "yesterday", "leaseDurationSeconds": 3}}) is None


async def test_marker_is_created_renewed_recreated_and_released(kube: KubeClient) -> None:
    lease = MarkerLease(kube, config())
    await lease.claim()
    first = await marker(kube)
    assert first is not None
    spec = first["spec"]
    assert spec["holderIdentity"] == "namespace-restricted-operator-1.2.3"
    assert spec["leaseDurationSeconds"] == 1
    assert spec["acquireTime"] == spec["renewTime"]
    async with holding(lease) as task:
        async def renewed() -> bool:
            now = await marker(kube)
            return now is not None and bool(now["spec"]["renewTime"] > spec["renewTime"])
        await eventually(renewed, what="a renewal")
        await kube.delete(LEASES, NS, LEASE_NAME)
        await eventually(lambda: marker(kube), what="the marker re-created")
        assert not task.done()
    await lease.release()
    assert await marker(kube) is None
    await lease.release()  # already gone: nothing to do


async def test_failed_renewals_end_the_scope_before_the_marker_expires(
        cluster: LocalCluster, kube: KubeClient) -> None:
    cfg = config(duration=1.0, interval=0.25)
    lease = MarkerLease(kube, cfg)
    await lease.claim()
    renewed = lease_expiry(await marker(kube) or {})
    assert renewed is not None
    rule = cluster.faults.error(500, resources=("leases",), namespace=NS)
    started = time.monotonic()
    async with holding(lease) as task:
        with pytest.raises(NamespaceScopeLost, match="3 times in a row"):
            await asyncio.wait_for(task, 5)
    assert rule.hits == cfg.max_failures
    # The last good renewal claimed the namespace for `duration`: we stopped within it.
    assert time.monotonic() - started < cfg.duration + 0.2
    cluster.faults.remove(rule)


async def test_a_transient_failure_is_forgiven(cluster: LocalCluster, kube: KubeClient) -> None:
    lease = MarkerLease(kube, config(duration=1.0, interval=0.1))
    await lease.claim()
    async with holding(lease) as task:
        for _ in range(3):  # 8 failures would end it; one at a time never does
            rule = cluster.faults.error(503, verbs=("get",), resources=("leases",),
                                        namespace=NS, times=1)

            def failed(r: FaultRule = rule) -> bool:
                return r.hits == 1
            await eventually(failed, what="a failed renewal")
            await asyncio.sleep(0.25)
        assert not task.done()


async def test_claims_follow_markers_and_their_expiry(kube: KubeClient) -> None:
    cache = Cache(kube, settings=FAST_WATCH)
    claims = NamespaceClaims(cache)
    released: list[str] = []
    runner = asyncio.create_task(cache.run())
    watcher = asyncio.create_task(claims.watch_releases(released.append))
    try:
        await kube.create(LEASES, {"metadata": {"name": "other", "namespace": "team-b"},
                                   "spec": {"renewTime": micro_time(time.time()),
                                            "leaseDurationSeconds": 30}})
        assert await claims.admits(Request("team-b", "g"))
        lease = MarkerLease(kube, MarkerLeaseConfig(NS, "1.2.3", 1.0, 0.2))
        await lease.claim()
        await eventually(lambda: claims.claimed(NS), what="team-a claimed")
        assert not await claims.admits(Request(NS, "g"))
        assert await claims.admits(Request("team-b", "g"))
        assert not await claims.admits(Request("ci-ephemeral-1", "g"))
        assert [o["metadata"]["name"] for o in claims.informer.store.list()] == [LEASE_NAME]
        # Never renewed: the claim ends with its duration, without any event.
        await eventually(lambda: released == [NS], within=3, what="team-a released")
        assert await claims.admits(Request(NS, "g"))
        async with holding(lease):
            await eventually(lambda: claims.claimed(NS), what="team-a claimed again")
            await asyncio.sleep(1.2)  # renewed all along: still claimed, not released
            assert claims.claimed(NS) and released == [NS]
        await lease.release()
        await eventually(lambda: released == [NS, NS], what="released on deletion")
    finally:
        for task in (watcher, runner):
            task.cancel()
        await asyncio.gather(watcher, runner, return_exceptions=True)
