"""`spec.restart.id`: every pod of the graph is replaced, sequentially or all at once."""

from __future__ import annotations

import json

import pytest
from e2e_support import DGD, Env, OperatorProcess, eventually


async def pod_names(env: Env) -> set[str]:
    items = (await env.get(
        "pods", selector="nvidia.com/dynamo-graph-deployment-name=vllm-agg"))["items"]
    return {p["metadata"]["name"] for p in items if not p["metadata"].get("deletionTimestamp")}


@pytest.mark.parametrize("strategy", ["Sequential", "Parallel"])
async def test_restart(env: Env, operator: OperatorProcess, strategy: str) -> None:
    await env.apply_example("vllm-agg")
    await env.wait_ready("vllm-agg")
    before = await pod_names(env)
    assert len(before) == 2
    await env.k("patch", DGD, "vllm-agg", "--type=merge", "-p", json.dumps(
        {"spec": {"restart": {"id": "r-1", "strategy": {"type": strategy}}}}))
    phases: list[str] = []

    async def completed() -> bool:
        restart = ((await env.get(DGD, "vllm-agg")).get("status") or {}).get("restart") or {}
        phase = restart.get("phase")
        if phase and (not phases or phases[-1] != phase):
            phases.append(phase)
        return phase == "Completed" and restart.get("observedID") == "r-1"

    await eventually(completed, within=60, interval=0.1, what="restart r-1 completed")
    await env.wait_ready("vllm-agg")
    after = await pod_names(env)
    assert len(after) == 2
    assert not before & after, (before, after)
    assert phases[-1] == "Completed"
    assert "Restarting" in phases or "Pending" in phases, phases
