"""The DGD controller makes what its pods need to start on a real cluster: nothing for a graph
whose service keys collide, the planner's and the EPP's accounts and RBAC, the EPP's ConfigMap
and InferencePool, and the MPI SSH Secret copied into the graph's namespace and kept in sync."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from graph_harness import (
    AGENT,
    NAMESPACES,
    NS,
    ROOT,
    eventually,
    graph,
    install,
    operator,
    ready_condition,
    setup_client,
)

from backends.mpi_secret import DIGEST_LABEL
from backends.settings import OperatorSettings
from controller.client import KubeClient
from controller.resource import Resource
from hack.localcluster.server import LocalCluster
from hack.our_crds import GRAPH_DEPLOYMENTS
from reconcilers.machinery.resources import (
    CONFIG_MAPS,
    INFERENCE_POOLS,
    ROLE_BINDINGS,
    ROLES,
    SECRETS,
    SERVICE_ACCOUNTS,
)

Json = dict[str, Any]
SOURCE_NS = "dynamo-system"
SECRET = "mpi-run-ssh-secret"


@pytest.fixture
async def client(kubeconfig: Path) -> AsyncIterator[KubeClient]:
    c = await setup_client(kubeconfig)
    pool_crd = yaml.safe_load((ROOT / "hack" / "crds" / "inferencepool.yaml").read_text())
    await install(c, [pool_crd])
    await c.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace",
                                "metadata": {"name": SOURCE_NS}})

    async def served() -> bool:
        await c.list(INFERENCE_POOLS, NS)
        return True

    await eventually(served)
    try:
        yield c
    finally:
        await c.close()


async def failed_with(client: KubeClient, *words: str, name: str = "g") -> Json:
    async def check() -> Json | None:
        obj = await client.get(GRAPH_DEPLOYMENTS, NS, name)
        if (obj.get("status") or {}).get("state") != "failed":
            return None
        message = ready_condition(obj)["message"]
        return obj if all(w in message for w in words) else None

    result: Json = await eventually(check)
    return result


async def quiet_writes(cluster: LocalCluster, seconds: float = 1.0) -> int:
    """Writes of the operator over a short idle window."""
    before = cluster.stats.writes(user_agent=AGENT)
    await asyncio.sleep(seconds)
    return cluster.stats.writes(user_agent=AGENT) - before


async def test_service_keys_differing_in_case_fail_validation_in_a_few_writes(
        client: KubeClient, kubeconfig: Path, cluster: LocalCluster) -> None:
    services = {"Worker": {"componentType": "worker"}, "worker": {"componentType": "worker"}}
    async with operator(kubeconfig):
        await client.create(GRAPH_DEPLOYMENTS, graph(services=services))
        obj = await failed_with(client, 'spec.components[1].name: Duplicate value: "worker"')
        assert ready_condition(obj)["reason"] == "ValidationFailed"
        await asyncio.sleep(1.0)
        # The status, its event: never a DCD.
        assert cluster.stats.writes(user_agent=AGENT) <= 4, cluster.stats.snapshot()
        # (a worker's DCD is named by its generation, g-worker-<hash>: none of any name)
        assert (await client.list(Resource("nvidia.com", "v1alpha1", "dynamocomponentdeployments",
                                           "DynamoComponentDeployment"), NS))["items"] == []


async def test_planner_rbac_in_every_mode_without_a_cluster_role(
        client: KubeClient, kubeconfig: Path) -> None:
    services = {"Planner": {"componentType": "planner"}}
    async with operator(kubeconfig, namespace=NS):
        await client.create(GRAPH_DEPLOYMENTS, graph(services=services))
        binding = await eventually(
            lambda: client.get(ROLE_BINDINGS, NS, "planner-serviceaccount-binding"))
        assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                                      "name": "planner-role"}
        await client.get(ROLES, NS, "planner-role")
        account = await client.get(SERVICE_ACCOUNTS, NS, "planner-serviceaccount")
        # Shared by the namespace's graphs: no owner.
        assert not account["metadata"].get("ownerReferences")


async def test_epp_config_map_pool_and_account(client: KubeClient, kubeconfig: Path,
                                              cluster: LocalCluster) -> None:
    services = {"Epp": {"componentType": "epp",
                        "eppConfig": {"config": {"plugins": [{"type": "dyn-kv"}]}}},
                "Worker": {"componentType": "worker"}}
    settings = OperatorSettings(inference_pool_enabled=True)
    async with operator(kubeconfig, settings):
        await client.create(GRAPH_DEPLOYMENTS, graph(services=services))
        config_map = await eventually(lambda: client.get(CONFIG_MAPS, NS, "g-epp-config"))
        assert "dyn-kv" in config_map["data"]["epp-config-dynamo.yaml"]
        pool = await eventually(lambda: client.get(INFERENCE_POOLS, NS, "g-pool"))
        assert pool["spec"]["endpointPickerRef"]["name"] == "g-epp"
        assert pool["metadata"]["ownerReferences"][0]["kind"] == "DynamoGraphDeployment"
        await eventually(lambda: client.get(SERVICE_ACCOUNTS, NS, "epp-serviceaccount"))
        await eventually(lambda: client.get(ROLE_BINDINGS, NS, "epp-serviceaccount-binding"))
        await asyncio.sleep(0.5)
        assert await quiet_writes(cluster) == 0, cluster.stats.snapshot()


async def test_epp_bound_to_the_cluster_role_recreates_a_role_binding(
        client: KubeClient, kubeconfig: Path) -> None:
    services = {"Epp": {"componentType": "epp", "eppConfig": {"config": {}}},
                "Worker": {"componentType": "worker"}}
    settings = OperatorSettings(inference_pool_enabled=True)
    # Namespace-restricted first: the binding refers to the Role epp-role.
    async with operator(kubeconfig, settings):
        await client.create(GRAPH_DEPLOYMENTS, graph(services=services))
        await eventually(lambda: client.get(ROLE_BINDINGS, NS, "epp-serviceaccount-binding"))
    # Cluster-wide: roleRef is immutable, so the binding is recreated to the ClusterRole.
    async with operator(kubeconfig, settings, epp_cluster_role_name="dynamo-operator-epp"):
        async def bound() -> Any:
            found = await client.get(ROLE_BINDINGS, NS, "epp-serviceaccount-binding")
            return found if found["roleRef"]["kind"] == "ClusterRole" else None
        binding = await eventually(bound)
        assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io",
                                      "kind": "ClusterRole", "name": "dynamo-operator-epp"}
        assert not binding["metadata"].get("ownerReferences")


async def test_epp_without_the_inference_pool_api_fails_saying_so(
        client: KubeClient, kubeconfig: Path) -> None:
    services = {"Epp": {"componentType": "epp", "eppConfig": {"config": {}}}}
    async with operator(kubeconfig):
        await client.create(GRAPH_DEPLOYMENTS, graph(services=services))
        await failed_with(client, "InferencePool API", "inference.networking.k8s.io")


def _secret(key: bytes) -> Json:
    return {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
            "metadata": {"name": SECRET, "namespace": SOURCE_NS},
            "data": {"private.key": base64.b64encode(key).decode(),
                     "private.key.pub": base64.b64encode(key + b".pub").decode()}}


async def test_mpi_secret_is_copied_kept_in_sync_and_missing_is_named(
        client: KubeClient, kubeconfig: Path, cluster: LocalCluster) -> None:
    services = {"Worker": {"componentType": "worker", "multinode": {"nodeCount": 2}}}
    settings = OperatorSettings(mpi_run_secret_namespace=SOURCE_NS)
    async with operator(kubeconfig, settings):
        await client.create(GRAPH_DEPLOYMENTS, graph(services=services, backendFramework="trtllm"))
        await failed_with(client, f'"{SOURCE_NS}/{SECRET}" not found', "Worker")
        # The source appearing wakes the graph.
        await client.create(SECRETS, _secret(b"one"))
        copy = await eventually(lambda: client.get(SECRETS, NS, SECRET))
        assert copy["data"] == _secret(b"one")["data"]
        assert not copy["metadata"].get("ownerReferences")
        digest = copy["metadata"]["labels"][DIGEST_LABEL]

        source = await client.get(SECRETS, SOURCE_NS, SECRET)
        await client.update(SECRETS, {**source, "data": _secret(b"two")["data"]})

        async def synced() -> bool:
            live = await client.get(SECRETS, NS, SECRET)
            return bool(live["data"] == _secret(b"two")["data"]
                        and live["metadata"]["labels"][DIGEST_LABEL] != digest)

        await eventually(synced)
        await asyncio.sleep(0.5)
        assert await quiet_writes(cluster) == 0, cluster.stats.snapshot()


async def test_a_namespace_secret_of_the_users_is_never_overwritten(
        client: KubeClient, kubeconfig: Path) -> None:
    services = {"Worker": {"componentType": "worker", "multinode": {"nodeCount": 2}}}
    await client.create(SECRETS, _secret(b"source"))
    await client.create(SECRETS, {**_secret(b"users"), "metadata": {"name": SECRET,
                                                                    "namespace": NS}})
    settings = OperatorSettings(mpi_run_secret_namespace=SOURCE_NS)
    async with operator(kubeconfig, settings):
        await client.create(GRAPH_DEPLOYMENTS, graph(services=services, backendFramework="trtllm"))
        await eventually(lambda: client.get(Resource(
            "nvidia.com", "v1alpha1", "dynamocomponentdeployments", "DynamoComponentDeployment"),
            NS, "g-worker"))
        live = await client.get(SECRETS, NS, SECRET)
        assert live["data"] == _secret(b"users")["data"]
