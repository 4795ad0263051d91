"""The operator's webhooks as installed in a cluster: the API server reaches them through the
webhook Service (its EndpointSlice on 127.0.0.1), the configuration comes without a caBundle,
and the operator makes its own certificate for the Service's names and injects the CA (into
the validating configuration and into our CRDs' conversion webhook)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path

from operator_harness import install_crds, setup_client

from controller.client import ClientConfig
from controller.manager import Manager, ManagerConfig
from controller.webhook_certs import (
    CUSTOM_RESOURCE_DEFINITIONS,
    SECRETS,
    VALIDATING_WEBHOOK_CONFIGURATIONS,
)
from hack.localcluster.server import LocalCluster
from hack.localcluster.testing import Kubectl, eventually
from hack.our_crds import client_config
from reconcilers.operator.conversion_setup import CONVERSION_CRDS
from reconcilers.operator.webhook_setup import (
    WebhookSettings,
    desired_configuration,
    set_up_webhooks,
)

SETTINGS = WebhookSettings(port=0, cert_dir=Path("/nonexistent"), namespace="dynamo-system")
EXAMPLES = Path(__file__).resolve().parents[2] / "deploy" / "examples"
CRD_RESOURCE = "customresourcedefinitions.apiextensions.k8s.io"


def _service_configuration() -> str:
    config = desired_configuration(SETTINGS, None)
    for hook in config["webhooks"]:
        path = hook["clientConfig"]["url"]
        hook["clientConfig"] = {"service": {"namespace": "dynamo-system",
                                            "name": SETTINGS.service_name, "path": path}}
    return json.dumps(config)


def _service(port: int) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "Service",
         "metadata": {"name": SETTINGS.service_name, "namespace": "dynamo-system"},
         "spec": {"ports": [{"name": "webhook", "port": 443, "targetPort": 9443}]}},
        {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
         "metadata": {"name": "webhook-1", "namespace": "dynamo-system",
                      "labels": {"kubernetes.io/service-name": SETTINGS.service_name}},
         "addressType": "IPv4", "ports": [{"name": "webhook", "port": port}],
         "endpoints": [{"addresses": ["127.0.0.1"], "conditions": {"ready": True}}]}]})


async def test_self_managed_certificate_behind_the_webhook_service(
        kubeconfig: Path, kubectl: Kubectl) -> None:
    client = await setup_client(kubeconfig)
    try:
        await install_crds(client)
    finally:
        await client.close()
    await kubectl("create", "namespace", "dynamo-system")
    await kubectl("apply", "-f", "-", stdin=_service_configuration())
    manager = await Manager.create(ManagerConfig(
        kubeconfig=kubeconfig, client=ClientConfig(qps=None), status_host="127.0.0.1",
        status_port=0, graceful_shutdown_timeout=2.0))
    server = await set_up_webhooks(manager, SETTINGS)
    task = asyncio.create_task(manager.run())
    try:
        await eventually(lambda: server.ready, within=10, what="the webhook server")
        await kubectl("apply", "--validate=false", "-f", "-", stdin=_service(server.port))
        config = await manager.client.get(VALIDATING_WEBHOOK_CONFIGURATIONS, None,
                                          SETTINGS.configuration_name)
        secret = await manager.client.get(SECRETS, "dynamo-system", SETTINGS.secret_name)
        assert {w["clientConfig"]["caBundle"] for w in config["webhooks"]} == {
            secret["data"]["ca.crt"]}
        bad = json.dumps({
            "apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment",
            "metadata": {"name": "g"},
            "spec": {"backendFramework": "vllm", "services": {
                "A" * 50: {"componentType": "worker"}}}})
        result = await kubectl.run("apply", "-f", "-", stdin=bad)
        assert 'admission webhook "vdynamographdeployment.kb.io" denied the request' in \
            result.stderr, result.stderr
    finally:
        manager.stop()
        await asyncio.wait_for(task, 10)


async def test_conversion_behind_the_webhook_service(
        cluster: LocalCluster, kubeconfig: Path, kubectl: Kubectl) -> None:
    """The operator's `/convert` behind the Service the generated CRDs name: the CA injected
    into all five CRDs, v1beta1 objects stored as v1alpha1 and read in both, and then no CRD
    write while nothing changes (the keeper looks every 0.5 s with this validity)."""
    client = await setup_client(kubeconfig)
    try:
        await install_crds(client)
    finally:
        await client.close()
    await kubectl("create", "namespace", "dynamo-system")
    settings = dataclasses.replace(SETTINGS, cert_validity=5.0)
    manager = await Manager.create(ManagerConfig(
        kubeconfig=kubeconfig, client=ClientConfig(qps=None), status_host="127.0.0.1",
        status_port=0, graceful_shutdown_timeout=2.0))
    server = await set_up_webhooks(manager, settings)
    task = asyncio.create_task(manager.run())
    try:
        await eventually(lambda: server.ready, within=10, what="the webhook server")
        await kubectl("apply", "--validate=false", "-f", "-", stdin=_service(server.port))
        secret = await manager.client.get(SECRETS, "dynamo-system", settings.secret_name)

        async def injected() -> bool:
            for name in CONVERSION_CRDS:
                crd = await manager.client.get(CUSTOM_RESOURCE_DEFINITIONS, None, name)
                config = crd["spec"]["conversion"]["webhook"]["clientConfig"]
                # Installed pointing at the test bed's webhook: the keeper moves it over.
                if config.get("caBundle") != secret["data"]["ca.crt"] or "url" in config:
                    return False
                assert config["service"] == {"namespace": "dynamo-system", "port": 443,
                                             "name": settings.service_name, "path": "/convert"}
            return True
        await eventually(injected, within=10, what="the CA in the five CRDs")
        await kubectl("apply", "-f", str(EXAMPLES / "v1beta1" / "dynamomodel-base.yaml"))
        beta = json.loads(await kubectl("get", "dynamomodels.v1beta1.nvidia.com",
                                        "qwen3-base", "-o", "json"))
        alpha = json.loads(await kubectl("get", "dynamomodels.v1alpha1.nvidia.com",
                                         "qwen3-base", "-o", "json"))
        assert (beta["apiVersion"], alpha["apiVersion"]) == (
            "nvidia.com/v1beta1", "nvidia.com/v1alpha1")
        assert beta["spec"]["baseModelName"] == alpha["spec"]["baseModelName"]
        writes = cluster.stats.writes(resource=CRD_RESOURCE)
        await asyncio.sleep(1.5)
        assert cluster.stats.writes(resource=CRD_RESOURCE) == writes
    finally:
        manager.stop()
        await asyncio.wait_for(task, 10)


async def test_a_namespace_restricted_operator_leaves_the_crds_alone(
        cluster: LocalCluster, kubeconfig: Path, kubectl: Kubectl) -> None:
    """It serves `/convert`, but the CRDs are the cluster's: no write to them, their
    clientConfig as installed."""
    client = await setup_client(kubeconfig)
    try:
        await install_crds(client)
    finally:
        await client.close()
    installed = cluster.stats.writes(resource=CRD_RESOURCE)  # one create per CRD
    await kubectl("create", "namespace", "dynamo-system")
    settings = dataclasses.replace(SETTINGS, cert_validity=5.0,
                                   restricted_namespace="dynamo-system")
    manager = await Manager.create(ManagerConfig(
        kubeconfig=kubeconfig, client=ClientConfig(qps=None), status_host="127.0.0.1",
        status_port=0, graceful_shutdown_timeout=2.0))
    server = await set_up_webhooks(manager, settings)
    task = asyncio.create_task(manager.run())
    try:
        await eventually(lambda: server.ready, within=10, what="the webhook server")
        assert "/convert" in server.paths
        await eventually(lambda: manager.client.get(SECRETS, "dynamo-system",
                                                    settings.secret_name),
                         within=10, what="the certificate Secret")
        await asyncio.sleep(1.0)  # two rounds of the certificates at this validity
        assert cluster.stats.writes(resource=CRD_RESOURCE) == installed  # the creates alone
        # Each still converts through the test bed's in-process webhook, as installed.
        for name in CONVERSION_CRDS:
            crd = await manager.client.get(CUSTOM_RESOURCE_DEFINITIONS, None, name)
            assert crd["spec"]["conversion"]["webhook"]["clientConfig"] == client_config()
    finally:
        manager.stop()
        await asyncio.wait_for(task, 10)
