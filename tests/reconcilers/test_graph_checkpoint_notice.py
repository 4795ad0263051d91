"""A graph asking for checkpoint and restore, which this operator does not do: its children
are made as without it (its pods start cold), and a Warning event says so once per generation
of the graph, not on every reconcile."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from graph_harness import (
    NS,
    Json,
    events,
    eventually,
    graph,
    installed_client,
    operator,
    worker_dcd,
)

from controller.client import KubeClient
from hack.our_crds import GRAPH_DEPLOYMENTS
from reconcilers.graph.checkpoint_notice import CHECKPOINT_IGNORED, checkpointed_components


@pytest.fixture
async def client(kubeconfig: Path) -> AsyncIterator[KubeClient]:
    async with installed_client(kubeconfig) as c:
        yield c


async def _warnings(client: KubeClient) -> list[Json]:
    return [e for e in await events(client, "g") if e["reason"] == CHECKPOINT_IGNORED]


def _count(warnings: list[Json]) -> int:
    return sum(int(e.get("count") or 1) for e in warnings)


async def test_a_checkpointed_graph_is_warned_once_per_generation(
        client: KubeClient, kubeconfig: Path) -> None:
    manifest = graph()
    manifest["spec"]["services"]["decode"]["checkpoint"] = {"enabled": True}
    async with operator(kubeconfig):
        await client.create(GRAPH_DEPLOYMENTS, manifest)
        [warning] = await eventually(lambda: _warnings(client))
        assert warning["type"] == "Warning"
        assert "decode start cold" in warning["message"]
        await eventually(lambda: worker_dcd(client, "decode"))
        # A change of metadata only is reconciled without a new generation: no new warning.
        await client.patch(GRAPH_DEPLOYMENTS, NS, "g", {"metadata": {"labels": {"x": "1"}}})
        await client.patch(GRAPH_DEPLOYMENTS, NS, "g",
                           {"spec": {"services": {"Frontend": {"replicas": 2}}}})

        async def generation_observed() -> bool:
            obj = await client.get(GRAPH_DEPLOYMENTS, NS, "g")
            return bool(obj["status"].get("observedGeneration") == obj["metadata"]["generation"])
        await eventually(generation_observed)
        assert _count(await eventually(lambda: _said_twice(client))) == 2


async def _said_twice(client: KubeClient) -> list[Json] | None:
    warnings = await _warnings(client)
    return warnings if _count(warnings) == 2 else None


async def test_a_graph_without_checkpoints_is_not_warned(
        client: KubeClient, kubeconfig: Path) -> None:
    async with operator(kubeconfig):
        await client.create(GRAPH_DEPLOYMENTS, graph())
        await eventually(lambda: worker_dcd(client, "decode"))
        await eventually(lambda: _observed(client))
        assert await _warnings(client) == []


async def _observed(client: KubeClient) -> bool:
    obj = await client.get(GRAPH_DEPLOYMENTS, NS, "g")
    return "observedGeneration" in (obj.get("status") or {})


def test_checkpointed_components_reads_the_stored_graph() -> None:
    stored = {"spec": {"components": [
        {"name": "a", "experimental": {"checkpoint": {"enabled": True}}},
        {"name": "b", "experimental": {"checkpoint": {"enabled": False}}},
        {"name": "c"}]}}
    assert checkpointed_components(stored) == ["a"]
