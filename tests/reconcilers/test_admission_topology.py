"""A v1beta1 graph's topology fields judged at admission by the Grove ClusterTopology they
name (`api.validation.topology_levels`, read by `reconcilers.operator.admission_topology`),
through the local API server and kubectl: the operator's webhook server with `--webhook-url`
and Grove enabled, Grove's ClusterTopology CRD (hack/crds/grove.yaml) and one topology
`fabric` of the levels zone, rack and host.

kubectl gets 422 naming the field, in the original's words, when a pack domain or a KV
transfer policy's domain is no level of the topology, a component packs broader than the
graph, or the ClusterTopology does not exist; a policy's clusterTopologyName off the Grove
path is forbidden, and so is the inter-pod GPU memory service layout; an update of the graph
(generation 2) is not judged again by its topology, even once the topology has gone."""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from operator_harness import ROOT, install_crds, setup_client

from controller.client import ClientConfig, KubeClient
from controller.errors import ApiError, NotFound
from controller.manager import Manager, ManagerConfig
from controller.webhook_certs import VALIDATING_WEBHOOK_CONFIGURATIONS
from hack.localcluster.testing import Kubectl, eventually
from hack.processes import free_port
from reconcilers.machinery.resources import CLUSTER_TOPOLOGIES
from reconcilers.operator.webhook_setup import WebhookSettings, set_up_webhooks

Json = dict[str, Any]
IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.8.0"
WEBHOOK = "vdynamographdeployment.kb.io"
LEVELS = [{"domain": "zone", "key": "topology.kubernetes.io/zone"},
          {"domain": "rack", "key": "example.com/rack"},
          {"domain": "host", "key": "kubernetes.io/hostname"}]


async def _cluster_topologies(client: KubeClient) -> None:
    """Grove's ClusterTopology CRD and the topology `fabric`."""
    crd = next(d for d in yaml.safe_load_all((ROOT / "hack/crds/grove.yaml").read_text())
               if d["metadata"]["name"] == "clustertopologies.grove.io")
    await client.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                         body=crd)

    async def served() -> bool:
        await client.list(CLUSTER_TOPOLOGIES)
        return True
    await eventually(served, what="ClusterTopologies served", tolerate=(ApiError,))
    await client.create(CLUSTER_TOPOLOGIES, {
        "apiVersion": "grove.io/v1alpha1", "kind": "ClusterTopology",
        "metadata": {"name": "fabric"}, "spec": {"levels": LEVELS}})


@pytest.fixture
async def webhooks(kubeconfig: Path, kubectl: Kubectl) -> AsyncIterator[KubeClient]:
    client = await setup_client(kubeconfig)
    try:
        await install_crds(client)
        await _cluster_topologies(client)
    finally:
        await client.close()
    port = free_port()
    settings = WebhookSettings(port=port, cert_dir=Path("/nonexistent"),
                               url=f"https://127.0.0.1:{port}", cert_validity=3600.0)
    manager = await Manager.create(ManagerConfig(
        kubeconfig=kubeconfig, client=ClientConfig(qps=None), status_host="127.0.0.1",
        status_port=0, graceful_shutdown_timeout=2.0))
    server = await set_up_webhooks(manager, settings, grove_enabled=True)
    task = asyncio.create_task(manager.run())
    try:
        await eventually(lambda: server.ready, within=10, what="the webhook server")

        async def configured() -> bool:
            try:
                config = await manager.client.get(VALIDATING_WEBHOOK_CONFIGURATIONS, None,
                                                  settings.configuration_name)
            except NotFound:
                return False
            return all(w["clientConfig"].get("caBundle") for w in config["webhooks"])
        await eventually(configured, within=15, what="the ValidatingWebhookConfiguration")
        yield manager.client
    finally:
        manager.stop()
        await asyncio.wait_for(task, 10)


def _component(name: str, kind: str = "worker", **fields: Any) -> Json:
    return {"name": name, "type": kind, "replicas": 1,
            "podTemplate": {"spec": {"containers": [{"name": "main", "image": IMAGE}]}},
            **fields}


def _graph(name: str, *components: Json, annotations: dict[str, str] | None = None,
           **spec: Any) -> Json:
    metadata: Json = {"name": name, "namespace": "default"}
    if annotations:
        metadata["annotations"] = annotations
    return {"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment",
            "metadata": metadata,
            "spec": {"backendFramework": "vllm",
                     "components": list(components) or [_component("Worker")], **spec}}


async def _refusal(kubectl: Kubectl, obj: Json) -> str:
    """What the webhook said refusing `obj` (kubectl shows the 422 as "is invalid")."""
    result = await kubectl.run("apply", "-f", "-", stdin=json.dumps(obj))
    assert result.code != 0, f"{obj['metadata']['name']} was admitted"
    assert "The request is invalid" in result.stderr, result.stderr
    prefix = f'admission webhook "{WEBHOOK}" denied the request: '
    assert prefix in result.stderr, result.stderr
    return result.stderr.split(prefix, 1)[1].strip()


async def _admitted(kubectl: Kubectl, obj: Json) -> None:
    result = await kubectl.run("apply", "-f", "-", stdin=json.dumps(obj))
    assert result.code == 0, result.stderr


async def test_a_pack_domain_the_cluster_topology_lacks_is_refused(
        webhooks: KubeClient, kubectl: Kubectl) -> None:
    far = _graph("far", topologyConstraint={"clusterTopologyName": "fabric",
                                            "packDomain": "datacenter"})
    assert await _refusal(kubectl, far) == (
        'spec.topologyConstraint.packDomain: Invalid value: "datacenter": does not exist in '
        'ClusterTopology "fabric"; available domains: [host rack zone]')
    odd = _graph("odd", _component("Worker", topologyConstraint={"packDomain": "block"}),
                 topologyConstraint={"clusterTopologyName": "fabric"})
    assert await _refusal(kubectl, odd) == (
        'spec.components[0].topologyConstraint.packDomain: Invalid value: "block": does not '
        'exist in ClusterTopology "fabric"; available domains: [host rack zone]')


async def test_a_component_packs_no_broader_than_the_graph(
        webhooks: KubeClient, kubectl: Kubectl) -> None:
    wide = _graph("wide", _component("Prefill", "prefill",
                                     topologyConstraint={"packDomain": "host"}),
                  _component("Decode", "decode", topologyConstraint={"packDomain": "zone"}),
                  topologyConstraint={"clusterTopologyName": "fabric", "packDomain": "rack"})
    assert await _refusal(kubectl, wide) == (
        'spec.components[1].topologyConstraint.packDomain: Invalid value: "zone": must be '
        'equal to or narrower than the deployment-level domain "rack"')


async def test_a_cluster_topology_that_does_not_exist_is_refused(
        webhooks: KubeClient, kubectl: Kubectl) -> None:
    nowhere = _graph("nowhere", topologyConstraint={"clusterTopologyName": "nowhere",
                                                    "packDomain": "rack"},
                     experimental={"kvTransferPolicy": {"clusterTopologyName": "gone",
                                                        "domain": "rack"}})
    assert await _refusal(kubectl, nowhere) == (
        'spec.topologyConstraint.clusterTopologyName: Invalid value: "nowhere": references a '
        "ClusterTopology resource that was not found; "
        'spec.experimental.kvTransferPolicy.clusterTopologyName: Invalid value: "gone": '
        "references a ClusterTopology resource that was not found")


async def test_a_kv_transfer_policy_domain_must_be_a_level(
        webhooks: KubeClient, kubectl: Kubectl) -> None:
    policy = {"kvTransferPolicy": {"clusterTopologyName": "fabric", "domain": "block"}}
    assert await _refusal(kubectl, _graph("blocked", experimental=policy)) == (
        'spec.experimental.kvTransferPolicy.domain: Invalid value: "block": does not exist in '
        'ClusterTopology "fabric"; available domains: [host rack zone]')
    off_grove = _graph("off", annotations={"nvidia.com/enable-grove": "False"},
                       experimental={"kvTransferPolicy": {"clusterTopologyName": "fabric",
                                                          "domain": "rack"}})
    assert await _refusal(kubectl, off_grove) == (
        "spec.experimental.kvTransferPolicy.clusterTopologyName: Forbidden: requires the "
        'Grove pathway; remove or unset annotation "nvidia.com/enable-grove" (currently '
        '"False")')


async def test_a_graph_is_judged_by_its_topology_at_creation_only(
        webhooks: KubeClient, kubectl: Kubectl) -> None:
    """Admitted while the levels exist; once the topology is gone, a spec update (the
    graph's generation 2) is still admitted: the graph's TopologyLevelsAvailable says it."""
    packed = _graph("packed", _component("Worker", topologyConstraint={"packDomain": "host"}),
                    topologyConstraint={"clusterTopologyName": "fabric", "packDomain": "rack"},
                    experimental={"kvTransferPolicy": {"clusterTopologyName": "fabric",
                                                       "domain": "rack"}})
    await _admitted(kubectl, packed)
    await webhooks.delete(CLUSTER_TOPOLOGIES, None, "fabric")
    more = copy.deepcopy(packed)
    more["spec"]["components"][0]["replicas"] = 2
    await _admitted(kubectl, more)
    # A new graph naming it now is refused.
    again = copy.deepcopy(packed)
    again["metadata"]["name"] = "again"
    assert "references a ClusterTopology resource that was not found" in await _refusal(
        kubectl, again)


async def test_the_inter_pod_gms_layout_off_the_grove_pathway_is_refused(
        webhooks: KubeClient, kubectl: Kubectl) -> None:
    """As the original's webhook, in either version: the layout needs Grove, and the graph
    opts out of it."""
    fixtures = ROOT / "tests/backends/fixtures/gms"
    off = {"nvidia.com/enable-grove": "false"}
    said = ('Forbidden: requires the Grove pathway; remove or unset annotation '
            '"nvidia.com/enable-grove" (currently "false")')
    for version, path in (
            ("v1beta1", "spec.components[1].experimental.gpuMemoryService.mode"),
            ("v1alpha1", "spec.services.VllmWorker.gpuMemoryService.mode")):
        graph = yaml.safe_load((fixtures / f"gms-interpod.{version}.yaml").read_text())
        graph["metadata"] = {"name": f"gms-{version}", "namespace": "default",
                             "annotations": off}
        assert f"{path}: {said}" in await _refusal(kubectl, graph), version
        del graph["metadata"]["annotations"]
        await _admitted(kubectl, graph)
        graph["metadata"]["annotations"] = off  # turning Grove off later is refused too
        assert f"{path}: {said}" in await _refusal(kubectl, graph), version
