"""What the DGD controller does with graphs it cannot run: invalid specs, multinode services
without an orchestrator, missing PVCs; and with graphs being deleted."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from graph_harness import (
    AGENT,
    NS,
    events,
    eventually,
    graph,
    installed_client,
    operator,
    worker_dcd,
)

from backends.settings import OperatorSettings
from controller.client import KubeClient
from controller.errors import NotFound
from hack.localcluster.request_stats import WRITE_VERBS
from hack.localcluster.server import LocalCluster
from hack.our_crds import COMPONENT_DEPLOYMENTS, GRAPH_DEPLOYMENTS
from reconcilers.machinery.resources import PERSISTENT_VOLUME_CLAIMS

Json = dict[str, Any]


@pytest.fixture
async def client(kubeconfig: Path) -> AsyncIterator[KubeClient]:
    async with installed_client(kubeconfig) as c:
        yield c


async def failed(client: KubeClient, name: str = "g") -> Json:
    async def check() -> Json | None:
        obj = await client.get(GRAPH_DEPLOYMENTS, NS, name)
        return obj if (obj.get("status") or {}).get("state") == "failed" else None
    result: Json = await eventually(check)
    return next(c for c in result["status"]["conditions"] if c["type"] == "Ready")


async def dcd_names(client: KubeClient) -> set[str]:
    return {d["metadata"]["name"] for d in
            (await client.list(COMPONENT_DEPLOYMENTS, NS))["items"]}


async def test_invalid_graph_fails_once_without_retries(client: KubeClient, kubeconfig: Path,
                                                        cluster: LocalCluster) -> None:
    manifest = graph(services={"Bad_Name": {"componentType": "worker"}})
    async with operator(kubeconfig):
        await client.create(GRAPH_DEPLOYMENTS, manifest)
        condition = await failed(client)
        assert condition["status"] == "False"
        assert condition["reason"] == "ValidationFailed"
        # Named as the graph is stored (v1beta1), in its words.
        assert condition["message"].startswith(
            "Validation failed: spec.components[0].name: component name 'Bad_Name' lowercased")
        await asyncio.sleep(0.3)
        writes = cluster.stats.writes(user_agent=AGENT)
        # No finalizer, no children; one status write and one event, then silence.
        await asyncio.sleep(1.5)
        assert cluster.stats.writes(user_agent=AGENT) == writes
        assert writes <= 2
        obj = await client.get(GRAPH_DEPLOYMENTS, NS, "g")
        assert not obj["metadata"].get("finalizers")
        assert await dcd_names(client) == set()
        assert [e["reason"] for e in await events(client, "g")] == ["ValidationFailed"]
        # Fixing the spec is a new generation: the graph is deployed.
        await client.patch(GRAPH_DEPLOYMENTS, NS, "g", {"spec": {"services": {
            "Bad_Name": None, "good": {"componentType": "worker"}}}})
        await eventually(lambda: worker_dcd(client, "good"))


async def test_multinode_without_orchestrator(client: KubeClient, kubeconfig: Path) -> None:
    manifest = graph(services={"decode": {"componentType": "worker",
                                          "multinode": {"nodeCount": 2}}})
    async with operator(kubeconfig, OperatorSettings(lws_enabled=False)):
        await client.create(GRAPH_DEPLOYMENTS, manifest)
        condition = await failed(client)
        assert "no multinode orchestrator available" in condition["message"]
        assert "decode" in condition["message"] and "LeaderWorkerSet" in condition["message"]
        assert await dcd_names(client) == set()


async def test_missing_claim_fails_until_it_appears(client: KubeClient,
                                                    kubeconfig: Path) -> None:
    async with operator(kubeconfig):
        await client.create(GRAPH_DEPLOYMENTS, graph(pvcs=[{"name": "cache"}]))
        condition = await failed(client)
        assert condition["reason"] == "failed_to_reconcile_the_resources"
        assert 'persistentvolumeclaims "cache" not found' in condition["message"]
        assert await dcd_names(client) == set()
        # The claim appearing wakes the graph (no polling).
        await client.create(PERSISTENT_VOLUME_CLAIMS, {
            "apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": "cache", "namespace": NS},
            "spec": {"accessModes": ["ReadWriteOnce"],
                     "resources": {"requests": {"storage": "1Gi"}}}})
        await eventually(lambda: worker_dcd(client, "decode"))
        claim = await client.get(PERSISTENT_VOLUME_CLAIMS, NS, "cache")
        assert not claim["metadata"].get("ownerReferences")  # never adopted


async def test_terminating_graph_gets_no_children(client: KubeClient, kubeconfig: Path,
                                                  cluster: LocalCluster) -> None:
    manifest = graph()
    # Our finalizer as an older operator version left it: released on deletion, never added.
    manifest["metadata"]["finalizers"] = ["test.example.com/hold", "nvidia.com/finalizer"]
    async with operator(kubeconfig):
        await client.create(GRAPH_DEPLOYMENTS, manifest)
        await eventually(lambda: worker_dcd(client, "decode"))
        # Foreground deletion, as ArgoCD prunes: the graph stays while its children go.
        await client.delete(GRAPH_DEPLOYMENTS, NS, "g", propagation_policy="Foreground")
        await eventually(lambda: _finalizer_released(client))
        cluster.stats.reset()
        # A child removed meanwhile is not recreated, nor any spec change applied.
        with_hold = await client.get(GRAPH_DEPLOYMENTS, NS, "g")
        await client.patch(GRAPH_DEPLOYMENTS, NS, "g", {"metadata": {"labels": {"x": "y"}}})
        for name in await dcd_names(client):
            with contextlib.suppress(NotFound):
                await client.delete(COMPONENT_DEPLOYMENTS, NS, name)
        await asyncio.sleep(1.0)
        # A finalizer release from a cache a step behind fails its `test` and changes nothing.
        landed = [s for s in cluster.stats.snapshot() if s["userAgent"] == AGENT
                  and s["verb"] in WRITE_VERBS and int(str(s["code"])) < 400]
        assert landed == [], cluster.stats.snapshot()

        async def no_children() -> bool:
            return not await dcd_names(client)
        await eventually(no_children)
        assert with_hold["metadata"].get("deletionTimestamp")
        # Releasing the last finalizer lets the graph go.
        await client.patch(GRAPH_DEPLOYMENTS, NS, "g", {"metadata": {"finalizers": None}})

        async def gone() -> bool:
            try:
                await client.get(GRAPH_DEPLOYMENTS, NS, "g")
            except NotFound:
                return True
            return False
        await eventually(gone)


async def _has_finalizer(client: KubeClient) -> bool:
    obj = await client.get(GRAPH_DEPLOYMENTS, NS, "g")
    return "nvidia.com/finalizer" in (obj["metadata"].get("finalizers") or [])


async def _finalizer_released(client: KubeClient) -> bool:
    return not await _has_finalizer(client)
