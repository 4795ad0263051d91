"""A status payload annotation left by an operator that wrote statuses in v1alpha1 is removed
once this operator has written the object's status, so that v1alpha1 readers no longer see its
stale fields restored; an object without one gets no extra write."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from graph_harness import NS, eventually, graph, installed_client, operator

from api.conversion import convert
from controller.client import KubeClient
from hack.our_crds import GRAPH_DEPLOYMENTS as ALPHA_GRAPHS
from reconcilers.machinery.resources import GRAPH_DEPLOYMENTS

Json = dict[str, Any]
PAYLOAD = "nvidia.com/dgd-status"


@pytest.fixture
async def client(kubeconfig: Path) -> AsyncIterator[KubeClient]:
    async with installed_client(kubeconfig) as c:
        yield c


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

        # The payload goes right after the status write, so the status comes first.
        old = await eventually(lambda: written("old"))
        old = await eventually(lambda: _without_payload(client, "old"))
        new = await eventually(lambda: written("new"))
    assert PAYLOAD not in (new["metadata"].get("annotations") or {})
    assert old["status"]["state"]
    # Read in v1alpha1, the graph shows this operator's state, not the payload's.
    alpha = await client.get(ALPHA_GRAPHS, NS, "old")
    assert alpha["status"]["state"] == old["status"]["state"] != "successful"


async def _without_payload(client: KubeClient, name: str) -> Json | None:
    obj: Json = await client.get(GRAPH_DEPLOYMENTS, NS, name)
    return None if PAYLOAD in (obj["metadata"].get("annotations") or {}) else obj
