"""DynamoModels with the operator process and kubectl: the examples' base model and LoRA
adapter find the graph's workers, a worker added with `kubectl scale dgdsa` gets the adapter,
and deleting the adapter unloads it everywhere (asserted on the simulated workers). Each
worker, running with the Kubernetes discovery the operator set up, publishes its
DynamoWorkerMetadata, owned by its pod: the same pods the models list (from EndpointSlices,
as the original's controller finds them)."""

from __future__ import annotations

import asyncio

from e2e_support import DGDSA, DM, Env, OperatorProcess, eventually

from backends.naming import model_hash
from hack.localcluster.request_stats import WRITE_VERBS
from hack.localcluster.server import LocalCluster

GRAPH = "vllm-lora"
BASE = "Qwen/Qwen3-0.6B"
LORA = "qwen3-support-lora"
ADAPTER = "vllm-lora-vllmdecodeworker"
DWM = "dynamoworkermetadatas.v1alpha1.nvidia.com"


def non_lease_writes(cluster: LocalCluster) -> int:
    stats = cluster.stats
    return (stats.writes(user_agent="dynamo-operator")
            - stats.count(verbs=WRITE_VERBS, user_agent="dynamo-operator",
                          resource="leases.coordination.k8s.io"))


async def counts(env: Env, name: str) -> tuple[int, int] | None:
    obj = await env.get(DM, name)
    status = (obj or {}).get("status") or {}
    if "totalEndpoints" not in status:
        return None
    return int(status.get("readyEndpoints", 0)), int(status["totalEndpoints"])


async def published_as_listed(env: Env, name: str) -> bool:
    """Every pod the model lists has published its DynamoWorkerMetadata, owned by it, with
    the base model's card, and no other pod has."""
    status = ((await env.get(DM, name)) or {}).get("status") or {}
    listed = sorted(str(e.get("podName")) for e in status.get("endpoints") or ())
    found = {o["metadata"]["name"]: o for o in (await env.get(DWM))["items"]}
    if not listed or sorted(found) != listed:
        return False
    for pod_name, dwm in found.items():
        pod = await env.get("pod", pod_name)
        owners = [(r["kind"], r["uid"]) for r in dwm["metadata"].get("ownerReferences") or ()]
        cards = (dwm["spec"]["data"].get("model_cards") or {}).values()
        assert owners == [("Pod", pod["metadata"]["uid"])], dwm
        assert [c["card_json"]["display_name"] for c in cards] == [BASE], dwm
    return True


async def test_models_follow_the_graph_workers(
        env: Env, operator: OperatorProcess, needs_local: LocalCluster) -> None:
    assert needs_local.simulation is not None
    workers = needs_local.simulation.workers
    for example in (GRAPH, "dynamomodel-base", "dynamomodel-lora"):
        await env.apply_example(example)
    selector = f"nvidia.com/dynamo-base-model-hash={model_hash(BASE)}"

    async def loaded_on(replicas: int) -> bool:
        pods = await env.names("pod", selector)
        return (len(pods) == replicas and await counts(env, LORA) == (replicas, replicas)
                and all(workers.loaded(env.namespace, p) == {LORA} for p in pods))

    await eventually(lambda: loaded_on(2), what="the adapter on both workers")
    assert await counts(env, "qwen3-base") == (0, 2)  # a base model is discovered only
    table = await env.k("get", DM)
    lines = {line.split()[0]: line.split() for line in table.splitlines()[1:]}
    assert lines[LORA][1:5] == [BASE, "lora", "2", "2"], table
    assert lines["qwen3-base"][1:5] == [BASE, "base", "0", "2"], table
    await eventually(lambda: published_as_listed(env, "qwen3-base"),
                     what="each listed worker's DynamoWorkerMetadata")

    await env.k("scale", DGDSA, ADAPTER, "--replicas=3")
    await eventually(lambda: loaded_on(3), what="the adapter on the added worker")
    await eventually(lambda: published_as_listed(env, "qwen3-base"),
                     what="the added worker's DynamoWorkerMetadata")

    # Idle once every endpoint has the adapter: no writes but the lease, no worker calls.
    await asyncio.sleep(1.0)
    calls = len(workers.calls())
    writes = non_lease_writes(needs_local)
    await asyncio.sleep(3.0)
    assert non_lease_writes(needs_local) == writes, needs_local.stats.snapshot()
    assert len(workers.calls()) == calls

    pods = await env.names("pod", selector)
    await env.k("delete", DM, LORA, "--timeout=30s")
    assert await env.get(DM, LORA) is None
    assert all(workers.loaded(env.namespace, p) == set() for p in pods)
    unloads = [c for c in workers.calls(env.namespace, "/engine/v1/unload_lora")
               if (c.body or {}).get("lora_name") == LORA]
    assert len(unloads) == 3
    assert await counts(env, "qwen3-base") == (0, 3)
