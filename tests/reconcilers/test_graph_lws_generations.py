"""A graph stamped at the gate whose decode runs on LeaderWorkerSet and whose prefill on
one node (`backends.worker_generation.PROVIDER_GENERATION`, issue #28 item 6): both workers
carry one generation (the hash of every worker, as the original's), the prefill in its
`<graph>-prefill-<hash>` DCD, the decode in its one DCD `<graph>-decode` updated in place, and
the graph records that hash; a change of the prefill alone moves the decode's suffix too (so
the new prefill workers meet new decode workers only), told as LeaderWorkerSet's replacement.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from graph_harness import NS, events, eventually, graph, installed_client, operator

from backends.settings import OperatorSettings
from backends.worker_generation import PROVIDER_GENERATION
from controller.client import KubeClient
from hack.our_crds import COMPONENT_DEPLOYMENTS, GRAPH_DEPLOYMENTS

Json = dict[str, Any]
HASH = "nvidia.com/dynamo-worker-hash"
RECORDED = "nvidia.com/current-worker-hash-v2"
NEW = ".".join(str(n) for n in PROVIDER_GENERATION.min_version.numbers)


@pytest.fixture
async def client(kubeconfig: Path) -> AsyncIterator[KubeClient]:
    async with installed_client(kubeconfig) as c:
        yield c


def _worker(sub: str, image: str, nodes: int = 1) -> Json:
    return {"componentType": "worker", "subComponentType": sub, "replicas": 1,
            **({"multinode": {"nodeCount": nodes}} if nodes > 1 else {}),
            "resources": {"limits": {"gpu": "1"}},
            "extraPodSpec": {"mainContainer": {"image": image, "command": ["python3"],
                                               "args": ["-m", "dynamo.vllm"]}}}


def _suffix(dcd: Json) -> str | None:
    envs = dcd["spec"].get("envs") or []
    return next((e.get("value") for e in envs if e["name"] == "DYN_NAMESPACE_WORKER_SUFFIX"),
                None)


async def test_single_node_and_multinode_workers_share_one_generation(
        client: KubeClient, kubeconfig: Path) -> None:
    obj = graph(services={
        "Frontend": {"componentType": "frontend", "replicas": 1},
        "prefill": _worker("prefill", "img:1"),
        "decode": _worker("decode", "img:1", nodes=2),
    })
    obj["metadata"]["annotations"] = {"nvidia.com/dynamo-operator-origin-version": NEW}
    async with operator(kubeconfig, OperatorSettings(lws_enabled=True)):
        await client.create(GRAPH_DEPLOYMENTS, obj)

        async def generation(other_than: str | None = None) -> str | None:
            live = await client.get(GRAPH_DEPLOYMENTS, NS, "g")
            recorded = (live["metadata"].get("annotations") or {}).get(RECORDED)
            if not recorded or recorded == other_than:
                return None
            decode = await client.get(COMPONENT_DEPLOYMENTS, NS, "g-decode")
            prefill = await client.get(COMPONENT_DEPLOYMENTS, NS, f"g-prefill-{recorded}")
            for dcd in (decode, prefill):
                assert dcd["metadata"]["labels"][HASH] == recorded
                assert _suffix(dcd) == recorded
            return str(recorded)
        first = str(await eventually(generation))
        frontend = await client.get(COMPONENT_DEPLOYMENTS, NS, "g-frontend")
        envs = {e["name"]: e.get("value") for e in frontend["spec"].get("envs") or []}
        assert envs["DYN_NAMESPACE_PREFIX"] == f"{NS}-g"
        assert HASH not in frontend["metadata"]["labels"]

        # Only the prefill changes: the decode's LeaderWorkerSet is given the new suffix.
        await client.patch(GRAPH_DEPLOYMENTS, NS, "g", {"spec": {"services": {
            "prefill": {"extraPodSpec": {"mainContainer": {"image": "img:2"}}}}}})
        second = str(await eventually(lambda: generation(first)))
        assert second != first

        async def told() -> Json | None:
            warned = [e for e in await events(client, "g")
                      if e["reason"] == "RollingUpdateNotSupported"]
            return warned[0] if warned else None
        assert "decode" in (await eventually(told))["message"]
