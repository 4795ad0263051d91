"""The simulated kubelet: pod lifecycle, statuses, readiness switches, failure modes, deletion."""

from __future__ import annotations

import asyncio
import ipaddress

import aiohttp
from aiohttp import web
from kubernetes_asyncio import client
from simulation_support import condition, eventually, pod

from hack.localcluster.server import LocalCluster
from hack.localcluster.simulation import MODE, READY

NS = "default"


async def phase_ready(core: client.CoreV1Api, name: str, ready: bool = True
                      ) -> client.V1Pod | None:
    p = await core.read_namespaced_pod(name, NS)
    c = condition(p, "Ready")
    if p.status.phase == "Running" and c is not None and (c.status == "True") == ready:
        return p
    return None


async def test_pod_runs_and_becomes_ready(core: client.CoreV1Api,
                                          sim_cluster: LocalCluster) -> None:
    assert sim_cluster.simulation is not None
    clock = sim_cluster.simulation.clock
    t0 = clock.now()
    await core.create_namespaced_pod(NS, pod("web"))
    p = await eventually(lambda: phase_ready(core, "web"))
    assert clock.now() - t0 >= sim_cluster.simulation.config.delays.pod_start
    assert [c.type for c in p.status.conditions] == [
        "PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"]
    assert all(c.status == "True" for c in p.status.conditions)
    assert ipaddress.ip_address(p.status.pod_ip) in ipaddress.ip_network("127.0.1.0/24")
    assert p.status.host_ip.startswith("127.0.0.")
    assert p.status.start_time is not None
    cs = p.status.container_statuses[0]
    assert (cs.name, cs.ready, cs.started, cs.restart_count) == ("app", True, True, 0)
    assert cs.image == "docker.io/library/nginx:1.27"
    assert cs.container_id.startswith("containerd://")
    assert cs.state.running.started_at is not None
    reasons = {e.reason for e in (await core.list_namespaced_event(NS)).items
               if e.involved_object.name == "web"}
    assert {"Scheduled", "Pulled", "Created", "Started"} <= reasons


async def test_serving_http_inside_a_pod(core: client.CoreV1Api) -> None:
    await core.create_namespaced_pod(NS, pod("srv"))
    p = await eventually(lambda: phase_ready(core, "srv"))
    async def hello(_: web.Request) -> web.Response:
        return web.Response(text="hello from srv")

    app = web.Application()
    app.router.add_get("/", hello)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, p.status.pod_ip, 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        async with aiohttp.ClientSession() as http, \
                http.get(f"http://{p.status.pod_ip}:{port}/") as response:
            assert await response.text() == "hello from srv"
    finally:
        await runner.cleanup()


async def test_readiness_probe_delays_ready(core: client.CoreV1Api,
                                            sim_cluster: LocalCluster) -> None:
    await core.create_namespaced_pod(NS, pod("probed", probe=True))
    running = await eventually(lambda: phase_ready(core, "probed", ready=False))
    assert running.status.container_statuses[0].started is True
    await eventually(lambda: phase_ready(core, "probed"))


async def test_readiness_forced_by_annotation(core: client.CoreV1Api) -> None:
    await core.create_namespaced_pod(NS, pod("held", annotations={READY: "false"}))
    p = await eventually(lambda: phase_ready(core, "held", ready=False))
    ready = condition(p, "Ready")
    assert (ready.reason, ready.message) == ("ContainersNotReady",
                                             "containers with unready status: [app]")
    await asyncio.sleep(0.2)
    assert await phase_ready(core, "held", ready=False)
    await core.patch_namespaced_pod("held", NS, {"metadata": {"annotations": {READY: "true"}}})
    await eventually(lambda: phase_ready(core, "held"))


async def test_readiness_forced_in_process(core: client.CoreV1Api,
                                           sim_cluster: LocalCluster) -> None:
    assert sim_cluster.simulation is not None
    behaviors = sim_cluster.simulation.behaviors
    for name in ("a", "b"):
        body = pod(name)
        body["metadata"]["labels"]["tier"] = "x"
        await core.create_namespaced_pod(NS, body)
    for name in ("a", "b"):
        await eventually(lambda name=name: phase_ready(core, name))  # type: ignore[misc]
    behaviors.set_ready(NS, False, selector="tier=x")
    await eventually(lambda: phase_ready(core, "a", ready=False))
    await eventually(lambda: phase_ready(core, "b", ready=False))
    behaviors.set_ready(NS, True, name="b")
    await eventually(lambda: phase_ready(core, "b"))
    assert await phase_ready(core, "a", ready=False)


async def test_crash_loop(core: client.CoreV1Api, sim_cluster: LocalCluster) -> None:
    await core.create_namespaced_pod(NS, pod("crashy", annotations={MODE: "crashloop"}))

    async def backing_off() -> client.V1ContainerStatus | None:
        p = await core.read_namespaced_pod("crashy", NS)
        cs = (p.status.container_statuses or [None])[0]
        waiting = cs.state.waiting if cs is not None else None
        if waiting is not None and waiting.reason == "CrashLoopBackOff" and cs.restart_count >= 2:
            return cs  # type: ignore[no-any-return]
        return None

    cs = await eventually(backing_off)
    assert cs.ready is False and cs.started is False
    assert cs.last_state.terminated.exit_code == 1
    assert cs.last_state.terminated.reason == "Error"
    assert "restarting failed container=app pod=crashy_default(" in cs.state.waiting.message
    p = await core.read_namespaced_pod("crashy", NS)
    assert p.status.phase == "Running"
    assert condition(p, "Ready").status == "False"
    events = [e for e in (await core.list_namespaced_event(NS)).items
              if e.involved_object.name == "crashy" and e.reason == "BackOff"]
    assert events and events[0].type == "Warning" and events[0].count >= 2
    # Back to normal: the next start stays up.
    assert sim_cluster.simulation is not None
    sim_cluster.simulation.behaviors.set_mode(NS, "run", name="crashy")
    await eventually(lambda: phase_ready(core, "crashy"))


async def test_image_pull_failure(core: client.CoreV1Api, sim_cluster: LocalCluster) -> None:
    assert sim_cluster.simulation is not None
    sim_cluster.simulation.behaviors.set_mode(NS, "image-pull-failure", selector="app=bad")
    await core.create_namespaced_pod(NS, pod("bad", image="registry.example.com/no/such:tag"))
    seen: set[str] = set()

    async def both() -> bool:
        p = await core.read_namespaced_pod("bad", NS)
        cs = (p.status.container_statuses or [None])[0]
        if cs is not None and cs.state.waiting is not None:
            seen.add(cs.state.waiting.reason)
            assert p.status.phase == "Pending"
            assert cs.image_id == ""
        return {"ErrImagePull", "ImagePullBackOff"} <= seen

    await eventually(both)
    p = await core.read_namespaced_pod("bad", NS)
    assert p.status.pod_ip is not None  # the sandbox exists; only the image is missing
    reasons = {(e.reason, e.message) for e in (await core.list_namespaced_event(NS)).items
               if e.involved_object.name == "bad"}
    assert ("Failed", "Error: ErrImagePull") in reasons
    assert ("BackOff", 'Back-off pulling image "registry.example.com/no/such:tag"') in reasons


async def test_graceful_deletion_is_finished_by_the_kubelet(core: client.CoreV1Api) -> None:
    await core.create_namespaced_pod(NS, pod("bye"))
    await eventually(lambda: phase_ready(core, "bye"))
    await core.delete_namespaced_pod("bye", NS)
    p = await core.read_namespaced_pod("bye", NS)
    assert p.metadata.deletion_timestamp is not None
    assert p.metadata.deletion_grace_period_seconds == 30

    async def gone() -> bool:
        try:
            await core.read_namespaced_pod("bye", NS)
        except client.ApiException as err:
            return err.status == 404
        return False

    await eventually(gone)


async def test_run_to_completion_pod(core: client.CoreV1Api) -> None:
    body = pod("once", restart="Never",
               annotations={"localcluster.dev/job-outcome": "fail",
                            "localcluster.dev/job-duration": "0.05"})
    await core.create_namespaced_pod(NS, body)

    async def failed() -> client.V1Pod | None:
        p = await core.read_namespaced_pod("once", NS)
        return p if p.status.phase == "Failed" else None

    p = await eventually(failed)
    term = p.status.container_statuses[0].state.terminated
    assert (term.exit_code, term.reason) == (1, "Error")
    assert condition(p, "Ready").reason == "PodFailed"


async def test_deleting_a_namespace_with_running_pods(core: client.CoreV1Api) -> None:
    await core.create_namespace({"metadata": {"name": "temp"}})
    body = pod("inside")
    await core.create_namespaced_pod("temp", body)

    async def running() -> bool:
        p = await core.read_namespaced_pod("inside", "temp")
        return bool(p.status.phase == "Running")

    await eventually(running)
    await core.delete_namespace("temp")

    async def gone() -> bool:
        try:
            await core.read_namespace("temp")
        except client.ApiException as err:
            return err.status == 404
        return False

    await eventually(gone)
