"""A graph's life through kubectl: create, scale, roll out, remove a service, delete."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from e2e_support import (
    DCD,
    DGD,
    Env,
    OperatorProcess,
    component_selector,
    eventually,
    watched_column,
    worker_dcd,
    worker_dcds,
)

SERVICE = "VllmDecodeWorker"
FRONTEND = "vllm-agg-frontend"
SEL = "nvidia.com/dynamo-graph-deployment-name=vllm-agg"
NEW_IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.7.0"


async def pods_of(env: Env, deployment: str) -> list[Any]:
    dep = await env.get("deploy", deployment)
    labels = dep["spec"]["selector"]["matchLabels"]
    sel = ",".join(f"{k}={v}" for k, v in labels.items())
    items: list[Any] = (await env.get("pods", selector=sel))["items"]
    return [p for p in items if not p["metadata"].get("deletionTimestamp")]


async def test_create_ready_and_wide_columns(env: Env, operator: OperatorProcess) -> None:
    await env.apply_example("vllm-agg")
    await env.wait_ready("vllm-agg")
    out = await env.k("get", DGD, "-o", "wide")
    header, row = out.splitlines()[:2]
    columns = dict(zip(header.split(), row.split(), strict=False))
    assert columns["READY"] == "True", out
    assert columns["BACKEND"] == "vllm", out
    assert columns["STATE"] == "successful", out
    worker = await worker_dcd(env, "vllm-agg", SERVICE)  # <graph>-<component>-<generation>
    assert await env.names(DCD) == [FRONTEND, worker]
    assert await env.names("deploy") == [FRONTEND, worker]
    assert FRONTEND in await env.names("svc")


async def test_scale_change_image_remove_service(env: Env, operator: OperatorProcess) -> None:
    await env.apply_example("vllm-agg")
    await env.wait_ready("vllm-agg")
    old = await worker_dcd(env, "vllm-agg", SERVICE)

    # scale: replicas 1 -> 3 on the worker, in place (scaling starts no generation)
    await env.k("patch", DGD, "vllm-agg", "--type=merge", "-p",
                json.dumps({"spec": {"services": {"VllmDecodeWorker": {"replicas": 3}}}}))

    async def three() -> bool:
        return len(await pods_of(env, old)) == 3
    await eventually(three, what="3 worker pods")
    await env.wait_ready("vllm-agg")
    assert await worker_dcd(env, "vllm-agg", SERVICE) == old

    # new image: a new worker generation (new DCD and Deployment names) replaces the old one;
    # Ready turns False naming the rollout, then True once the new generation serves
    old_pods = {p["metadata"]["name"] for p in await pods_of(env, old)}
    ready_reason = '.status.conditions[?(@.type=="Ready")].reason'
    async with watched_column(env, DGD, ready_reason) as reasons:
        await env.k("patch", DGD, "vllm-agg", "--type=json", "-p", json.dumps([{
            "op": "replace",
            "path": "/spec/services/VllmDecodeWorker/extraPodSpec/mainContainer/image",
            "value": NEW_IMAGE}]))
        await env.wait_ready("vllm-agg")

        async def back_to_ready() -> bool:
            return "rolling_update_in_progress" in reasons and (
                reasons[-1] == "all_resources_are_ready")
        await eventually(back_to_ready, what="the rollout's reason and then Ready, watched")
    new = await worker_dcd(env, "vllm-agg", SERVICE)
    assert new != old
    pods = await pods_of(env, new)
    assert len(pods) == 3
    assert not old_pods & {p["metadata"]["name"] for p in pods}
    images = {p["spec"]["containers"][0]["image"] for p in pods}
    assert images == {NEW_IMAGE}

    async def old_generation_gone() -> bool:
        every = (await env.get("pods", selector=component_selector("vllm-agg", SERVICE)))
        live = [p for p in every["items"] if not p["metadata"].get("deletionTimestamp")]
        return (old not in await env.names(DCD) and old not in await env.names("deploy")
                and old not in await env.names("svc") and len(live) == 3
                and not old_pods & {p["metadata"]["name"] for p in live})
    await eventually(old_generation_gone, what="the old generation's DCD, Deployment, pods")
    assert await env.names(DCD) == [FRONTEND, new]
    assert await env.names("deploy") == [FRONTEND, new]

    # remove a service: its DCD, Deployment and Service go away, the rest stays
    await env.k("patch", DGD, "vllm-agg", "--type=json", "-p", json.dumps([{
        "op": "remove", "path": "/spec/services/VllmDecodeWorker"}]))

    async def gone() -> bool:
        return (new not in await env.names(DCD) and new not in await env.names("deploy")
                and new not in await env.names("svc")
                and not await worker_dcds(env, "vllm-agg", SERVICE))
    await eventually(gone, what="the worker's children to be deleted")
    assert await env.names(DCD) == [FRONTEND]
    await env.wait_ready("vllm-agg")


async def test_delete_graph_collects_everything(env: Env, operator: OperatorProcess) -> None:
    await env.apply_example("vllm-agg")
    await env.wait_ready("vllm-agg")
    await env.k("delete", DGD, "vllm-agg", "--wait=true", "--timeout=30s")

    async def empty() -> bool:
        for kind in (DCD, "deploy", "svc", "pods"):
            if await env.names(kind, selector=SEL):
                return False
        return not await env.names(DCD)
    await eventually(empty, what="every child garbage collected")
    # nothing comes back once the graph is gone
    await asyncio.sleep(1.5)
    assert not await env.names(DCD)
    assert not await env.names("deploy")


async def test_replace_makes_no_duplicates(env: Env, operator: OperatorProcess) -> None:
    await env.apply_example("vllm-agg")
    await env.wait_ready("vllm-agg")
    worker = await worker_dcd(env, "vllm-agg", SERVICE)
    live = await env.get(DGD, "vllm-agg")
    for key in ("status",):
        live.pop(key, None)
    live["metadata"] = {"name": "vllm-agg", "resourceVersion":
                        live["metadata"]["resourceVersion"]}  # what a replace typically sends
    await env.k("replace", "-f", "-", stdin=json.dumps(live))
    await env.wait_ready("vllm-agg")
    await asyncio.sleep(1.0)
    assert await worker_dcd(env, "vllm-agg", SERVICE, within=0) == worker  # no generation
    assert await env.names(DCD) == [FRONTEND, worker]
    assert await env.names("deploy") == [FRONTEND, worker]
    assert len(await pods_of(env, worker)) == 1
    assert len(await env.names("rs")) == 2
