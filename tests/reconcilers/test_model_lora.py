"""A LoRA DynamoModel against simulated workers that answer HTTP: loaded on every ready pod,
only where needed, retried where refused, never stalled by a hanging pod, and unloaded on
deletion whatever the workers say."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from model_support import (
    FAST,
    LORA_NAME,
    LORA_URI,
    NS,
    ModelEnv,
    dynamo_model,
    model_env,
    ready_is,
    worker_dcd,
)
from operator_harness import OPERATOR_AGENT, condition, eventually

from controller.errors import NotFound
from hack.localcluster.server import LocalCluster
from hack.localcluster.simulation.worker_faults import LOAD_PATH, UNLOAD_PATH, Fault
from hack.our_crds import COMPONENT_DEPLOYMENTS
from reconcilers.machinery.resources import MODELS


async def start_workers(env: ModelEnv, replicas: int = 3) -> list[str]:
    """A worker component with `replicas` running pods; their names."""
    await env.kube.create(COMPONENT_DEPLOYMENTS, worker_dcd(replicas=replicas))

    async def running() -> list[str] | None:
        pods = await env.worker_pods()
        ready = [p for p in pods if env.workers.endpoint(NS, p) is not None]
        return ready if len(ready) == replicas else None

    return list(await eventually(running))


def loads(env: ModelEnv, pod: str | None = None) -> int:
    return len([c for e in [*env.workers.history, *env.workers.endpoints.values()]
                if pod is None or e.name == pod for c in e.calls if c.path == LOAD_PATH])


async def test_lora_is_loaded_on_every_pod_and_on_a_pod_added_later(
        sim_cluster: LocalCluster, tmp_path: Path) -> None:
    async with model_env(sim_cluster, tmp_path / "sim" / "kubeconfig") as env:
        pods = await start_workers(env)
        await env.kube.create(MODELS, dynamo_model("lora", lora=True))
        obj = await env.wait_model("lora", ready_is("True", "AllEndpointsReady", 3, 3))
        assert condition(obj, "EndpointsReady")["message"] == "All 3 endpoint(s) are ready"
        for pod in pods:
            assert env.workers.loaded(NS, pod) == {LORA_NAME}
        (call,) = [c for c in env.workers.calls(NS, LOAD_PATH)
                   if c.body and c.body.get("lora_name") == LORA_NAME][:1]
        assert call.body == {"lora_name": LORA_NAME, "source": {"uri": LORA_URI}}
        assert all(e["ready"] and e["loadedOn"].endswith("/0")
                   for e in obj["status"]["endpoints"])
        assert await env.events("lora", "EndpointsReady")
        assert loads(env) == 3

        await env.scale(4)
        obj = await env.wait_model("lora", ready_is("True", "AllEndpointsReady", 4, 4))
        (new,) = set(await env.worker_pods()) - set(pods)
        assert env.workers.loaded(NS, new) == {LORA_NAME}
        assert loads(env) == 4  # the three loaded pods were not called again


async def test_a_refusing_pod_is_reported_and_retried_until_it_accepts(
        sim_cluster: LocalCluster, tmp_path: Path) -> None:
    async with model_env(sim_cluster, tmp_path / "sim" / "kubeconfig") as env:
        pods = await start_workers(env)
        bad = pods[0]
        env.workers.set_fault(NS, Fault.refuse(503, '{"status": "error", "message": "no GPU"}'),
                              name=bad)
        await env.kube.create(MODELS, dynamo_model("lora", lora=True))
        obj = await env.wait_model("lora", ready_is("False", "NotReady", 3, 2))
        assert (condition(obj, "EndpointsReady")["message"]
                == "Found 2 ready endpoint(s) out of 3 total")
        assert [e["podName"] for e in obj["status"]["endpoints"] if not e["ready"]] == [bad]
        (failure,) = await env.events("lora", "PartialEndpointFailure")
        assert failure["type"] == "Warning"
        assert "load LoRA failed with status 503" in failure["message"]
        assert "no GPU" in failure["message"]
        assert (await env.events("lora", "NotReady"))[0]["type"] == "Warning"
        # Retried after LoraSettings.retry_after, without any other event.
        await eventually(lambda: loads(env, bad) >= 3)
        assert loads(env) - loads(env, bad) == 2  # the good pods were loaded once

        env.workers.set_fault(NS, Fault.none(), name=bad)
        obj = await env.wait_model("lora", ready_is("True", "AllEndpointsReady", 3, 3))
        assert env.workers.loaded(NS, bad) == {LORA_NAME}


async def test_a_hanging_pod_does_not_hold_the_others_beyond_the_overall_timeout(
        sim_cluster: LocalCluster, tmp_path: Path) -> None:
    async with model_env(sim_cluster, tmp_path / "sim" / "kubeconfig") as env:
        pods = await start_workers(env)
        env.workers.set_fault(NS, Fault.hang(), name=pods[0])
        started = time.monotonic()
        await env.kube.create(MODELS, dynamo_model("lora", lora=True))
        obj = await env.wait_model("lora", ready_is("False", "NotReady", 3, 2))
        assert time.monotonic() - started < FAST.overall_timeout + 1.5
        for pod in pods[1:]:
            assert env.workers.loaded(NS, pod) == {LORA_NAME}
        # The Warning event follows the status write that the wait above saw.
        (failure,) = (await eventually(lambda: env.events("lora", "PartialEndpointFailure")))[:1]
        assert "no answer within" in failure["message"]
        assert [e["podName"] for e in obj["status"]["endpoints"] if not e["ready"]] == [pods[0]]


async def test_unready_endpoints_are_never_called_and_loaded_once_ready(
        sim_cluster: LocalCluster, tmp_path: Path) -> None:
    async with model_env(sim_cluster, tmp_path / "sim" / "kubeconfig") as env:
        sim = sim_cluster.simulation
        assert sim is not None
        pods = await start_workers(env, replicas=2)
        sim.behaviors.set_ready(NS, False, name=pods[0])
        await env.kube.create(MODELS, dynamo_model("lora", lora=True))
        await env.wait_model("lora", ready_is("False", "NotReady", 2, 1))
        await asyncio.sleep(3 * FAST.retry_after)
        assert loads(env, pods[0]) == 0
        sim.behaviors.set_ready(NS, True, name=pods[0])
        await env.wait_model("lora", ready_is("True", "AllEndpointsReady", 2, 2))
        assert loads(env, pods[0]) == 1


async def test_a_restarted_container_gets_the_adapter_again(
        sim_cluster: LocalCluster, tmp_path: Path) -> None:
    async with model_env(sim_cluster, tmp_path / "sim" / "kubeconfig") as env:
        sim = sim_cluster.simulation
        assert sim is not None
        pods = await start_workers(env, replicas=2)
        await env.kube.create(MODELS, dynamo_model("lora", lora=True))
        await env.wait_model("lora", ready_is("True", "AllEndpointsReady", 2, 2))
        first = env.workers.endpoint(NS, pods[0])
        assert first is not None
        sim.behaviors.set_mode(NS, "crashloop", name=pods[0])
        await eventually(lambda: (env.workers.endpoint(NS, pods[0]) or first) is not first)
        sim.behaviors.set_mode(NS, "run", name=pods[0])

        def restarted_with_adapter(obj: dict[str, Any]) -> bool:
            endpoints = (obj.get("status") or {}).get("endpoints") or []
            mine = [e for e in endpoints if e["podName"] == pods[0]]
            return bool(mine) and mine[0]["ready"] and not mine[0]["loadedOn"].endswith("/0")

        await env.wait_model("lora", restarted_with_adapter)
        assert env.workers.loaded(NS, pods[0]) == {LORA_NAME}
        assert loads(env, pods[1]) == 1


async def test_deletion_unloads_everywhere_and_a_refusing_pod_does_not_block_it(
        sim_cluster: LocalCluster, tmp_path: Path) -> None:
    async with model_env(sim_cluster, tmp_path / "sim" / "kubeconfig") as env:
        pods = await start_workers(env)
        await env.kube.create(MODELS, dynamo_model("lora", lora=True))
        await env.wait_model("lora", ready_is("True", "AllEndpointsReady", 3, 3))
        env.workers.set_fault(NS, Fault.refuse(500, paths=(UNLOAD_PATH,)), name=pods[0])
        await env.kube.delete(MODELS, NS, "lora")

        async def gone() -> bool:
            try:
                await env.model("lora")
            except NotFound:
                return True
            return False

        await eventually(gone)
        assert env.workers.loaded(NS, pods[0]) == {LORA_NAME}
        for pod in pods[1:]:
            assert env.workers.loaded(NS, pod) == set()
        unloads = env.workers.calls(NS, UNLOAD_PATH)
        assert len(unloads) == 3
        assert all(c.body == {"lora_name": LORA_NAME} for c in unloads)
        (failed,) = await env.events("lora", "LoRAUnloadFailed")
        assert failed["type"] == "Warning"
        assert failed["message"].startswith("Failed to unload LoRA from some endpoints: ")


async def test_deletion_reports_every_unload(sim_cluster: LocalCluster, tmp_path: Path) -> None:
    async with model_env(sim_cluster, tmp_path / "sim" / "kubeconfig") as env:
        pods = await start_workers(env, replicas=2)
        await env.kube.create(MODELS, dynamo_model("lora", lora=True))
        await env.wait_model("lora", ready_is("True", "AllEndpointsReady", 2, 2))
        await env.kube.delete(MODELS, NS, "lora")
        (done,) = await eventually(lambda: env.events("lora", "LoRAUnloaded"))
        assert done["message"] == "Unloaded LoRA from 2 endpoint(s)"
        assert all(env.workers.loaded(NS, p) == set() for p in pods)


async def test_idle_once_ready_no_writes_and_no_calls(
        sim_cluster: LocalCluster, tmp_path: Path) -> None:
    async with model_env(sim_cluster, tmp_path / "sim" / "kubeconfig") as env:
        await start_workers(env)
        await env.kube.create(MODELS, dynamo_model("lora", lora=True))
        await env.wait_model("lora", ready_is("True", "AllEndpointsReady", 3, 3))
        await asyncio.sleep(0.5)  # the last status write's own watch event comes back
        calls = len(env.workers.calls())
        sim_cluster.stats.reset()
        await asyncio.sleep(10 * FAST.retry_after)
        assert sim_cluster.stats.writes(user_agent=OPERATOR_AGENT) == 0, (
            sim_cluster.stats.snapshot())
        assert sim_cluster.stats.count(user_agent=OPERATOR_AGENT, verb="get") == 0
        assert len(env.workers.calls()) == calls


async def test_a_new_source_is_loaded_everywhere_again(
        sim_cluster: LocalCluster, tmp_path: Path) -> None:
    async with model_env(sim_cluster, tmp_path / "sim" / "kubeconfig") as env:
        pods = await start_workers(env, replicas=2)
        await env.kube.create(MODELS, dynamo_model("lora", lora=True))
        await env.wait_model("lora", ready_is("True", "AllEndpointsReady", 2, 2))
        uri = "hf://org/support-lora@v2"
        await env.kube.patch(MODELS, NS, "lora", {"spec": {"source": {"uri": uri}}})

        def reloaded() -> bool:
            endpoints = [env.workers.endpoint(NS, p) for p in pods]
            return all(e is not None and e.loras.get(LORA_NAME) == uri for e in endpoints)

        await eventually(reloaded)
        ready = ready_is("True", "AllEndpointsReady", 2, 2)
        # The status of generation 1 said the same: wait for the one of generation 2.
        await env.wait_model("lora", lambda o: ready(o) and (
            o.get("status") or {}).get("observedGeneration") == 2)
        assert loads(env) == 4
