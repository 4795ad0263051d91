"""deploy/examples: each renders, passes the API server's validation, and becomes Ready."""

from __future__ import annotations

import asyncio

import pytest
from e2e_support import EXAMPLES, OPERATOR, Env, OperatorProcess

NAMES = ["vllm-agg", "vllm-disagg", "vllm-multinode", "trtllm-multinode", "vllm-planner",
         "vllm-scaling-adapter"]


@pytest.mark.parametrize("name", NAMES)
async def test_example_renders(name: str) -> None:
    proc = await asyncio.create_subprocess_exec(
        str(OPERATOR), "render", "-f", str(EXAMPLES / f"{name}.yaml"),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await proc.communicate()
    assert proc.returncode == 0, err.decode()
    assert b"kind: DynamoComponentDeployment" in out


async def test_all_examples_become_ready(env: Env, operator: OperatorProcess) -> None:
    for name in NAMES:
        text = (EXAMPLES / f"{name}.yaml").read_text()
        assert "namespace:" not in text, f"{name}: examples go into the current namespace"
        await env.apply_example(name)
    # 1 + 2 + 8 + 8 + 2 + 1 GPUs of the simulated 32
    await env.k("wait", "--for=condition=Ready", "dgd", "--all", "--timeout=90s")
    out = await env.k("get", "dgd")
    assert out.count(" True ") == len(NAMES), out
    assert len(await env.names("dgdsa")) == 3
