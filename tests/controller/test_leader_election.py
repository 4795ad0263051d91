"""Leader election between managers in one process, with short durations: exactly one
reconciles; a clean stop hands over at once; a killed leader is replaced once its lease
expires; a leader that cannot renew stops reconciling before anyone else may take over."""

from __future__ import annotations

import asyncio
import contextlib
import time
from pathlib import Path

import pytest
from harness import TcpProxy, eventually, manager, running, widget

from controller.client import KubeClient
from controller.leader_election import JITTER, LeaderElectionConfig, LeaderElector
from controller.manager import LeadershipLost, Manager
from controller.reconcile import Request
from controller.resource import LEASES, Resource

LEASE, RENEW, RETRY = 1.0, 0.6, 0.1
#: client-go's bound for a successor: a jittered poll to notice the last renewal, the lease
#: duration, and a jittered poll to notice the expiry.
TAKEOVER_BOUND = LEASE + 2 * RETRY * (1 + JITTER) + 0.4


def election(identity: str) -> LeaderElectionConfig:
    return LeaderElectionConfig(name="test-lock", namespace="default", identity=identity,
                                lease_duration=LEASE, renew_deadline=RENEW,
                                retry_period=RETRY)


async def elected_pair(kubeconfig: Path, widgets: Resource,
                       first_kubeconfig: Path | None = None,
                       ) -> tuple[list[Manager], dict[str, list[Request]]]:
    seen: dict[str, list[Request]] = {"a": [], "b": []}
    managers = []
    for identity in ("a", "b"):
        mgr = await manager(first_kubeconfig if identity == "a" and first_kubeconfig
                            else kubeconfig, leader_election=election(identity))

        async def reconcile(request: Request, mine: list[Request] = seen[identity]) -> None:
            mine.append(request)

        mgr.add_controller("widgets", reconcile, for_=widgets)
        managers.append(mgr)
    return managers, seen


def leader_of(managers: list[Manager]) -> list[str]:
    return [m.config.leader_election.identity for m in managers  # type: ignore[union-attr]
            if m.elector is not None and m.elector.is_leader]


async def test_exactly_one_reconciles_and_clean_stop_hands_over(
        kubeconfig: Path, client: KubeClient, widgets: Resource) -> None:
    managers, seen = await elected_pair(kubeconfig, widgets)
    first, second = managers
    for i in range(5):
        await client.create(widgets, widget(f"w{i}"))
    async with running(first) as first_task:
        await eventually(lambda: leader_of(managers) == ["a"])
        async with running(second):
            await eventually(lambda: len(seen["a"]) >= 5)
            await eventually(lambda: second.cache.has_synced)
            await asyncio.sleep(3 * RETRY)
            assert seen["b"] == [], "the follower never reconciles"
            assert leader_of(managers) == ["a"]
            registry = first.metrics.registry
            assert registry.get_sample_value("leader_election_master_status",
                                             {"name": "test-lock"}) == 1
            assert second.metrics.registry.get_sample_value(
                "leader_election_master_status", {"name": "test-lock"}) == 0

            stopped = time.monotonic()
            first.stop()
            await asyncio.wait_for(first_task, 5)
            lease = await client.get(LEASES, "default", "test-lock")
            assert not lease["spec"].get("holderIdentity")
            assert lease["spec"]["leaseDurationSeconds"] == 1
            await eventually(lambda: leader_of(managers) == ["b"])
            took = time.monotonic() - stopped
            assert took < RETRY * (1 + JITTER) + 0.3, "a released lease is taken at once"
            await eventually(lambda: len(seen["b"]) >= 5), "the new leader resyncs everything"


async def test_killed_leader_is_replaced_after_its_lease_expires(
        kubeconfig: Path, client: KubeClient, widgets: Resource) -> None:
    managers, seen = await elected_pair(kubeconfig, widgets)
    first, second = managers
    first_task = asyncio.create_task(first.run())
    try:
        await eventually(lambda: leader_of(managers) == ["a"])
        async with running(second):
            await eventually(lambda: second.cache.has_synced)
            await asyncio.sleep(2 * RETRY)
            killed = time.monotonic()
            first_task.cancel()  # like SIGKILL: no release, the lease stays held
            with contextlib.suppress(asyncio.CancelledError):
                await first_task
            lease = await client.get(LEASES, "default", "test-lock")
            assert lease["spec"]["holderIdentity"] == "a"
            await eventually(lambda: leader_of([second]) == ["b"], within=5, interval=0.005)
            took = time.monotonic() - killed
            assert LEASE - 2 * RETRY <= took <= TAKEOVER_BOUND, took
            await client.create(widgets, widget("after"))
            await eventually(lambda: Request("default", "after") in seen["b"])
            lease = await client.get(LEASES, "default", "test-lock")
            assert lease["spec"]["leaseTransitions"] == 1
    finally:
        first_task.cancel()
        await asyncio.gather(first_task, return_exceptions=True)


async def test_leader_that_cannot_renew_stops_before_a_successor_starts(
        kubeconfig: Path, proxied: Path, proxy: TcpProxy, client: KubeClient,
        widgets: Resource) -> None:
    managers, seen = await elected_pair(kubeconfig, widgets, first_kubeconfig=proxied)
    first, second = managers
    first_task = asyncio.create_task(first.run())
    try:
        await eventually(lambda: leader_of(managers) == ["a"])
        async with running(second):
            await eventually(lambda: second.cache.has_synced)
            proxy.pause()  # the leader is cut off from the API server
            cut = time.monotonic()
            with pytest.raises(LeadershipLost):
                await asyncio.wait_for(first_task, 5)
            leader_stopped = time.monotonic()
            assert leader_stopped - cut <= RETRY + RENEW + 0.3
            assert not second.elector.is_leader  # type: ignore[union-attr]
            await eventually(lambda: leader_of([second]) == ["b"], within=5, interval=0.005)
            assert first.metrics.registry.get_sample_value(
                "leader_election_master_status", {"name": "test-lock"}) == 0
            before = len(seen["a"])
            await client.create(widgets, widget("late"))
            await eventually(lambda: Request("default", "late") in seen["b"])
            assert len(seen["a"]) == before
    finally:
        proxy.resume()
        first_task.cancel()
        await asyncio.gather(first_task, return_exceptions=True)


async def renewed_behind_its_back(client: KubeClient, holder: str) -> None:
    """A write the elector never saw the answer to, as a renewal cancelled by the stop."""
    lease = await client.get(LEASES, "default", "test-lock")
    lease["spec"]["holderIdentity"] = holder
    lease["spec"]["renewTime"] = "2030-01-01T00:00:00.000000Z"
    await client.request("PUT", LEASES.path("default", "test-lock"), body=lease)


@pytest.mark.parametrize("holder", ["a", "b"])
async def test_release_after_a_write_it_never_saw_answered(client: KubeClient,
                                                          holder: str) -> None:
    """Still ours ("a"): released despite the stale version. Taken ("b"): left alone."""
    elector = LeaderElector(client, election("a"))
    await elector.acquire()
    await renewed_behind_its_back(client, holder)
    await elector.release()
    lease = await client.get(LEASES, "default", "test-lock")
    if holder == "a":
        assert not lease["spec"].get("holderIdentity")
        assert lease["spec"]["leaseDurationSeconds"] == 1
    else:
        assert lease["spec"]["holderIdentity"] == "b"


def test_config_rejects_inconsistent_durations() -> None:
    with pytest.raises(ValueError):
        LeaderElectionConfig(name="x", namespace="y", lease_duration=5, renew_deadline=10)
    config = LeaderElectionConfig(name="x", namespace="y")
    assert (config.lease_duration, config.renew_deadline, config.retry_period) == (15, 10, 2)
    assert "_" in config.identity
