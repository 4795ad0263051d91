"""The topology label controller (issue 29 item 4) against the local API server: a graph's
scheduled pod with a topology source annotation gets its node's topology labels, copied under
the label key or as `nvidia.com/dynamo-topology.<level>` for a ClusterTopology; a label the
node lacks earns the pod a `TopologyLabelMissing` Warning; other pods are left alone."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from operator_harness import ROOT, eventually, running_operator, setup_client

from controller.client import KubeClient
from controller.errors import ApiError
from reconcilers import topology_label
from reconcilers.machinery.resources import CLUSTER_TOPOLOGIES, NODES, PODS

Json = dict[str, Any]
NS = "default"
ZONE = "topology.kubernetes.io/zone"
RACK = "topology.kubernetes.io/rack"
EVENTS_PATH = f"/api/v1/namespaces/{NS}/events"


def node(name: str, labels: dict[str, str]) -> Json:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}}


def pod(name: str, annotations: dict[str, str], *, node_name: str | None = "n1",
        graph: bool = True) -> Json:
    labels = {"nvidia.com/dynamo-graph-deployment-name": "g",
              "nvidia.com/dynamo-component": "decode"} if graph else {"app": "other"}
    spec: Json = {"containers": [{"name": "main", "image": "img:1"}]}
    if node_name:
        spec["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": NS, "labels": labels,
                         "annotations": annotations}, "spec": spec}


@pytest.fixture
async def client(kubeconfig: Path) -> AsyncIterator[KubeClient]:
    c = await setup_client(kubeconfig)
    await c.create(NODES, node("n1", {ZONE: "zone-a", RACK: "rack-1"}))
    await c.create(NODES, node("bare", {}))
    try:
        yield c
    finally:
        await c.close()


async def labels_of(client: KubeClient, name: str) -> dict[str, str]:
    return dict((await client.get(PODS, NS, name))["metadata"].get("labels") or {})


async def missing_events(client: KubeClient, name: str) -> list[Json]:
    items = (await client.request("GET", EVENTS_PATH))["items"]
    return [e for e in items if e["involvedObject"].get("name") == name
            and e.get("reason") == "TopologyLabelMissing"]


async def test_a_label_key_source_copies_that_node_label(kubeconfig: Path,
                                                        client: KubeClient) -> None:
    async with running_operator(kubeconfig, [topology_label.register]):
        # Created unscheduled: nothing to copy until it has a node.
        await client.create(PODS, pod("w1", {"nvidia.com/topology-label-key": ZONE},
                                      node_name=None))
        await client.create(PODS, pod("other", {"nvidia.com/topology-label-key": ZONE},
                                      graph=False))
        await client.create(PODS, pod("plain", {}))
        await client.create(PODS, pod("bare", {"nvidia.com/topology-label-key": ZONE},
                                      node_name="bare"))
        assert ZONE not in await labels_of(client, "w1")
        # Bound as the local cluster's scheduler binds (spec.nodeName).
        unbound = await client.get(PODS, NS, "w1")
        unbound["spec"]["nodeName"] = "n1"
        await client.update(PODS, unbound)

        async def copied() -> bool:
            return (await labels_of(client, "w1")).get(ZONE) == "zone-a"
        await eventually(copied, what="the node's zone on the pod")
        (missing,) = await eventually(lambda: missing_events(client, "bare"),
                                      what="a TopologyLabelMissing event")
        assert missing["type"] == "Warning"
        assert f'node "bare" has no label "{ZONE}"' in missing["message"]
        # Neither a pod outside a graph nor one without a source is touched.
        assert ZONE not in await labels_of(client, "other")
        assert ZONE not in await labels_of(client, "plain")
        assert ZONE not in await labels_of(client, "bare")


async def test_a_cluster_topology_source_copies_every_level(kubeconfig: Path,
                                                           client: KubeClient) -> None:
    crds = [d for d in yaml.safe_load_all((ROOT / "hack/crds/grove.yaml").read_text())
            if d["metadata"]["name"] == "clustertopologies.grove.io"]
    await client.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                         body=crds[0])

    async def served() -> bool:
        await client.list(CLUSTER_TOPOLOGIES)
        return True
    await eventually(served, what="ClusterTopologies served", tolerate=(ApiError,))
    await client.create(CLUSTER_TOPOLOGIES, {
        "apiVersion": "grove.io/v1alpha1", "kind": "ClusterTopology",
        "metadata": {"name": "fabric"},
        "spec": {"levels": [{"domain": "zone", "key": ZONE}, {"domain": "rack", "key": RACK},
                            {"domain": "host", "key": "kubernetes.io/hostname"}]}})
    async with running_operator(kubeconfig, [topology_label.register]):
        await client.create(PODS, pod("w2", {
            "nvidia.com/topology-cluster-topology-name": "fabric"}))

        async def copied() -> dict[str, str] | None:
            labels = await labels_of(client, "w2")
            return labels if "nvidia.com/dynamo-topology.rack" in labels else None
        labels = await eventually(copied, what="the topology levels on the pod")
        assert labels["nvidia.com/dynamo-topology.zone"] == "zone-a"
        assert labels["nvidia.com/dynamo-topology.rack"] == "rack-1"
        # The node carries no hostname label here: that level is told, not copied.
        assert "nvidia.com/dynamo-topology.host" not in labels
        (missing,) = await eventually(lambda: missing_events(client, "w2"),
                                      what="a TopologyLabelMissing event")
        assert '"kubernetes.io/hostname"' in missing["message"]
