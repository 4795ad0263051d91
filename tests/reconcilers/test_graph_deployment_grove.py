"""The Grove path (spec §2.4, scenario 12): one PodCliqueSet per graph, replicas through the
cliques' scale subresource, readiness from the cliques, and the opt-out annotation switching
the graph to DCDs. Grove's own controllers are played by the test."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from graph_harness import NS, events, eventually, graph, install, operator, setup_client

from backends.settings import OperatorSettings
from backends.worker_generation import PROVIDER_GENERATION
from controller.client import KubeClient
from controller.errors import NotFound
from hack.our_crds import COMPONENT_DEPLOYMENTS, GRAPH_DEPLOYMENTS
from reconcilers.machinery.resources import (
    CONTROLLER_REVISIONS,
    POD_CLIQUE_SETS,
    POD_CLIQUES,
    SERVICES,
)

Json = dict[str, Any]


def grove_crd(plural: str, kind: str, scale: bool) -> Json:
    subresources: Json = {"status": {}}
    if scale:
        subresources["scale"] = {"specReplicasPath": ".spec.replicas",
                                 "statusReplicasPath": ".status.replicas"}
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.grove.io"},
        "spec": {"group": "grove.io", "scope": "Namespaced",
                 "names": {"plural": plural, "singular": kind.lower(), "kind": kind,
                           "listKind": f"{kind}List"},
                 "versions": [{"name": "v1alpha1", "served": True, "storage": True,
                               "subresources": subresources,
                               "schema": {"openAPIV3Schema": {
                                   "type": "object",
                                   "x-kubernetes-preserve-unknown-fields": True}}}]}}


@pytest.fixture
async def client(kubeconfig: Path) -> AsyncIterator[KubeClient]:
    c = await setup_client(kubeconfig)
    await install(c, [grove_crd("podcliquesets", "PodCliqueSet", False),
                      grove_crd("podcliques", "PodClique", True),
                      grove_crd("podcliquescalinggroups", "PodCliqueScalingGroup", True)])
    try:
        yield c
    finally:
        await c.close()


async def clique(client: KubeClient, service: str, replicas: int) -> None:
    """A PodClique as Grove makes it: labelled with the graph, ready at `replicas`."""
    name = f"g-0-{service}"
    await client.create(POD_CLIQUES, {
        "apiVersion": "grove.io/v1alpha1", "kind": "PodClique",
        "metadata": {"name": name, "namespace": NS,
                     "labels": {"nvidia.com/dynamo-graph-deployment-name": "g"}},
        "spec": {"replicas": replicas}})
    await ready(client, name, replicas)


async def ready(client: KubeClient, name: str, replicas: int) -> None:
    obj = await client.get(POD_CLIQUES, NS, name)
    await client.patch(POD_CLIQUES, NS, name, {"status": {
        "observedGeneration": obj["metadata"]["generation"], "replicas": replicas,
        "updatedReplicas": replicas, "readyReplicas": replicas}}, subresource="status")


async def graph_state(client: KubeClient, wanted: str) -> Json:
    async def check() -> Json | None:
        obj = await client.get(GRAPH_DEPLOYMENTS, NS, "g")
        return obj if (obj.get("status") or {}).get("state") == wanted else None
    result: Json = await eventually(check)
    return result


async def test_grove_path_and_opt_out(client: KubeClient, kubeconfig: Path) -> None:
    async with operator(kubeconfig, OperatorSettings(grove_enabled=True)):
        await client.create(GRAPH_DEPLOYMENTS, graph())
        pcs = await eventually(lambda: client.get(POD_CLIQUE_SETS, NS, "g"))
        cliques = {c["name"] for c in pcs["spec"]["template"]["cliques"]}
        assert cliques == {"frontend", "decode"}
        await eventually(lambda: client.get(SERVICES, NS, "g-frontend"))
        # Kubernetes discovery: every service has one.
        await eventually(lambda: client.get(SERVICES, NS, "g-decode"))
        assert (await client.list(COMPONENT_DEPLOYMENTS, NS))["items"] == []
        pending = await graph_state(client, "pending")
        assert "PodCliqueSet" in pending["status"]["conditions"][0]["message"]

        # Grove observes the set and makes the cliques; decode starts at one replica and the
        # operator scales it to the graph's two.
        await client.patch(POD_CLIQUE_SETS, NS, "g", {"status": {
            "observedGeneration": pcs["metadata"]["generation"]}}, subresource="status")
        await clique(client, "frontend", 1)
        await clique(client, "decode", 1)

        async def scaled() -> bool:
            obj = await client.get(POD_CLIQUES, NS, "g-0-decode")
            return bool(obj["spec"]["replicas"] == 2)
        await eventually(scaled)
        await ready(client, "g-0-decode", 2)
        done = await graph_state(client, "successful")
        assert done["status"]["services"]["decode"] == {
            "componentKind": "PodClique", "componentName": "g-0-decode",
            "componentNames": ["g-0-decode"], "replicas": 2,
            "updatedReplicas": 2, "readyReplicas": 2}

        # Opting out moves the graph to DCDs and removes the Grove objects.
        await client.patch(GRAPH_DEPLOYMENTS, NS, "g", {"metadata": {"annotations": {
            "nvidia.com/enable-grove": "False"}}})
        async def decode_dcd() -> bool:
            names = [d["metadata"]["name"]
                     for d in (await client.list(COMPONENT_DEPLOYMENTS, NS))["items"]]
            return any(n.startswith("g-decode-") for n in names)  # a worker generation
        await eventually(decode_dcd)

        async def grove_gone() -> bool:
            for resource, name in ((POD_CLIQUE_SETS, "g"), (SERVICES, "g-frontend")):
                try:
                    obj = await client.get(resource, NS, name)
                except NotFound:
                    continue
                if not obj["metadata"].get("deletionTimestamp"):
                    return False
            return True
        await eventually(grove_gone)


async def test_a_worker_change_on_grove_is_told_and_tracked(client: KubeClient,
                                                             kubeconfig: Path) -> None:
    async with operator(kubeconfig, OperatorSettings(grove_enabled=True)):
        await client.create(GRAPH_DEPLOYMENTS, graph())
        pcs = await eventually(lambda: client.get(POD_CLIQUE_SETS, NS, "g"))
        await client.patch(POD_CLIQUE_SETS, NS, "g", {"status": {
            "observedGeneration": pcs["metadata"]["generation"]}}, subresource="status")
        await clique(client, "frontend", 1)
        await clique(client, "decode", 2)
        first = await graph_state(client, "successful")
        recorded = first["metadata"]["annotations"]["nvidia.com/current-worker-hash-v2"]
        assert "rollingUpdate" not in first["status"]  # the first generation is no rollout

        await client.patch(GRAPH_DEPLOYMENTS, NS, "g", {"metadata": {"annotations": {
            "nvidia.com/deployment-strategy": "Recreate",
            "nvidia.com/deployment-rolling-update-max-surge": "1"}}, "spec": {"services": {
                "decode": {"envs": [{"name": "NEW", "value": "1"}]}}}})

        async def told() -> Json | None:
            warned = [e for e in await events(client, "g")
                      if e["reason"] == "RollingUpdateNotSupported"]
            return warned[0] if warned else None
        event = await eventually(told)
        assert event["type"] == "Warning"
        assert ("ignored: nvidia.com/deployment-strategy, "
                "nvidia.com/deployment-rolling-update-max-surge") in event["message"]
        obj = await client.get(GRAPH_DEPLOYMENTS, NS, "g")
        assert obj["metadata"]["annotations"]["nvidia.com/current-worker-hash-v2"] != recorded
        assert obj["status"]["rollingUpdate"]["phase"] == "InProgress"

        # Grove rolls the clique: once it reports the new spec ready, the rollout is over.
        pcs = await client.get(POD_CLIQUE_SETS, NS, "g")
        await client.patch(POD_CLIQUE_SETS, NS, "g", {"status": {
            "observedGeneration": pcs["metadata"]["generation"]}}, subresource="status")
        await ready(client, "g-0-decode", 2)

        async def completed() -> Json | None:
            status = (await client.get(GRAPH_DEPLOYMENTS, NS, "g")).get("status") or {}
            rolling = status.get("rollingUpdate") or {}
            return rolling if rolling.get("phase") == "Completed" else None
        rolling = await eventually(completed)
        assert rolling["updatedComponents"] == ["decode"] and rolling["endTime"]

        # Grove keeps no history of its own: the graph's ControllerRevisions do, and
        # `rollout undo` (its own process, through a kubeconfig) writes the first back.
        async def two_revisions() -> list[Json] | None:
            items = (await client.list(CONTROLLER_REVISIONS, NS))["items"]
            return items if len(items) == 2 else None
        revisions = sorted(await eventually(two_revisions), key=lambda r: r["revision"])
        assert [r["revision"] for r in revisions] == [1, 2]
        assert revisions[0]["metadata"]["ownerReferences"][0]["kind"] == "DynamoGraphDeployment"
        assert [c["name"] for c in revisions[1]["data"]["components"]] == ["decode"]
        undo = await asyncio.create_subprocess_exec(
            str(Path(sys.executable).parent / "dynamo-operator"), "rollout", "undo", "dgd/g",
            "--kubeconfig", str(kubeconfig), "-n", NS,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await asyncio.wait_for(undo.communicate(), 60)
        assert undo.returncode == 0 and b"rolled back to revision 1" in out, (out, err)
        graph_now = await client.get(GRAPH_DEPLOYMENTS, NS, "g")
        assert not graph_now["spec"]["services"]["decode"].get("envs")


async def test_a_graph_created_now_has_grove_replace_its_workers_by_generation(
        client: KubeClient, kubeconfig: Path) -> None:
    """A graph stamped at `backends.worker_generation.PROVIDER_GENERATION`:
    its worker cliques carry the hash the graph records as the label and the suffix of
    `main`, the frontend's the prefix; a worker change moves both in place (issue #28)."""

    def cliques(pcs: Json) -> dict[str, Json]:
        return {c["name"]: c for c in pcs["spec"]["template"]["cliques"]}

    def env(clique: Json) -> dict[str, str]:
        main = next(c for c in clique["spec"]["podSpec"]["containers"] if c["name"] == "main")
        return {e["name"]: e.get("value") for e in main.get("env") or []}

    async with operator(kubeconfig, OperatorSettings(grove_enabled=True)):
        stamped = graph()
        new = ".".join(str(n) for n in PROVIDER_GENERATION.min_version.numbers)
        stamped["metadata"]["annotations"] = {"nvidia.com/dynamo-operator-origin-version": new}
        await client.create(GRAPH_DEPLOYMENTS, stamped)

        async def recorded(other_than: str | None = None) -> str | None:
            obj = await client.get(GRAPH_DEPLOYMENTS, NS, "g")
            value = (obj["metadata"].get("annotations") or {}).get(
                "nvidia.com/current-worker-hash-v2")
            return value if value and value != other_than else None
        first = str(await eventually(recorded))

        async def labelled(wanted: str) -> Json | None:
            pcs = await client.get(POD_CLIQUE_SETS, NS, "g")
            decode = cliques(pcs)["decode"]
            return pcs if decode["labels"].get("nvidia.com/dynamo-worker-hash") == wanted else None
        pcs = await eventually(lambda: labelled(first))
        decode, frontend = cliques(pcs)["decode"], cliques(pcs)["frontend"]
        assert env(decode)["DYN_NAMESPACE_WORKER_SUFFIX"] == first
        assert "nvidia.com/dynamo-worker-hash" not in frontend["labels"]
        assert env(frontend)["DYN_NAMESPACE_PREFIX"] == env(frontend)["DYN_NAMESPACE"]

        await client.patch(GRAPH_DEPLOYMENTS, NS, "g", {"spec": {"services": {
            "decode": {"envs": [{"name": "NEW", "value": "1"}]}}}})
        second = str(await eventually(lambda: recorded(first)))
        pcs = await eventually(lambda: labelled(second))
        assert env(cliques(pcs)["decode"])["DYN_NAMESPACE_WORKER_SUFFIX"] == second
