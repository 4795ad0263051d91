"""The delays that make rollouts observable, over real HTTP: a pod ready only `ready-after`
seconds after its container starts, and one that drains `stop-after` seconds on SIGTERM,
staying Terminating that long while it leaves its Service's endpoints at once.

Timings are asserted one way only ("not before the delay"): a loaded machine makes every
step late, never early."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from kubernetes_asyncio import client, watch
from simulation_support import eventually, pod

from hack.localcluster.server import LocalCluster
from hack.localcluster.simulation.behaviors import READY_AFTER, STOP_AFTER

NS = "default"


def ready(p: client.V1Pod) -> bool:
    return any(c.type == "Ready" and c.status == "True" for c in p.status.conditions or [])


async def watch_readiness(core: client.CoreV1Api, name: str, within: float = 30.0
                          ) -> tuple[float, bool]:
    """Poll the pod until it is ready: when it first was seen so, and whether it was first
    seen running but not ready."""
    seen_unready_running = False

    async def check() -> float | None:
        nonlocal seen_unready_running
        p = await core.read_namespaced_pod(name, NS)
        if ready(p):
            return time.monotonic()
        if p.status.phase == "Running":
            seen_unready_running = True
        return None

    at = await eventually(check, within=within, interval=0.05)
    return float(at), seen_unready_running


async def test_a_pod_with_ready_after_is_ready_only_after_the_delay(
        core: client.CoreV1Api) -> None:
    delay = 1.5
    created = time.monotonic()
    body: Any = pod("slow", annotations={READY_AFTER: str(delay)})
    await core.create_namespaced_pod(NS, body)
    at, seen_running = await watch_readiness(core, "slow")
    assert at - created >= delay
    assert seen_running  # running (its container started) and not yet ready meanwhile
    # A pod without the annotation is ready at once.
    body = pod("quick")
    await core.create_namespaced_pod(NS, body)
    await watch_readiness(core, "quick")


async def test_ready_after_by_label_selector_in_process(
        core: client.CoreV1Api, sim_cluster: LocalCluster) -> None:
    assert sim_cluster.simulation is not None
    sim_cluster.simulation.behaviors.set_ready_after(NS, 1.0, selector="app=chosen")
    created = time.monotonic()
    body: Any = pod("chosen", probe=True)
    await core.create_namespaced_pod(NS, body)
    at, seen_running = await watch_readiness(core, "chosen")
    assert at - created >= 1.0
    assert seen_running


def service(name: str) -> Any:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
            "spec": {"selector": {"app": name}, "ports": [{"port": 80}]}}


async def test_a_pod_with_stop_after_stays_terminating_and_leaves_the_endpoints_at_once(
        core: client.CoreV1Api, discovery_api: client.DiscoveryV1Api) -> None:
    delay = 3.0
    body: Any = pod("drain", annotations={STOP_AFTER: str(delay)})
    body["spec"]["terminationGracePeriodSeconds"] = 60
    await core.create_namespaced_service(NS, service("drain"))
    await core.create_namespaced_pod(NS, body)

    async def listed() -> bool:
        eps = await core.read_namespaced_endpoints("drain", NS)
        return any(a.target_ref.name == "drain" for s in eps.subsets or []
                   for a in s.addresses or [])

    await eventually(listed, within=30.0)
    deleted = time.monotonic()
    await core.delete_namespaced_pod("drain", NS)

    async def left() -> bool:
        eps = await core.read_namespaced_endpoints("drain", NS)
        if any(a.target_ref.name == "drain" for s in eps.subsets or []
               for a in s.addresses or []):
            return False
        slices = (await discovery_api.list_namespaced_endpoint_slice(
            NS, label_selector="kubernetes.io/service-name=drain")).items
        mine = [e for s in slices for e in s.endpoints or [] if e.target_ref.name == "drain"]
        return bool(mine) and all(not e.conditions.ready and e.conditions.terminating
                                  for e in mine)

    await eventually(left, within=30.0)
    # Out of the endpoints while still Terminating (draining): its container still runs.
    p = await core.read_namespaced_pod("drain", NS)
    if time.monotonic() - deleted < delay:  # (a very slow machine may be past the drain)
        assert p.metadata.deletion_timestamp is not None
        assert p.status.container_statuses[0].state.running is not None

    async def gone() -> float | None:
        items = (await core.list_namespaced_pod(
            NS, field_selector="metadata.name=drain")).items
        return None if items else time.monotonic()

    at = await eventually(gone, within=60.0, interval=0.1)
    assert at - deleted >= delay


async def test_a_stop_after_beyond_the_grace_period_is_killed_when_the_grace_ends(
        core: client.CoreV1Api) -> None:
    body: Any = pod("long-drain", annotations={STOP_AFTER: "120"})
    body["spec"]["terminationGracePeriodSeconds"] = 1
    await core.create_namespaced_pod(NS, body)
    p = await eventually(lambda: _running(core, "long-drain"), within=30.0)
    watching = asyncio.create_task(_until_gone(core, "long-drain", p.metadata.resource_version))
    await asyncio.sleep(0.05)
    deleted = time.monotonic()
    await core.delete_namespaced_pod("long-drain", NS)
    seen = await watching
    assert time.monotonic() - deleted >= 1.0
    term = next(o.status.container_statuses[0].state.terminated for o in seen
                if o.status.container_statuses
                and o.status.container_statuses[0].state.terminated)
    assert (term.exit_code, term.reason) == (137, "Error")


async def _running(core: client.CoreV1Api, name: str) -> client.V1Pod | None:
    p = await core.read_namespaced_pod(name, NS)
    return p if p.status.phase == "Running" else None


async def _until_gone(core: client.CoreV1Api, name: str, rv: str,
                      within: float = 60.0) -> list[client.V1Pod]:
    """The pod's watched states from `rv` until it is deleted."""
    seen: list[client.V1Pod] = []
    async with asyncio.timeout(within), watch.Watch().stream(
            core.list_namespaced_pod, NS, resource_version=rv,
            field_selector=f"metadata.name={name}", timeout_seconds=int(within)) as stream:
        async for event in stream:
            seen.append(event["object"])
            if event["type"] == "DELETED":
                break
    return seen
