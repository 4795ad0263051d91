"""Graph restarts against the local API server (spec §2.10, scenarios 16 and 17), and a graph
created with a restart id, which must not restart its fresh pods."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from graph_harness import (
    NS,
    eventually,
    graph,
    installed_client,
    operator,
    report,
    worker_name,
)

from controller.client import KubeClient
from hack.our_crds import COMPONENT_DEPLOYMENTS, GRAPH_DEPLOYMENTS
from reconcilers.machinery.children import GENERATION_ANNOTATION

RESTART_AT = "nvidia.com/restartAt"
Json = dict[str, Any]


@pytest.fixture
async def client(kubeconfig: Path) -> AsyncIterator[KubeClient]:
    async with installed_client(kubeconfig) as c:
        yield c


def two_workers(**spec: Any) -> Json:
    return graph(services={"a": {"componentType": "worker"}, "b": {"componentType": "worker"}},
                 **spec)


#: The workers' DCDs, g-a-<hash> and g-b-<hash>: one generation, which a restart keeps.
A, B = (worker_name(two_workers(), service) for service in ("a", "b"))


async def token(client: KubeClient, name: str) -> str | None:
    dcd = await client.get(COMPONENT_DEPLOYMENTS, NS, name)
    return ((dcd["spec"].get("annotations") or {}).get(RESTART_AT))


async def restart_status(client: KubeClient, wanted: Json) -> None:
    async def check() -> bool:
        obj = await client.get(GRAPH_DEPLOYMENTS, NS, "g")
        return (obj.get("status") or {}).get("restart") == wanted
    await eventually(check)


async def running(client: KubeClient) -> None:
    """Both DCDs exist and report ready at their current generation."""
    for name in (A, B):
        await eventually(lambda n=name: client.get(COMPONENT_DEPLOYMENTS, NS, n))
        await report(client, name, 1)


async def rolled(client: KubeClient, name: str) -> None:
    """The DCD has its restart token and has rolled it out."""
    await eventually(lambda: token(client, name))
    await report(client, name, 1)


async def test_sequential_restart(client: KubeClient, kubeconfig: Path) -> None:
    async with operator(kubeconfig):
        await client.create(GRAPH_DEPLOYMENTS, two_workers())
        await running(client)
        await client.patch(GRAPH_DEPLOYMENTS, NS, "g", {"spec": {"restart": {"id": "r1"}}})
        await restart_status(client, {"observedID": "r1", "phase": "Restarting",
                                      "inProgress": ["a"]})
        assert await eventually(lambda: token(client, A)) == "r1"
        assert await token(client, B) is None
        await rolled(client, A)
        await restart_status(client, {"observedID": "r1", "phase": "Restarting",
                                      "inProgress": ["b"]})
        assert await eventually(lambda: token(client, B)) == "r1"
        assert await token(client, A) == "r1"
        await rolled(client, B)
        await restart_status(client, {"observedID": "r1", "phase": "Completed"})
        # Removing the request keeps the record and the tokens: nothing restarts again.
        await client.patch(GRAPH_DEPLOYMENTS, NS, "g", {"spec": {"restart": None}})
        await eventually(lambda: _observed(client))
        assert (await token(client, A), await token(client, B)) == ("r1", "r1")
        obj = await client.get(GRAPH_DEPLOYMENTS, NS, "g")
        assert obj["status"]["restart"] == {"observedID": "r1", "phase": "Completed"}


async def _observed(client: KubeClient) -> bool:
    obj = await client.get(GRAPH_DEPLOYMENTS, NS, "g")
    return bool(obj["status"].get("observedGeneration") == obj["metadata"]["generation"])


async def test_parallel_restart_in_given_order(client: KubeClient, kubeconfig: Path) -> None:
    async with operator(kubeconfig):
        await client.create(GRAPH_DEPLOYMENTS, two_workers())
        await running(client)
        await client.patch(GRAPH_DEPLOYMENTS, NS, "g", {"spec": {"restart": {
            "id": "p1", "strategy": {"type": "Parallel"}}}})
        await restart_status(client, {"observedID": "p1", "phase": "Restarting",
                                      "inProgress": ["a", "b"]})
        assert await eventually(lambda: token(client, B)) == "p1"
        assert await token(client, A) == "p1"
        await rolled(client, B)
        await restart_status(client, {"observedID": "p1", "phase": "Restarting",
                                      "inProgress": ["a"]})
        await rolled(client, A)
        await restart_status(client, {"observedID": "p1", "phase": "Completed"})
        # A sequential request in an explicit order starts with the first service listed.
        await client.patch(GRAPH_DEPLOYMENTS, NS, "g", {"spec": {"restart": {
            "id": "s2", "strategy": {"type": "Sequential", "order": ["b", "a"]}}}})
        await restart_status(client, {"observedID": "s2", "phase": "Restarting",
                                      "inProgress": ["b"]})
        assert await eventually(lambda: _token_is(client, B, "s2"))
        assert await token(client, A) == "p1"


async def _token_is(client: KubeClient, name: str, wanted: str) -> bool:
    return await token(client, name) == wanted


async def test_created_with_restart_id_does_not_restart(client: KubeClient,
                                                        kubeconfig: Path) -> None:
    async with operator(kubeconfig):
        await client.create(GRAPH_DEPLOYMENTS, two_workers(restart={"id": "r0"}))
        await restart_status(client, {"observedID": "r0", "phase": "Completed"})
        for name in (A, B):
            dcd = await eventually(lambda n=name: client.get(COMPONENT_DEPLOYMENTS, NS, n))
            # Created with the token: generation 1, never updated for the restart.
            assert dcd["spec"]["annotations"][RESTART_AT] == "r0"
            assert dcd["metadata"]["annotations"][GENERATION_ANNOTATION] == "1"
        await running(client)

        async def successful() -> bool:
            obj = await client.get(GRAPH_DEPLOYMENTS, NS, "g")
            return bool(obj["status"]["state"] == "successful")
        await eventually(successful)
        assert (await client.get(COMPONENT_DEPLOYMENTS, NS, A))["metadata"]["generation"] == 1
