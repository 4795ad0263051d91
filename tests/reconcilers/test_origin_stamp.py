"""The origin-version stamp (`reconcilers.operator.defaulting`) through the local API server:
the operator's webhook server with `--webhook-url`, keeping its Mutating- and
ValidatingWebhookConfiguration, and kubectl writing graphs in both versions."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from operator_harness import install_crds, setup_client

from controller.client import ClientConfig
from controller.errors import NotFound
from controller.manager import Manager, ManagerConfig
from controller.webhook import AdmissionRequest, AdmissionResponse
from controller.webhook_certs import MUTATING_WEBHOOK_CONFIGURATIONS
from hack.localcluster.testing import Kubectl, eventually
from hack.processes import free_port
from reconcilers.operator.defaulting import stamp_patch
from reconcilers.operator.version import VERSION
from reconcilers.operator.webhook_setup import WebhookSettings, set_up_webhooks

Json = dict[str, Any]
KEY = "nvidia.com/dynamo-operator-origin-version"
DGD_ALPHA = "dynamographdeployments.v1alpha1.nvidia.com"
IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.8.0"


@pytest.fixture
async def webhooks(kubeconfig: Path, kubectl: Kubectl) -> AsyncIterator[Kubectl]:
    client = await setup_client(kubeconfig)
    try:
        await install_crds(client)
    finally:
        await client.close()
    port = free_port()
    settings = WebhookSettings(port=port, cert_dir=Path("/nonexistent"),
                               url=f"https://127.0.0.1:{port}", cert_validity=3600.0)
    manager = await Manager.create(ManagerConfig(
        kubeconfig=kubeconfig, client=ClientConfig(qps=None), status_host="127.0.0.1",
        status_port=0, graceful_shutdown_timeout=2.0))
    server = await set_up_webhooks(manager, settings)
    task = asyncio.create_task(manager.run())
    try:
        await eventually(lambda: server.ready, within=10, what="the webhook server")

        async def configured() -> bool:
            try:
                config = await manager.client.get(MUTATING_WEBHOOK_CONFIGURATIONS, None,
                                                  settings.mutating_configuration_name)
            except NotFound:
                return False
            return bool(config["webhooks"][0]["clientConfig"].get("caBundle"))
        await eventually(configured, within=15, what="the MutatingWebhookConfiguration")
        yield kubectl
    finally:
        manager.stop()
        await asyncio.wait_for(task, 10)


def alpha(name: str, annotations: dict[str, str] | None = None) -> Json:
    meta: Json = {"name": name, "namespace": "default"}
    if annotations is not None:
        meta["annotations"] = annotations
    return {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment",
            "metadata": meta,
            "spec": {"backendFramework": "vllm", "services": {"Frontend": {
                "componentType": "frontend", "replicas": 1,
                "extraPodSpec": {"mainContainer": {"image": IMAGE}}}}}}


def beta(name: str) -> Json:
    return {"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"backendFramework": "vllm", "components": [{
                "name": "Frontend", "type": "frontend", "replicas": 1,
                "podTemplate": {"spec": {"containers": [{"name": "main", "image": IMAGE}]}}}]}}


async def annotations(kubectl: Kubectl, name: str) -> dict[str, str]:
    out = await kubectl("get", DGD_ALPHA, name, "-o", "json")
    return dict(json.loads(out)["metadata"].get("annotations") or {})


async def test_a_created_graph_is_stamped_in_either_version(webhooks: Kubectl) -> None:
    await webhooks("create", "-f", "-", stdin=json.dumps(alpha("a")))
    await webhooks("create", "-f", "-", stdin=json.dumps(alpha("a2", {"team": "x"})))
    await webhooks("create", "-f", "-", stdin=json.dumps(beta("b")))
    assert (await annotations(webhooks, "a"))[KEY] == VERSION
    assert await annotations(webhooks, "a2") == {"team": "x", KEY: VERSION}
    assert (await annotations(webhooks, "b"))[KEY] == VERSION


async def test_the_creators_stamp_stays_and_is_immutable(webhooks: Kubectl) -> None:
    await webhooks("create", "-f", "-", stdin=json.dumps(alpha("moved", {KEY: "1.1.0"})))
    assert (await annotations(webhooks, "moved"))[KEY] == "1.1.0"
    # A replace of the manifest without it, or with another value: the stamp comes back.
    await webhooks("replace", "-f", "-", stdin=json.dumps(alpha("moved")))
    assert (await annotations(webhooks, "moved"))[KEY] == "1.1.0"
    await webhooks("annotate", DGD_ALPHA, "moved", f"{KEY}=2.0.0", "--overwrite")
    assert (await annotations(webhooks, "moved"))[KEY] == "1.1.0"
    await webhooks("annotate", DGD_ALPHA, "moved", f"{KEY}-")
    assert (await annotations(webhooks, "moved"))[KEY] == "1.1.0"


async def test_a_stamp_that_is_not_a_version_is_refused(webhooks: Kubectl) -> None:
    result = await webhooks.run("create", "-f", "-",
                                stdin=json.dumps(alpha("bad", {KEY: "not-semver"})))
    assert result.code != 0
    assert (f"metadata.annotations[{KEY}]: Invalid value: \"not-semver\": must be valid "
            "semver") in result.stderr, result.stderr


def _request(operation: str, obj: Json | None, old: Json | None = None) -> AdmissionRequest:
    return AdmissionRequest(uid="u", operation=operation, resource="dynamographdeployments",
                            subresource="", name="g", namespace="default", username="alice",
                            groups=(), object=obj, old_object=old, dry_run=False, raw={})


def test_an_unstamped_graph_gets_no_stamp_at_an_update() -> None:
    """A graph made before the stamp existed keeps its old rendering: no stamp is added."""
    assert stamp_patch(_request("UPDATE", alpha("old"), alpha("old")), "0.1.0") == []
    # Its owner may add one (the opt-in), which is kept from then on.
    assert stamp_patch(_request("UPDATE", alpha("old", {KEY: "0.1.0"}), alpha("old")),
                       "0.1.0") == []
    assert stamp_patch(_request("DELETE", None, alpha("old")), "0.1.0") == []


def test_the_patch_escapes_the_annotation_key() -> None:
    patch = stamp_patch(_request("CREATE", alpha("g", {"a": "b"})), "0.1.0")
    assert patch == [{"op": "add", "path": "/metadata/annotations/"
                      "nvidia.com~1dynamo-operator-origin-version", "value": "0.1.0"}]
    response_json = {"op": "add", "path": "/metadata/annotations", "value": {KEY: "0.1.0"}}
    assert stamp_patch(_request("CREATE", alpha("g")), "0.1.0") == [response_json]
    wire = AdmissionResponse.allow(patch=tuple(patch)).to_json("u")
    assert wire["patchType"] == "JSONPatch"
    assert json.loads(base64.b64decode(wire["patch"])) == patch
