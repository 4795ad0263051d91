"""deploy/examples: each renders, passes the API server's validation, and becomes Ready."""

from __future__ import annotations

import asyncio
import base64
import json
import uuid
from collections.abc import Awaitable, Callable

import pytest
from e2e_support import DGD, DGDSA, EXAMPLES, OPERATOR, Env, OperatorProcess

NAMES = ["vllm-agg", "vllm-disagg", "vllm-multinode", "trtllm-multinode", "vllm-planner",
         "vllm-scaling-adapter", "vllm-epp"]
MPI_SECRET = "mpi-run-ssh-secret"


@pytest.mark.parametrize("name", NAMES)
async def test_example_renders(name: str) -> None:
    proc = await asyncio.create_subprocess_exec(
        str(OPERATOR), "render", "-f", str(EXAMPLES / f"{name}.yaml"),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await proc.communicate()
    assert proc.returncode == 0, err.decode()
    assert b"kind: DynamoComponentDeployment" in out


async def test_all_examples_become_ready(
        env: Env, operators: Callable[..., Awaitable[OperatorProcess]]) -> None:
    # The MPI SSH keys live where the operator is installed; it copies them to the graphs.
    keys = f"dynamo-system-{uuid.uuid4().hex[:6]}"
    await env.kubectl.run("create", "namespace", keys)
    secret = {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
              "metadata": {"name": MPI_SECRET, "namespace": keys},
              "data": {k: base64.b64encode(k.encode()).decode()
                       for k in ("private.key", "private.key.pub")}}
    (await env.kubectl.run("apply", "-f", "-", stdin=json.dumps(secret))).check()
    await operators("op", "--mpi-run-ssh-secret-namespace", keys)
    for name in NAMES:
        text = (EXAMPLES / f"{name}.yaml").read_text()
        assert "namespace:" not in text, f"{name}: examples go into the current namespace"
        await env.apply_example(name)
    # 1 + 2 + 8 + 8 + 2 + 1 + 1 GPUs of the simulated 32
    await env.k("wait", "--for=condition=Ready", DGD, "--all", "--timeout=90s")
    out = await env.k("get", DGD)
    assert out.count(" True ") == len(NAMES), out
    assert len(await env.names(DGDSA)) == 3
    # What their pods run as and mount, made by the operator.
    for kind, name in (("serviceaccount", "planner-serviceaccount"),
                       ("serviceaccount", "epp-serviceaccount"),
                       ("configmap", "vllm-epp-epp-config"),
                       ("inferencepool", "vllm-epp-pool"), ("secret", MPI_SECRET)):
        assert await env.get(kind, name) is not None, (kind, name)
    await env.kubectl.run("delete", "namespace", keys, "--wait=false")
