"""The operator's validating webhooks for v1beta1 objects, through the local API server: the
webhook Service on 127.0.0.1, the configuration the operator wants (both versions), and the
operator's `/convert` storing v1beta1 writes as v1alpha1.

v1beta1's own shape rules (component names, epp, restart on create, the main container and
the sidecars, immutable type), one rule set for both versions with errors naming the field as
written, the scaling adapter's webhook, and what registering v1alpha1 alone would do (the
API server converts the object for the webhook: matchPolicy Equivalent)."""

from __future__ import annotations

import asyncio
import base64
import copy
import json
import re
import ssl
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from operator_harness import install_crds, setup_client

from api.hub_errors import hub_wording
from controller.client import ClientConfig, KubeClient
from controller.manager import Manager, ManagerConfig
from controller.webhook import WebhookServer
from controller.webhook_certs import CUSTOM_RESOURCE_DEFINITIONS, SECRETS
from hack.localcluster.testing import Kubectl, eventually
from reconcilers.operator.conversion_setup import CONVERSION_CRDS
from reconcilers.operator.webhook_setup import (
    WebhookSettings,
    desired_configuration,
    set_up_webhooks,
)

Json = dict[str, Any]
SETTINGS = WebhookSettings(port=0, cert_dir=Path("/nonexistent"), namespace="dynamo-system")
GRAPH_WEBHOOK = "vdynamographdeployment.kb.io"
IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.8.0"
#: Longer than the 45 characters Grove object names leave: a rule of the webhook only.
LONG_NAME = "AServiceNameThatIsFarTooLongForGroveObjectNames"


@dataclass
class Webhooks:
    """The operator's webhook server in the local cluster, and kubectl."""

    kubectl: Kubectl
    client: KubeClient
    server: WebhookServer
    ca_pem: bytes

    async def apply(self, obj: Json) -> str:
        """kubectl apply's stderr when refused, "" when admitted."""
        result = await self.kubectl.run("apply", "-f", "-", stdin=json.dumps(obj))
        return "" if result.code == 0 else result.stderr

    async def review(self, plural: str, obj: Json) -> Json:
        """The webhook's answer to a CREATE review sent straight to it (for what the schema
        refuses before any webhook is called)."""
        kind = obj["kind"].lower()
        url = (f"https://127.0.0.1:{self.server.port}/validate-nvidia-com-v1alpha1-{kind}")
        review = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
            "uid": str(uuid.uuid4()), "operation": "CREATE", "namespace": "default",
            "name": obj["metadata"]["name"],
            "kind": {"group": "nvidia.com", "version": "v1beta1", "kind": obj["kind"]},
            "resource": {"group": "nvidia.com", "version": "v1beta1", "resource": plural},
            "userInfo": {"username": "alice"}, "object": obj}}
        context = ssl.create_default_context(cadata=self.ca_pem.decode())
        async with aiohttp.ClientSession() as session, session.post(
                url, json=review, ssl=context, server_hostname=(
                    f"{SETTINGS.service_name}.{SETTINGS.namespace}.svc"),
                timeout=aiohttp.ClientTimeout(total=10)) as answer:
            response: Json = (await answer.json())["response"]
            return response


def _configuration(versions: list[str] | None) -> str:
    """The operator's configuration, reaching it through its Service; `versions` replaces
    the versions its rules list."""
    config = desired_configuration(SETTINGS, None)
    for hook in config["webhooks"]:
        path = hook["clientConfig"]["url"]
        hook["clientConfig"] = {"service": {"namespace": "dynamo-system",
                                            "name": SETTINGS.service_name, "path": path}}
        if versions is not None:
            hook["rules"][0]["apiVersions"] = versions
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


async def _running(kubeconfig: Path, kubectl: Kubectl,
                   versions: list[str] | None) -> AsyncIterator[Webhooks]:
    client = await setup_client(kubeconfig)
    try:
        await install_crds(client)
    finally:
        await client.close()
    await kubectl("create", "namespace", "dynamo-system")
    await kubectl("apply", "-f", "-", stdin=_configuration(versions))
    manager = await Manager.create(ManagerConfig(
        kubeconfig=kubeconfig, client=ClientConfig(qps=None), status_host="127.0.0.1",
        status_port=0, graceful_shutdown_timeout=2.0))
    server = await set_up_webhooks(manager, SETTINGS)
    task = asyncio.create_task(manager.run())
    try:
        await eventually(lambda: server.ready, within=10, what="the webhook server")
        await kubectl("apply", "--validate=false", "-f", "-", stdin=_service(server.port))
        secret = await manager.client.get(SECRETS, "dynamo-system", SETTINGS.secret_name)

        # The CA and the Service are written by two runnables (the certificates' and the
        # conversion keeper's): until both are in, a CRD can name the install's in-process
        # webhook with the operator's CA, and the API server's call to it fails TLS.
        async def converting() -> bool:
            for name in CONVERSION_CRDS:
                crd = await manager.client.get(CUSTOM_RESOURCE_DEFINITIONS, None, name)
                config = crd["spec"]["conversion"]["webhook"]["clientConfig"]
                if config.get("caBundle") != secret["data"]["ca.crt"] or \
                        (config.get("service") or {}).get("name") != SETTINGS.service_name:
                    return False
            return True
        await eventually(converting, within=15, what="the Service and CA in the five CRDs")
        yield Webhooks(kubectl, manager.client, server,
                       base64.b64decode(secret["data"]["ca.crt"]))
    finally:
        manager.stop()
        await asyncio.wait_for(task, 10)


@pytest.fixture
async def webhooks(kubeconfig: Path, kubectl: Kubectl) -> AsyncIterator[Webhooks]:
    async for running in _running(kubeconfig, kubectl, None):
        yield running


def _component(name: str, kind: str = "worker", **fields: Any) -> Json:
    return {"name": name, "type": kind, "replicas": 1,
            "podTemplate": {"spec": {"containers": [{"name": "main", "image": IMAGE}]}},
            **fields}


def _graph(*components: Json, name: str = "g", **spec: Any) -> Json:
    return {"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"backendFramework": "vllm",
                     "components": list(components) or [_component("Frontend", "frontend")],
                     **spec}}


def _denied(stderr: str, webhook: str = GRAPH_WEBHOOK) -> str:
    """What the webhook said, from kubectl's error line."""
    prefix = f'admission webhook "{webhook}" denied the request: '
    assert prefix in stderr, stderr
    return stderr.split(prefix, 1)[1].strip()


async def test_component_names_are_unique_case_insensitively(webhooks: Webhooks) -> None:
    """kubectl shows the denial as kube-apiserver words it, naming the list entry."""
    stderr = await webhooks.apply(_graph(_component("Worker"), _component("worker")))
    assert stderr.strip() == (
        'The request is invalid: error when creating "STDIN": admission webhook '
        f'"{GRAPH_WEBHOOK}" denied the request: spec.components[1].name: Duplicate value: '
        '"worker"'), stderr


async def test_what_the_schema_refuses_first_the_webhook_refuses_too(
        webhooks: Webhooks) -> None:
    """More than 25 components, or one name twice, never reach a webhook through the API
    server (maxItems, the list-map key); the webhook says the same on its own."""
    many = _graph(*(_component(f"w{i}") for i in range(26)))
    answer = await webhooks.review("dynamographdeployments", many)
    assert not answer["allowed"]
    assert answer["status"]["message"].startswith(
        "spec.components: Too many: 26: must have at most 25 items")
    twice = await webhooks.review("dynamographdeployments",
                                  _graph(_component("w"), _component("w")))
    assert "spec.components[1].name: Duplicate value: \"w\"" in twice["status"]["message"]


async def test_at_most_one_epp_component(webhooks: Webhooks) -> None:
    epp = {"configMapRef": {"name": "epp-config", "key": "config.yaml"}}
    stderr = await webhooks.apply(_graph(_component("Epp", "epp", eppConfig=epp),
                                         _component("Epp2", "epp", eppConfig=epp)))
    assert "spec.components[1].type: Forbidden: at most one component may have type epp " \
           "(spec.components[0] has it)" in _denied(stderr)


async def test_restart_must_be_unset_on_create(webhooks: Webhooks) -> None:
    stderr = await webhooks.apply(_graph(restart={"id": "r1"}))
    assert _denied(stderr).startswith("spec.restart: Forbidden: must be unset on create")
    assert await webhooks.apply(_graph()) == ""
    assert await webhooks.apply(_graph(restart={"id": "r1"})) == ""


async def test_a_component_type_once_set_is_immutable(webhooks: Webhooks) -> None:
    graph = _graph(_component("Frontend", "frontend"), _component("Worker"))
    assert await webhooks.apply(graph) == ""
    changed = copy.deepcopy(graph)
    changed["spec"]["components"][1]["type"] = "decode"
    assert _denied(await webhooks.apply(changed)) == (
        'spec.components[1].type: Invalid value: "decode": field is immutable once set '
        '(was "worker")')
    # Matched by name: reordering the list changes nothing.
    graph["spec"]["components"].reverse()
    assert await webhooks.apply(graph) == ""
    dcd: Json = {"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoComponentDeployment",
           "metadata": {"name": "d", "namespace": "default"},
           "spec": {"backendFramework": "vllm", **_component("d", "prefill")}}
    assert await webhooks.apply(dcd) == ""
    del dcd["spec"]["type"]
    assert _denied(await webhooks.apply(dcd), "vdynamocomponentdeployment.kb.io") == (
        'spec.type: Invalid value: null: field is immutable once set (was "prefill")')


async def test_a_pod_template_has_main_and_sidecars_name_their_images(
        webhooks: Webhooks) -> None:
    no_main = _component("Worker")
    no_main["podTemplate"]["spec"]["containers"][0]["name"] = "engine"
    assert _denied(await webhooks.apply(_graph(no_main))).startswith(
        "spec.components[0].podTemplate.spec.containers: Required value: a container named "
        '"main" is required')
    sidecar = _component("Worker", frontendSidecar="fe", dynamoSidecar="runtime")
    sidecar["podTemplate"]["spec"]["containers"].append({"name": "metrics"})
    sidecar["podTemplate"]["spec"]["initContainers"] = [{"name": "runtime", "image": IMAGE}]
    assert _denied(await webhooks.apply(_graph(sidecar))).split("; ") == [
        "spec.components[0].podTemplate.spec.containers[1].image: Required value: a sidecar "
        "container gets no defaults and must name its image",
        'spec.components[0].frontendSidecar: Invalid value: "fe": must name a container of '
        "podTemplate.spec.containers",
        'spec.components[0].dynamoSidecar: Invalid value: "runtime": must name an init '
        "container of podTemplate.spec.initContainers with restartPolicy Always"]
    sidecar["podTemplate"]["spec"]["containers"][1]["image"] = IMAGE
    sidecar["podTemplate"]["spec"]["containers"][1]["name"] = "fe"
    sidecar["podTemplate"]["spec"]["initContainers"][0]["restartPolicy"] = "Always"
    assert await webhooks.apply(_graph(sidecar)) == ""


async def test_roles_and_min_available(webhooks: Webhooks) -> None:
    """roles: a multinode component's leader and worker, of 1 and nodeCount - 1 pods;
    minAvailable: at most replicas (unless 0), and it does not change."""
    single = _component("Worker", roles=[{"name": "leader"}, {"name": "worker"}])
    assert _denied(await webhooks.apply(_graph(single))) == (
        "spec.components[0].roles: Forbidden: only a multinode component has roles")
    multi = _component("Worker", multinode={"nodeCount": 3},
                       roles=[{"name": "leader", "replicas": 2}, {"name": "workers"}])
    assert _denied(await webhooks.apply(_graph(multi))).split("; ") == [
        "spec.components[0].roles[0].replicas: Invalid value: 2: the leader role has 1 pod "
        "(1)",
        'spec.components[0].roles[1].name: Unsupported value: "workers": supported values: '
        '"leader", "worker"',
        "spec.components[0].roles: Required value: exactly one leader and one worker role"]
    multi["roles"] = [{"name": "leader", "replicas": 1}, {"name": "worker", "replicas": 2}]
    assert await webhooks.apply(_graph(multi)) == ""
    least = _component("Frontend", "frontend", replicas=1, minAvailable=2)
    assert _denied(await webhooks.apply(_graph(least, name="h"))) == (
        "spec.components[0].minAvailable: Invalid value: 2: must be less than or equal to "
        "replicas (1) unless replicas is 0")
    least["replicas"] = 2
    assert await webhooks.apply(_graph(least, name="h")) == ""
    least["minAvailable"] = 1
    assert _denied(await webhooks.apply(_graph(least, name="h"))) == (
        "spec.components[0].minAvailable: Invalid value: field is immutable after creation")


async def test_topology_and_the_kv_transfer_policy_are_fixed_at_creation(
        webhooks: Webhooks) -> None:
    """Issue #29 item 4: kubectl gets 422 naming the field when an update changes the KV
    transfer policy or a topology constraint (the API server's default enforcement is no
    change)."""
    graph = _graph(_component("Worker", topologyConstraint={"packDomain": "rack"}),
                   topologyConstraint={"clusterTopologyName": "grove-topology"},
                   experimental={"kvTransferPolicy": {
                       "labelKey": "topology.kubernetes.io/zone", "domain": "zone"}})
    assert await webhooks.apply(graph) == ""
    assert await webhooks.apply(graph) == ""
    changed = copy.deepcopy(graph)
    changed["spec"]["experimental"]["kvTransferPolicy"]["domain"] = "rack"
    stderr = await webhooks.apply(changed)
    assert "The request is invalid" in stderr, stderr
    assert _denied(stderr).startswith(
        "spec.experimental.kvTransferPolicy: Forbidden: is immutable"), stderr
    moved = copy.deepcopy(graph)
    moved["spec"]["components"][0]["topologyConstraint"] = {"packDomain": "host"}
    assert _denied(await webhooks.apply(moved)).startswith(
        "spec.components[0].topologyConstraint: Forbidden: is immutable")
    bad = _graph(name="h", experimental={"kvTransferPolicy": {"domain": "zone"}})
    assert _denied(await webhooks.apply(bad)) == (
        "spec.experimental.kvTransferPolicy: Invalid value: exactly one of labelKey or "
        "clusterTopologyName is required")


def _alpha_graph() -> Json:
    return {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment",
            "metadata": {"name": "same", "namespace": "default"},
            "spec": {"backendFramework": "vllm", "services": {LONG_NAME: {
                "componentType": "worker", "replicas": 1,
                "extraPodSpec": {"mainContainer": {"image": IMAGE,
                                                   "env": [{"name": "A", "value": "1"}]}},
                "resources": {"limits": {"gpu": "0"}}}}}}


def _beta_graph() -> Json:
    return {"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment",
            "metadata": {"name": "same", "namespace": "default"},
            "spec": {"backendFramework": "vllm", "components": [{
                "name": LONG_NAME, "type": "worker", "replicas": 1,
                "podTemplate": {"spec": {"containers": [{
                    "name": "main", "image": IMAGE, "env": [{"name": "A", "value": "1"}],
                    "resources": {"limits": {"nvidia.com/gpu": "0"}}}]}}}]}}


def _split(denial: str) -> list[tuple[str, str]]:
    """(field, message) of each error (a message may hold "; " itself)."""
    errors = re.split(r"; (?=spec\.)", denial)
    return [(path, message) for path, _, message in (e.partition(": ") for e in errors)]


async def test_one_invalid_deployment_is_refused_by_the_same_rules_in_both_versions(
        webhooks: Webhooks) -> None:
    """The same graph written in each version: the same rules refuse it with the same
    messages, each naming the field as that version spells it, in its words (components, not
    services, in v1beta1)."""
    alpha = _split(_denied(await webhooks.apply(_alpha_graph())))
    beta = _split(_denied(await webhooks.apply(_beta_graph())))
    assert [hub_wording(m) for _, m in alpha] == [m for _, m in beta]
    assert "shorten the graph or service name" in alpha[0][1]
    assert "shorten the graph or component name" in beta[0][1]
    assert [p for p, _ in alpha] == [
        f"spec.services.{LONG_NAME}", f"spec.services.{LONG_NAME}.resources.limits.gpu"]
    assert [p for p, _ in beta] == [
        "spec.components[0].name",
        "spec.components[0].podTemplate.spec.containers[0].resources.limits[nvidia.com/gpu]"]


async def test_the_scaling_adapter_has_a_webhook_in_both_versions(webhooks: Webhooks) -> None:
    adapter: Json = {"apiVersion": "nvidia.com/v1beta1",
               "kind": "DynamoGraphDeploymentScalingAdapter",
               "metadata": {"name": "a", "namespace": "default"},
               "spec": {"replicas": 1, "dgdRef": {"name": "Not_A_Name", "componentName": "w"}}}
    stderr = await webhooks.apply(adapter)
    assert _denied(stderr, "vdynamographdeploymentscalingadapter.kb.io").startswith(
        "spec.dgdRef.name: ")
    adapter["spec"]["dgdRef"]["name"] = "g"
    assert await webhooks.apply(adapter) == ""


@pytest.fixture
async def alpha_only(kubeconfig: Path, kubectl: Kubectl) -> AsyncIterator[Webhooks]:
    async for running in _running(kubeconfig, kubectl, ["v1alpha1"]):
        yield running


async def test_registered_for_v1alpha1_alone_the_webhook_gets_converted_objects(
        alpha_only: Webhooks) -> None:
    """matchPolicy Equivalent: the API server converts a v1beta1 write through /convert for
    a webhook that registered v1alpha1 only. The rules still run, but on the converted
    object: its errors name v1alpha1 fields, and v1beta1's own shape is not seen."""
    denial = _denied(await alpha_only.apply(_beta_graph()))
    assert denial.startswith(f"spec.services.{LONG_NAME}: "), denial
    graph = _graph(_component("Worker"), _component("worker"))
    assert "service keys" in _denied(await alpha_only.apply(graph))
