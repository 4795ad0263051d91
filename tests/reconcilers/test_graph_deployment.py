"""The DGD controller against the local API server: children, status, pruning, adapters,
idleness and `kubectl replace`. DCD statuses are written by the test, as the DCD controller
would write them."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from graph_harness import (
    AGENT,
    NS,
    WORKER_HASH_LABEL,
    events,
    eventually,
    graph,
    installed_client,
    operator,
    ready_condition,
    report,
    worker_name,
)

from controller.client import KubeClient
from controller.errors import NotFound
from hack.localcluster.server import LocalCluster
from hack.localcluster.testing import Kubectl
from hack.our_crds import COMPONENT_DEPLOYMENTS, GRAPH_DEPLOYMENTS
from reconcilers.machinery.children import GENERATION_ANNOTATION, HASH_ANNOTATION
from reconcilers.machinery.resources import (
    PERSISTENT_VOLUME_CLAIMS,
    ROLE_BINDINGS,
    ROLES,
    SCALING_ADAPTERS,
    SERVICE_ACCOUNTS,
)

GRAPH_LABEL = "nvidia.com/dynamo-graph-deployment-name"
Json = dict[str, Any]


@pytest.fixture
async def client(kubeconfig: Path) -> AsyncIterator[KubeClient]:
    async with installed_client(kubeconfig) as c:
        yield c


async def dgd(client: KubeClient, name: str = "g") -> Json:
    return await client.get(GRAPH_DEPLOYMENTS, NS, name)


async def state(client: KubeClient, wanted: str, name: str = "g") -> Json:
    async def check() -> Json | None:
        obj = await dgd(client, name)
        return obj if (obj.get("status") or {}).get("state") == wanted else None
    result: Json = await eventually(check)
    return result


def with_adapter_and_claim() -> Json:
    manifest = graph(pvcs=[{"name": "cache", "create": True, "size": "10Gi",
                            "storageClass": "std", "volumeAccessMode": "ReadWriteMany"}])
    manifest["spec"]["services"]["decode"]["scalingAdapter"] = {"enabled": True}
    return manifest


async def test_children_status_and_idle(client: KubeClient, kubeconfig: Path,
                                        cluster: LocalCluster) -> None:
    async with operator(kubeconfig, planner_cluster_role_name="planner-role"):
        manifest = with_adapter_and_claim()
        created = await client.create(GRAPH_DEPLOYMENTS, manifest)
        uid = created["metadata"]["uid"]
        decode = worker_name(manifest, "decode")  # g-decode-<hash>: a worker generation
        # Children: DCDs named and labelled per service, owned by the graph.
        for name, service in (("g-frontend", "Frontend"), (decode, "decode")):
            dcd = await eventually(lambda n=name: client.get(COMPONENT_DEPLOYMENTS, NS, n))
            labels = dcd["metadata"]["labels"]
            assert labels[GRAPH_LABEL] == "g"
            assert labels["nvidia.com/dynamo-component"] == service
            assert labels["nvidia.com/dynamo-namespace"] == "t-g"
            assert (labels.get(WORKER_HASH_LABEL) == decode.rsplit("-", 1)[1]
                    if service == "decode" else WORKER_HASH_LABEL not in labels)
            assert dcd["spec"]["serviceName"] == service
            assert dcd["metadata"]["annotations"][GENERATION_ANNOTATION] == "1"
            assert HASH_ANNOTATION in dcd["metadata"]["annotations"]
            (ref,) = dcd["metadata"]["ownerReferences"]
            assert ref["uid"] == uid and ref["controller"] is True
        # Only the opted-in service has an adapter, seeded with its replicas.
        adapter = await client.get(SCALING_ADAPTERS, NS, "g-decode")
        assert adapter["spec"] == {"replicas": 2, "dgdRef": {"name": "g", "serviceName": "decode"}}
        with pytest.raises(NotFound):
            await client.get(SCALING_ADAPTERS, NS, "g-frontend")
        pvc = await client.get(PERSISTENT_VOLUME_CLAIMS, NS, "cache")
        assert pvc["spec"]["storageClassName"] == "std"
        assert pvc["spec"]["accessModes"] == ["ReadWriteMany"]
        assert pvc["metadata"]["ownerReferences"][0]["uid"] == uid
        for resource, name in ((SERVICE_ACCOUNTS, "g-k8s-service-discovery"),
                               (ROLES, "g-k8s-service-discovery-role"),
                               (ROLE_BINDINGS, "g-k8s-service-discovery-binding"),
                               (SERVICE_ACCOUNTS, "planner-serviceaccount")):
            await client.get(resource, NS, name)
        binding = await client.get(ROLE_BINDINGS, NS, "planner-serviceaccount-binding")
        assert binding["roleRef"]["name"] == "planner-role"

        pending = await state(client, "pending")
        # No finalizer: owner references and garbage collection do all the cleanup (issue 20).
        assert not pending["metadata"].get("finalizers")
        condition = ready_condition(pending)
        assert condition["status"] == "False"
        assert condition["reason"] == "some_resources_are_not_ready"
        assert condition["message"].startswith("Resources not ready: ")

        # One replica of two ready: the reason names the service and the counts.
        await report(client, "g-frontend", 1)
        await report(client, decode, 2, ready=1)

        async def half_ready() -> bool:
            message = ready_condition(await dgd(client))["message"]
            return message == "Resources not ready: decode: 1/2 replicas ready"
        await eventually(half_ready)

        await report(client, decode, 2)
        done = await state(client, "successful")
        condition = ready_condition(done)
        assert (condition["status"], condition["reason"], condition["message"]) == (
            "True", "all_resources_are_ready", "All resources are ready")
        assert done["status"]["observedGeneration"] == done["metadata"]["generation"]
        assert done["status"]["services"]["decode"] == {
            "componentKind": "Deployment", "componentName": decode,
            "componentNames": [decode], "replicas": 2,
            "updatedReplicas": 2, "readyReplicas": 2, "availableReplicas": 2}
        since = condition["lastTransitionTime"]

        # Idle: no writes at all, not even events.
        await asyncio.sleep(0.5)
        cluster.stats.reset()
        await asyncio.sleep(2.0)
        assert cluster.stats.writes(user_agent=AGENT) == 0

        # A rollout: the old pods still cover the count, yet the graph is not ready.
        await report(client, decode, 2, updated=1, total=3, available=True)
        rolling = await state(client, "pending")
        condition = ready_condition(rolling)
        assert condition["reason"] == "rolling_update_in_progress"
        assert "decode: 1/2 replicas updated" in condition["message"]
        assert condition["lastTransitionTime"] >= since
        # A pod problem reported by the DCD surfaces as the reason.
        await report(client, decode, 2, ready=1, reason="ImagePullBackOff", message=(
            "1/2 replicas available; pod g-decode-x container main: ImagePullBackOff: no"))

        async def image_problem() -> bool:
            return ready_condition(await dgd(client))["reason"] == "image_pull_failed"
        await eventually(image_problem)
        await report(client, decode, 2)
        await state(client, "successful")

        # Repeats of one event are counted on the first Event (client-go's aggregation). The
        # transition's event is recorded just after the status write the test has seen.
        async def event_counts() -> dict[str, int] | None:
            counts: dict[str, int] = {}
            for event in await events(client, "g"):
                counts[event["reason"]] = counts.get(event["reason"], 0) + event.get("count", 1)
            return counts if counts.get("Ready") == 2 else None
        counts = await eventually(event_counts, what="the second Ready event")
        assert counts["CreateDynamoComponentDeployment"] == 2
        assert counts["CreatePersistentVolumeClaim"] == 1
        assert counts["Ready"] == 2 and counts["NotReady"] >= 2
        assert "UpdateDynamoComponentDeployment" not in counts


async def test_removed_service_and_adapter_ownership(client: KubeClient,
                                                     kubeconfig: Path) -> None:
    async with operator(kubeconfig):
        manifest = with_adapter_and_claim()
        decode = worker_name(manifest, "decode")
        await client.create(GRAPH_DEPLOYMENTS, manifest)
        await eventually(lambda: client.get(SCALING_ADAPTERS, NS, "g-decode"))
        await eventually(lambda: client.get(COMPONENT_DEPLOYMENTS, NS, decode))
        # An autoscaler moves the adapter; the graph controller never writes it back, even
        # when the graph is reconciled again.
        await client.patch(SCALING_ADAPTERS, NS, "g-decode", {"spec": {"replicas": 5}},
                           subresource="scale")
        await client.patch(GRAPH_DEPLOYMENTS, NS, "g", {"metadata": {"labels": {"x": "1"}}})
        await client.patch(GRAPH_DEPLOYMENTS, NS, "g",
                           {"spec": {"services": {"Frontend": {"replicas": 2}}}})
        frontend = await eventually(lambda: _replicas(client, "g-frontend", 2))
        assert frontend
        assert (await client.get(SCALING_ADAPTERS, NS, "g-decode"))["spec"]["replicas"] == 5
        # The DCD follows the graph's replicas (the adapter controller's job to move them).
        dcd = await client.get(COMPONENT_DEPLOYMENTS, NS, decode)
        assert dcd["spec"]["replicas"] == 2
        await client.patch(GRAPH_DEPLOYMENTS, NS, "g",
                           {"spec": {"services": {"decode": {"replicas": 5}}}})
        await eventually(lambda: _replicas(client, decode, 5))
        assert (await client.get(SCALING_ADAPTERS, NS, "g-decode"))["spec"]["replicas"] == 5

        # A DCD of the same label not owned by the graph is left alone by pruning.
        stranger = {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoComponentDeployment",
                    "metadata": {"name": "g-other", "namespace": NS,
                                 "labels": {GRAPH_LABEL: "g"}},
                    "spec": {"serviceName": "other"}}
        await client.create(COMPONENT_DEPLOYMENTS, stranger)
        # The service leaves the graph: its DCD and adapter go, with an event.
        await client.patch(GRAPH_DEPLOYMENTS, NS, "g",
                           {"spec": {"services": {"decode": None}}})

        async def pruned() -> bool:
            names = {d["metadata"]["name"] for d in
                     (await client.list(COMPONENT_DEPLOYMENTS, NS))["items"]
                     if not d["metadata"].get("deletionTimestamp")}
            adapters = (await client.list(SCALING_ADAPTERS, NS))["items"]
            return names == {"g-frontend", "g-other"} and not adapters
        await eventually(pruned)

        # Events are recorded after the deletes they report, so they may trail the prune.
        async def prune_events_recorded() -> bool:
            reasons = {e["reason"] for e in await events(client, "g")}
            return {"AdapterDeleted", "DeleteDynamoComponentDeployment"} <= reasons
        assert await eventually(prune_events_recorded)


async def _replicas(client: KubeClient, name: str, wanted: int) -> bool:
    dcd = await client.get(COMPONENT_DEPLOYMENTS, NS, name)
    return bool(dcd["spec"].get("replicas") == wanted)


@pytest.mark.kubectl
async def test_replace_keeps_children(client: KubeClient, kubeconfig: Path,
                                      cluster: LocalCluster, kubectl: Kubectl) -> None:
    async with operator(kubeconfig):
        manifest = with_adapter_and_claim()
        await client.create(GRAPH_DEPLOYMENTS, manifest)
        await report_when_created(client)
        await state(client, "successful")
        before = {d["metadata"]["uid"] for d in
                  (await client.list(COMPONENT_DEPLOYMENTS, NS))["items"]}
        cluster.stats.reset()
        # GitOps-style replace: the stored object is swapped for the manifest (no status, no
        # finalizer), same uid.
        manifest["metadata"]["labels"] = {"replaced": "yes"}
        await kubectl("replace", "-f", "-", stdin=json.dumps(manifest))

        async def settled() -> bool:
            obj = await dgd(client)
            return (obj["metadata"]["labels"] == {"replaced": "yes"}
                    and (obj.get("status") or {}).get("state") == "successful")
        await eventually(settled)
        await asyncio.sleep(1.0)
        after = {d["metadata"]["uid"] for d in
                 (await client.list(COMPONENT_DEPLOYMENTS, NS))["items"]}
        assert after == before
        assert len((await client.list(SCALING_ADAPTERS, NS))["items"]) == 1
        for resource in ("dynamocomponentdeployments.nvidia.com",
                         "dynamographdeploymentscalingadapters.nvidia.com",
                         "persistentvolumeclaims"):
            assert cluster.stats.count(verb="create", resource=resource, user_agent=AGENT) == 0
        assert (await dgd(client))["status"]["state"] == "successful"


async def report_when_created(client: KubeClient) -> None:
    decode = worker_name(with_adapter_and_claim(), "decode")
    for name, replicas in (("g-frontend", 1), (decode, 2)):
        await eventually(lambda n=name: client.get(COMPONENT_DEPLOYMENTS, NS, n))
        await report(client, name, replicas)
