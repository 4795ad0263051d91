"""The operator's webhooks as installed in a cluster: the API server reaches them through the
webhook Service (its EndpointSlice on 127.0.0.1), the configuration comes without a caBundle,
and the operator makes its own certificate for the Service's names and injects the CA."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from operator_harness import install_crds, setup_client

from controller.client import ClientConfig
from controller.manager import Manager, ManagerConfig
from controller.webhook_certs import SECRETS, VALIDATING_WEBHOOK_CONFIGURATIONS
from hack.localcluster.testing import Kubectl, eventually
from reconcilers.operator.webhook_setup import (
    WebhookSettings,
    desired_configuration,
    set_up_webhooks,
)

SETTINGS = WebhookSettings(port=0, cert_dir=Path("/nonexistent"), namespace="dynamo-system")


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
