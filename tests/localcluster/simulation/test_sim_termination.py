"""Graceful termination as the kubelet does it: SIGTERM, NotReady with terminated containers,
a terminal phase, then removal; SIGKILL (137) at the end of the grace for a stubborn one."""

from __future__ import annotations

import asyncio
from typing import Any

from kubernetes_asyncio import client, watch
from simulation_support import eventually, pod

from hack.localcluster.server import LocalCluster

NS = "default"


async def running_ready(core: client.CoreV1Api, name: str) -> client.V1Pod | None:
    p = await core.read_namespaced_pod(name, NS)
    ready = [c for c in p.status.conditions or [] if c.type == "Ready"]
    return p if p.status.phase == "Running" and ready and ready[0].status == "True" else None


async def events_until_gone(core: client.CoreV1Api, name: str, rv: str,
                            within: float = 10.0) -> list[tuple[str, Any]]:
    """Every watch event of one pod from `rv` until it is deleted."""
    seen: list[tuple[str, Any]] = []
    async with asyncio.timeout(within):
        async with watch.Watch().stream(core.list_namespaced_pod, NS, resource_version=rv,
                                        field_selector=f"metadata.name={name}",
                                        timeout_seconds=int(within)) as stream:
            async for event in stream:
                seen.append((event["type"], event["object"]))
                if event["type"] == "DELETED":
                    break
    return seen


def conditions(p: client.V1Pod) -> dict[str, str]:
    return {c.type: c.status for c in p.status.conditions or []}


async def test_deleted_pod_goes_not_ready_with_terminated_containers_before_removal(
        core: client.CoreV1Api) -> None:
    await core.create_namespaced_pod(NS, pod("bye"))
    p = await eventually(lambda: running_ready(core, "bye"))
    watching = asyncio.create_task(events_until_gone(core, "bye", p.metadata.resource_version))
    await asyncio.sleep(0.05)
    await core.delete_namespaced_pod("bye", NS)
    seen = await watching

    assert seen[-1][0] == "DELETED"
    stopped = [o for t, o in seen if t == "MODIFIED" and o.status.container_statuses
               and o.status.container_statuses[0].state.terminated]
    assert stopped, [(t, o.status.phase) for t, o in seen]
    last = stopped[0]
    assert last.metadata.deletion_timestamp is not None
    term = last.status.container_statuses[0].state.terminated
    assert (term.exit_code, term.reason) == (0, "Completed")
    assert last.status.container_statuses[0].ready is False
    assert conditions(last)["Ready"] == "False"
    assert conditions(last)["ContainersReady"] == "False"
    assert last.status.phase == "Succeeded"  # kubelet 1.27+: deleted pods end in a terminal phase
    # Before that, while SIGTERM was being handled, the pod was still Running.
    before = [o for t, o in seen if t == "MODIFIED" and o.status.phase == "Running"
              and o.metadata.deletion_timestamp is not None]
    assert before, "the deletionTimestamp step (still Running) was not seen"
    reasons = {(e.reason, e.message) for e in (await core.list_namespaced_event(NS)).items
               if e.involved_object.name == "bye"}
    assert ("Killing", "Stopping container app") in reasons


async def test_container_ignoring_sigterm_is_killed_at_the_end_of_the_grace(
        core: client.CoreV1Api, sim_cluster: LocalCluster) -> None:
    assert sim_cluster.simulation is not None
    body = pod("stubborn", annotations={"localcluster.dev/stop": "ignore-sigterm"})
    await core.create_namespaced_pod(NS, body)
    p = await eventually(lambda: running_ready(core, "stubborn"))
    clock = sim_cluster.simulation.clock
    watching = asyncio.create_task(events_until_gone(core, "stubborn",
                                                     p.metadata.resource_version))
    await asyncio.sleep(0.05)
    t0 = clock.now()
    await core.delete_namespaced_pod("stubborn", NS, grace_period_seconds=1)
    await asyncio.sleep(0.5)
    p = await core.read_namespaced_pod("stubborn", NS)
    assert p.status.container_statuses[0].state.running is not None  # still in its grace
    seen = await watching
    assert clock.now() - t0 >= 1.0
    killed = next(o for t, o in seen if o.status.container_statuses
                  and o.status.container_statuses[0].state.terminated)
    term = killed.status.container_statuses[0].state.terminated
    assert (term.exit_code, term.reason) == (137, "Error")
    assert killed.status.phase == "Failed"
    assert conditions(killed)["Ready"] == "False"


async def test_job_pod_dies_of_sigterm(core: client.CoreV1Api) -> None:
    body = pod("task", restart="Never", annotations={"localcluster.dev/job-outcome": "succeed",
                                                     "localcluster.dev/job-duration": "30"})
    await core.create_namespaced_pod(NS, body)

    async def running() -> client.V1Pod | None:
        p = await core.read_namespaced_pod("task", NS)
        return p if p.status.phase == "Running" else None

    p = await eventually(running)
    watching = asyncio.create_task(events_until_gone(core, "task", p.metadata.resource_version))
    await asyncio.sleep(0.05)
    await core.delete_namespaced_pod("task", NS)
    seen = await watching
    stopped = next(o for t, o in seen if o.status.container_statuses
                   and o.status.container_statuses[0].state.terminated)
    assert stopped.status.container_statuses[0].state.terminated.exit_code == 143
    assert stopped.status.phase == "Failed"
