"""A status payload annotation left by an operator that wrote statuses in v1alpha1 is removed
once this operator has written the object's status, so that v1alpha1 readers no longer see its
stale fields restored; an object without one gets no extra write."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from graph_harness import NS, eventually, graph, install, operator, setup_client

from api.conversion import convert
from controller.client import KubeClient
from hack.our_crds import GRAPH_DEPLOYMENTS as ALPHA_GRAPHS
from reconcilers.machinery.resources import GRAPH_DEPLOYMENTS

Json = dict[str, Any]
PAYLOAD = "nvidia.com/dgd-status"


@pytest.fixture
async def client(kubeconfig: Path) -> AsyncIterator[KubeClient]:
    c = await setup_client(kubeconfig)
    await install(c)
    try:
        yield c
    finally:
        await c.close()


async def test_an_older_operators_graph_status_payload_goes_with_the_first_status(
        client: KubeClient, kubeconfig: Path) -> None:
    # Stored as v1beta1 with the payload, as the storage migration leaves an old graph.
    stale = convert(graph("old"), "v1beta1")
    stale["metadata"]["annotations"] = {PAYLOAD: json.dumps({"state": "successful"})}
    await client.create(GRAPH_DEPLOYMENTS, stale)
    await client.create(GRAPH_DEPLOYMENTS, convert(graph("new"), "v1beta1"))
    async with operator(kubeconfig):
        async def written(name: str) -> Json | None:
            obj: Json = await client.get(GRAPH_DEPLOYMENTS, NS, name)
            return obj if (obj.get("status") or {}).get("state") else None

        old = await eventually(lambda: written("old"))
        new = await eventually(lambda: written("new"))
    annotations = old["metadata"].get("annotations") or {}
    assert PAYLOAD not in annotations
    assert PAYLOAD not in (new["metadata"].get("annotations") or {})
    # Read in v1alpha1, the graph shows this operator's state, not the payload's.
    alpha = await client.get(ALPHA_GRAPHS, NS, "old")
    assert alpha["status"]["state"] == old["status"]["state"] != "successful"
