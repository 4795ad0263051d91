"""A hand edit of the graph in v1alpha1 after the scaling adapter wrote its replicas in v1beta1:
the local API server converts managedFields between versions as kube-apiserver does, so the
edit takes the replicas from the adapter's v1beta1 entry, the adapter reads that from the graph
(`owners_of`) and adopts the edit once, as it would on a real cluster."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from scaling_support import (
    ADAPTERS,
    GRAPHS,
    NS,
    OPERATOR_AGENT,
    adapter,
    client_for,
    events_of,
    eventually,
    graph,
    graph_replicas,
    install_crds,
    ready_condition,
    running_operator,
    service,
)

from controller.client import KubeClient
from controller.managed_fields import owners_of
from controller.manager import Manager
from hack.localcluster.server import LocalCluster
from hack.localcluster.testing import Kubectl
from hack.our_crds import GRAPH_DEPLOYMENTS
from reconcilers.machinery.resources import GRAPH_DEPLOYMENTS as HUB_GRAPHS
from reconcilers.machinery.resources import SCALING_ADAPTERS
from reconcilers.scaling_adapter.reconciler import FIELD_MANAGER

Json = dict[str, object]
#: kubectl's name of the graphs in v1alpha1 (a short name reads v1beta1).
GRAPHS_V1ALPHA1 = "dynamographdeployments.v1alpha1.nvidia.com"
ALPHA_PATH = ("spec", "services", "decode", "replicas")
BETA_PATH = ("spec", "components", {"name": "decode"}, "replicas")


@pytest.fixture
async def kube(cluster: LocalCluster, kubeconfig: Path) -> AsyncIterator[KubeClient]:
    client = await client_for(kubeconfig)
    await install_crds(client, GRAPHS, ADAPTERS)
    try:
        yield client
    finally:
        await client.close()


@pytest.fixture
async def operator(kube: KubeClient, kubeconfig: Path) -> AsyncIterator[Manager]:
    async with running_operator(kubeconfig) as mgr:
        yield mgr


async def settled_at(kube: KubeClient, replicas: int) -> bool:
    """The adapter asks for, applied and reports `replicas`, and the graph has them."""
    obj = await kube.get(SCALING_ADAPTERS, NS, "g-decode")
    ready = ready_condition(obj)
    return (obj["spec"]["replicas"] == replicas
            and (obj.get("status") or {}).get("replicas") == replicas
            and ready is not None and ready["status"] == "True"
            and await graph_replicas(kube, "g", "decode") == replicas)


async def replica_owners(kube: KubeClient) -> set[str]:
    live = await kube.get(HUB_GRAPHS, NS, "g")
    return owners_of(live, ALPHA_PATH, BETA_PATH)


async def scaled_by_the_adapter(kube: KubeClient) -> None:
    await kube.create(GRAPH_DEPLOYMENTS, graph("g", {"decode": service(1)}))
    await kube.create(SCALING_ADAPTERS, adapter("g", "decode", 1))
    await eventually(lambda: settled_at(kube, 1))
    await kube.patch(SCALING_ADAPTERS, NS, "g-decode", {"spec": {"replicas": 4}},
                     subresource="scale")
    await eventually(lambda: settled_at(kube, 4))
    # The adapter's write is in v1beta1, at the component's index.
    assert await replica_owners(kube) == {FIELD_MANAGER}
    live = await kube.get(HUB_GRAPHS, NS, "g")
    [entry] = [e for e in live["metadata"]["managedFields"] if e["manager"] == FIELD_MANAGER]
    assert entry["apiVersion"] == "nvidia.com/v1beta1"


async def test_a_v1alpha1_edit_takes_the_replicas_from_the_adapter(
        cluster: LocalCluster, kube: KubeClient, operator: Manager) -> None:
    await scaled_by_the_adapter(kube)
    await kube.patch(GRAPH_DEPLOYMENTS, NS, "g", {"spec": {"services": {"decode": {
        "replicas": 7}}}}, field_manager="hand-edit")
    # The edit's own entry, in v1alpha1's shape, is now the only owner of the replicas.
    assert await replica_owners(kube) == {"hand-edit"}
    await eventually(lambda: settled_at(kube, 7))
    [synced] = await events_of(kube, "g-decode", "Synced")
    assert synced["message"] == "Synced adapter from DGD manual edit: replicas=7"
    writes = cluster.stats.writes(user_agent=OPERATOR_AGENT, resource=GRAPHS)
    await eventually(lambda: _idle(cluster, writes))
    assert await replica_owners(kube) == {"hand-edit"}  # adopted, not written back


async def _idle(cluster: LocalCluster, before: int) -> bool:
    return cluster.stats.writes(user_agent=OPERATOR_AGENT, resource=GRAPHS) == before


@pytest.mark.kubectl
async def test_kubectl_patch_in_v1alpha1_is_adopted(
        kube: KubeClient, kubectl: Kubectl, operator: Manager) -> None:
    await scaled_by_the_adapter(kube)
    await kubectl("patch", f"{GRAPHS_V1ALPHA1}/g", "--type=merge", "-p",
                  '{"spec":{"services":{"decode":{"replicas":2}}}}')
    assert await replica_owners(kube) == {"kubectl-patch"}
    await eventually(lambda: settled_at(kube, 2))
    [synced] = await events_of(kube, "g-decode", "Synced")
    assert synced["message"] == "Synced adapter from DGD manual edit: replicas=2"
