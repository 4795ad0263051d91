"""A simulated frontend counts, per worker generation, the complete prefill+decode pairs it can
route to: over real HTTP on the frontend pod's address and through kubectl port-forward, and
in-process (`Workers.serving_pairs`), from the live pods of its graph."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from kubernetes_asyncio import client
from simulation_support import eventually

from hack.localcluster.server import LocalCluster
from hack.localcluster.simulation.generations import frontend_view
from hack.localcluster.simulation.worker_routes import SERVING_PAIRS_PATH
from hack.localcluster.testing import Kubectl, kubectl_binary

NS = "default"
GRAPH = "g"
BASE = f"{NS}-{GRAPH}"
GEN_A, GEN_B = "aaaa1111", "bbbb2222"


def dynamo_pod(name: str, kind: str, *, suffix: str | None = None,
               worker_hash: str | None = None, graph: str = GRAPH,
               annotations: dict[str, str] | None = None) -> Any:
    """A pod as the operator shapes a frontend or worker: labels, ports and DYN_ env."""
    labels = {"nvidia.com/dynamo-component-type": kind,
              "nvidia.com/dynamo-graph-deployment-name": graph}
    if worker_hash:
        labels["nvidia.com/dynamo-worker-hash"] = worker_hash
    env = [{"name": "DYN_NAMESPACE", "value": f"{NS}-{graph}"}]
    if suffix:
        env.append({"name": "DYN_NAMESPACE_WORKER_SUFFIX", "value": suffix})
    port = {"name": "http", "containerPort": 8000} if kind == "frontend" else {
        "name": "system", "containerPort": 9090}
    meta: dict[str, Any] = {"name": name, "labels": labels}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"containers": [{"name": "main", "image": "dynamo:1", "env": env,
                                     "ports": [port]}]}}


def worker(name: str, kind: str, generation: str, *, registers_in: str | None = None,
           ready: bool = True) -> Any:
    return dynamo_pod(name, kind, worker_hash=generation, suffix=registers_in or generation,
                      annotations=None if ready else {"localcluster.dev/ready": "false"})


async def frontend_url(core: client.CoreV1Api, name: str = "fe") -> str:
    async def up() -> str | None:
        p = await core.read_namespaced_pod(name, NS)
        ready = any(c.type == "Ready" and c.status == "True"
                    for c in p.status.conditions or [])
        return f"http://{p.status.pod_ip}:8000" if ready else None
    return str(await eventually(up, within=30.0))


async def fetch(url: str) -> Any:
    async with aiohttp.ClientSession() as http, http.get(
            url + SERVING_PAIRS_PATH, timeout=aiohttp.ClientTimeout(total=10)) as r:
        assert r.status == 200, await r.text()
        return await r.json()


def summary(view: Any) -> dict[str, tuple[int, int, int, int, int]]:
    return {ns: (g["prefill"], g["decode"], g["aggregated"], g["pairs"],
                 g["crossGenerationPairs"]) for ns, g in view["generations"].items()}


async def test_pairs_per_generation_over_http_and_in_process(
        core: client.CoreV1Api, sim_cluster: LocalCluster) -> None:
    assert sim_cluster.simulation is not None
    workers = sim_cluster.simulation.workers
    pods = [dynamo_pod("fe", "frontend"),
            worker("prefill-a-0", "prefill", GEN_A), worker("prefill-a-1", "prefill", GEN_A),
            worker("decode-a-0", "decode", GEN_A),
            worker("prefill-b-0", "prefill", GEN_B), worker("decode-b-0", "decode", GEN_B),
            worker("decode-b-1", "decode", GEN_B, ready=False),
            # Another graph's worker is none of this frontend's business.
            dynamo_pod("other-decode", "decode", graph="other", suffix=GEN_A,
                       worker_hash=GEN_A)]
    for body in pods:
        await core.create_namespaced_pod(NS, body)
    url = await frontend_url(core)
    want = {f"{BASE}-{GEN_A}": (2, 1, 0, 1, 0), f"{BASE}-{GEN_B}": (1, 1, 0, 1, 0)}

    async def counted() -> Any:
        view = await fetch(url)
        return view if summary(view) == want else None

    view = await eventually(counted, within=30.0)
    assert view["frontend"] == "fe" and view["graph"] == GRAPH
    assert view["dynamoNamespace"] == BASE
    assert (view["pairs"], view["crossGenerationPairs"], view["misplaced"]) == (2, 0, [])
    gen_b = view["generations"][f"{BASE}-{GEN_B}"]
    assert gen_b["workerSuffix"] == GEN_B
    assert gen_b["pods"]["decode"] == ["decode-b-0"]  # decode-b-1 is not ready
    assert summary(workers.serving_pairs(NS, "fe")) == want

    # Generation B loses its prefill; a prefill of A registers in B's namespace: B pairs
    # across generations, which isolation forbids, and the frontend says so.
    await core.delete_namespaced_pod("prefill-b-0", NS)
    await core.create_namespaced_pod(NS, worker("stray", "prefill", GEN_A, registers_in=GEN_B))
    want = {f"{BASE}-{GEN_A}": (2, 1, 0, 1, 0), f"{BASE}-{GEN_B}": (1, 1, 0, 1, 1)}
    view = await eventually(counted, within=30.0)
    assert view["crossGenerationPairs"] == 1
    assert [(m["pod"], m["dynamoNamespace"], m["workerHash"]) for m in view["misplaced"]] == [
        ("stray", f"{BASE}-{GEN_B}", GEN_A)]
    in_process = workers.serving_pairs(NS, "fe")
    assert in_process is not None and in_process["misplaced"] == view["misplaced"]
    assert workers.serving_pairs(NS, "no-such-frontend") is None


@contextlib.asynccontextmanager
async def port_forward(k: Kubectl, *args: str) -> AsyncIterator[int]:
    """`kubectl port-forward` running; yields the local port."""
    env = {**os.environ, "KUBECONFIG": str(k.kubeconfig), "KUBECACHEDIR": str(k.cache_dir),
           "HOME": str(k.cache_dir)}
    proc = await asyncio.create_subprocess_exec(
        kubectl_binary(), "port-forward", *args, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, stdin=asyncio.subprocess.DEVNULL, env=env)
    try:
        assert proc.stdout is not None
        line = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode()
        assert line.startswith("Forwarding from 127.0.0.1:"), line
        yield int(line.split("127.0.0.1:")[1].split()[0])
    finally:
        if proc.returncode is None:
            proc.terminate()
        await proc.wait()


@pytest.mark.kubectl
async def test_pairs_through_port_forward(core: client.CoreV1Api,
                                          sim_kubectl: Kubectl) -> None:
    for body in (dynamo_pod("fe", "frontend"), worker("prefill-a-0", "prefill", GEN_A),
                 worker("decode-a-0", "decode", GEN_A)):
        await core.create_namespaced_pod(NS, body)
    await frontend_url(core)
    async with port_forward(sim_kubectl, "pod/fe", ":8000") as port:
        async def paired() -> Any:
            view = await fetch(f"http://127.0.0.1:{port}")
            return view if view["pairs"] == 1 else None
        view = await eventually(paired, within=30.0)
    assert summary(view) == {f"{BASE}-{GEN_A}": (1, 1, 0, 1, 0)}


# --- the view itself, on pod JSON -----------------------------------------------------------


def ready_pod(body: Any) -> Any:
    body["metadata"]["namespace"] = NS
    body["status"] = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
    return body


def test_aggregated_and_v1alpha1_sub_component_workers_in_the_base_namespace() -> None:
    fe = ready_pod(dynamo_pod("fe", "frontend"))
    prefill = ready_pod(dynamo_pod("p", "worker"))
    prefill["metadata"]["labels"]["nvidia.com/dynamo-sub-component-type"] = "prefill"
    decode = ready_pod(dynamo_pod("d", "worker"))
    decode["metadata"]["labels"]["nvidia.com/dynamo-sub-component-type"] = "decode"
    aggregated = ready_pod(dynamo_pod("w", "worker"))
    leaving = ready_pod(dynamo_pod("w-old", "worker"))
    leaving["metadata"]["deletionTimestamp"] = "2025-01-01T00:00:00Z"
    # Without graph labels the frontend's base namespace picks the workers.
    for p in (fe, prefill, decode, aggregated, leaving):
        del p["metadata"]["labels"]["nvidia.com/dynamo-graph-deployment-name"]
    foreign = ready_pod(dynamo_pod("x", "worker"))
    foreign["spec"]["containers"][0]["env"][0]["value"] = "elsewhere"
    del foreign["metadata"]["labels"]["nvidia.com/dynamo-graph-deployment-name"]
    view = frontend_view(fe, [fe, prefill, decode, aggregated, leaving, foreign])
    assert summary(view) == {BASE: (1, 1, 1, 2, 0)}
    assert view["generations"][BASE]["workerSuffix"] == ""
    assert view["misplaced"] == []


def test_a_worker_of_the_graph_outside_its_base_namespace_is_misplaced() -> None:
    fe = ready_pod(dynamo_pod("fe", "frontend"))
    lost = ready_pod(worker("lost", "decode", GEN_A))
    lost["spec"]["containers"][0]["env"][0]["value"] = "somewhere-else"
    view = frontend_view(fe, [fe, lost])
    assert view["generations"] == {}
    assert [(m["pod"], m["dynamoNamespace"]) for m in view["misplaced"]] == [
        ("lost", f"somewhere-else-{GEN_A}")]


def test_a_generation_worker_registered_in_the_bare_base_namespace_is_misplaced() -> None:
    """A labelled worker without its suffix would pair with the legacy generation's."""
    fe = ready_pod(dynamo_pod("fe", "frontend"))
    unsuffixed = ready_pod(dynamo_pod("p", "prefill", worker_hash=GEN_A))
    legacy = ready_pod(dynamo_pod("d", "decode"))
    view = frontend_view(fe, [fe, unsuffixed, legacy])
    assert [(m["pod"], m["dynamoNamespace"]) for m in view["misplaced"]] == [("p", BASE)]
    assert view["generations"][BASE]["crossGenerationPairs"] == 1
