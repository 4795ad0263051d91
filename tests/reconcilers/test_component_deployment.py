"""The DCD controller on a real Manager against the local API server.

The local cluster runs no Deployment controller, so the tests play it: they write Deployment
status through the status subresource.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from operator_harness import (
    DCD_CRD,
    OPERATOR_AGENT,
    Operator,
    condition,
    eventually,
    get_or_none,
    install_crds,
    running_operator,
    setup_client,
    wait_for,
)

from backends import naming
from controller.client import KubeClient
from hack.localcluster.server import LocalCluster
from hack.our_crds import COMPONENT_DEPLOYMENTS
from reconcilers.component import reconciler as component_deployment
from reconcilers.component.pull_secrets import HOSTS_KEY
from reconcilers.machinery.children import GENERATION_ANNOTATION
from reconcilers.machinery.finalizer import FINALIZER
from reconcilers.machinery.resources import (
    DEPLOYMENTS,
    INGRESSES,
    PODS,
    ROLE_BINDINGS,
    SECRETS,
    SERVICE_ACCOUNTS,
    SERVICES,
)

Json = dict[str, Any]
NS = "default"
IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1"


def dcd(name: str, component_type: str = "worker", replicas: int = 2, **spec: Any) -> Json:
    return {
        "apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoComponentDeployment",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"componentType": component_type, "replicas": replicas,
                 "backendFramework": "vllm",
                 "extraPodSpec": {"mainContainer": {"image": IMAGE}}, **spec},
    }


@pytest.fixture
async def kube(kubeconfig: Path) -> AsyncIterator[KubeClient]:
    client = await setup_client(kubeconfig)
    await install_crds(client, DCD_CRD)
    try:
        yield client
    finally:
        await client.close()


@pytest.fixture
async def operator(kube: KubeClient, kubeconfig: Path) -> AsyncIterator[Operator]:
    async with running_operator(kubeconfig, [component_deployment.register]) as op:
        yield op


async def set_deployment_status(kube: KubeClient, name: str, **status: int) -> None:
    """Play the Deployment controller: report status for the current generation."""
    dep = await kube.get(DEPLOYMENTS, NS, name)
    body = {"observedGeneration": dep["metadata"]["generation"], **status}
    await kube.patch(DEPLOYMENTS, NS, name, {"status": body}, subresource="status")


async def available(kube: KubeClient, name: str, status: str, text: str = "") -> Json:
    """The DCD once its Available condition has that status and message part."""
    def ok(obj: Json) -> bool:
        c = condition(obj, "Available")
        return c.get("status") == status and text in c.get("message", "")
    return await wait_for(kube, COMPONENT_DEPLOYMENTS, NS, name, ok)


async def test_worker_gets_deployment_and_service(kube: KubeClient, operator: Operator) -> None:
    created = await kube.create(COMPONENT_DEPLOYMENTS, dcd("w"))
    dep = await wait_for(kube, DEPLOYMENTS, NS, "w")
    svc = await wait_for(kube, SERVICES, NS, "w")
    owner = dep["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["name"], owner["uid"], owner["controller"]) == (
        "DynamoComponentDeployment", "w", created["metadata"]["uid"], True)
    assert dep["spec"]["replicas"] == 2
    assert dep["spec"]["selector"] == {"matchLabels": {"nvidia.com/selector": "w"}}
    pod_labels = dep["spec"]["template"]["metadata"]["labels"]
    assert pod_labels["nvidia.com/dynamo-component-type"] == "worker"
    # A standalone DCD's pods carry what its Service selects on.
    assert svc["spec"]["selector"].items() <= pod_labels.items()
    assert svc["spec"]["selector"]["nvidia.com/dynamo-namespace"] == "default-w"
    assert svc["spec"]["ports"] == [
        {"name": "system", "port": 9090, "targetPort": "system", "protocol": "TCP"}]
    assert svc["metadata"]["labels"]["nvidia.com/dynamo-discovery-enabled"] == "true"
    obj = await available(kube, "w", "False", "spec update to be observed")
    # Kubernetes discovery: nothing to clean up, so no finalizer (issue 20).
    assert not obj["metadata"].get("finalizers")
    valid = condition(obj, "Valid")
    assert (valid["status"], valid["reason"]) == ("True", "ValidationPassed")
    assert condition(obj, "Available")["reason"] == "DeploymentNotReady"
    assert obj["status"]["observedGeneration"] == obj["metadata"]["generation"]
    assert obj["status"]["service"]["componentKind"] == "Deployment"


async def test_standalone_dcd_has_its_discovery_account_and_any_component_type(
        kube: KubeClient, operator: Operator) -> None:
    await kube.create(COMPONENT_DEPLOYMENTS, dcd("r", "router"))
    dep = await wait_for(kube, DEPLOYMENTS, NS, "r")
    pod = dep["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == "r-k8s-service-discovery"
    env = {e["name"]: e.get("value") for e in pod["containers"][-1]["env"]}
    assert env["DYN_PARENT_DGD_K8S_NAME"] == "r"
    for resource, name in ((SERVICE_ACCOUNTS, "r-k8s-service-discovery"),
                           (ROLE_BINDINGS, "r-k8s-service-discovery-binding")):
        owned = await wait_for(kube, resource, NS, name)
        assert owned["metadata"]["ownerReferences"][0]["name"] == "r"
    obj = await wait_for(kube, COMPONENT_DEPLOYMENTS, NS, "r",
                         lambda o: condition(o, "Valid").get("status") == "True")
    message = condition(obj, "Valid")["message"]
    assert 'spec.componentType: "router" has no defaults of its own' in message


async def test_frontend_service_port(kube: KubeClient, operator: Operator) -> None:
    await kube.create(COMPONENT_DEPLOYMENTS, dcd("f", "frontend", 1))
    svc = await wait_for(kube, SERVICES, NS, "f")
    assert svc["spec"]["ports"] == [
        {"name": "http", "port": 8000, "targetPort": "http", "protocol": "TCP"}]
    assert "nvidia.com/dynamo-discovery-enabled" not in svc["metadata"].get("labels", {})


async def test_available_only_after_the_rollout(kube: KubeClient, operator: Operator) -> None:
    await kube.create(COMPONENT_DEPLOYMENTS, dcd("w"))
    await wait_for(kube, DEPLOYMENTS, NS, "w")
    # Old pods still cover the count, but only one runs the new template.
    await set_deployment_status(kube, "w", replicas=3, updatedReplicas=1, readyReplicas=3,
                                availableReplicas=3)
    await available(kube, "w", "False", "rollout in progress: 1/2 replicas updated")
    await set_deployment_status(kube, "w", replicas=3, updatedReplicas=2, readyReplicas=3,
                                availableReplicas=3)
    # Only the message and the updated count moved: progress, not written (issue 20).
    await asyncio.sleep(0.3)
    assert "1/2 replicas updated" in condition(await kube.get(COMPONENT_DEPLOYMENTS, NS, "w"),
                                               "Available")["message"]
    await set_deployment_status(kube, "w", replicas=2, updatedReplicas=2, readyReplicas=1,
                                availableReplicas=1)
    await available(kube, "w", "False", "1/2 replicas available")
    await set_deployment_status(kube, "w", replicas=2, updatedReplicas=2, readyReplicas=2,
                                availableReplicas=2)
    obj = await available(kube, "w", "True")
    assert condition(obj, "Available")["reason"] == "DeploymentReady"
    assert condition(obj, "DynamoComponentReady")["status"] == "True"
    assert obj["status"]["service"] == {
        "componentKind": "Deployment", "componentName": "w", "componentNames": ["w"],
        "replicas": 2,
        "updatedReplicas": 2, "readyReplicas": 2, "availableReplicas": 2}
    # A spec change the Deployment controller has not observed yet is not available.
    await kube.patch(COMPONENT_DEPLOYMENTS, NS, "w", {"spec": {"replicas": 3}})
    await available(kube, "w", "False", "spec update to be observed")
    dep = await kube.get(DEPLOYMENTS, NS, "w")
    assert dep["spec"]["replicas"] == 3


async def test_stuck_pod_is_named_in_the_message(kube: KubeClient, operator: Operator) -> None:
    await kube.create(COMPONENT_DEPLOYMENTS, dcd("w", replicas=1))
    await wait_for(kube, DEPLOYMENTS, NS, "w")
    await kube.create(PODS, {"apiVersion": "v1", "kind": "Pod",
                             "metadata": {"name": "w-abc", "namespace": NS,
                                          "labels": {"nvidia.com/selector": "w"}},
                             "spec": {"containers": [{"name": "main", "image": IMAGE}]}})
    waiting = {"reason": "ImagePullBackOff", "message": f'Back-off pulling image "{IMAGE}"'}
    await kube.patch(PODS, NS, "w-abc", {"status": {"phase": "Pending", "containerStatuses": [
        {"name": "main", "ready": False, "restartCount": 0, "image": IMAGE, "imageID": "",
         "state": {"waiting": waiting}}]}}, subresource="status")
    await available(kube, "w", "False", "pod w-abc container main: ImagePullBackOff")


async def test_only_pod_events_that_change_the_story_wake_the_component(
        kube: KubeClient, operator: Operator) -> None:
    """The DCD reads of its pods only what blocks them: a pod's status moving on its way to
    running (bound, an IP, conditions) wakes nothing, a problem appearing or clearing does."""
    await kube.create(COMPONENT_DEPLOYMENTS, dcd("w", replicas=1))
    await wait_for(kube, DEPLOYMENTS, NS, "w")
    await set_deployment_status(kube, "w", replicas=1, updatedReplicas=1, readyReplicas=0,
                                availableReplicas=0)
    await available(kube, "w", "False", "0/1 replicas available")
    await kube.create(PODS, {"apiVersion": "v1", "kind": "Pod",
                             "metadata": {"name": "w-abc", "namespace": NS,
                                          "labels": {"nvidia.com/selector": "w"}},
                             "spec": {"containers": [{"name": "main", "image": IMAGE}]}})

    def container(state: Json) -> Json:
        return {"status": {"phase": "Pending", "containerStatuses": [
            {"name": "main", "ready": False, "restartCount": 0, "image": IMAGE, "imageID": "",
             "state": state}]}}

    reconciles = operator.manager.metrics.reconcile_total.labels(
        controller="DynamoComponentDeployment", result="success")
    await asyncio.sleep(0.5)  # the status pacer's requeue, if any, has run
    before = reconciles._value.get()
    await kube.patch(PODS, NS, "w-abc", container({"waiting": {"reason": "ContainerCreating"}}),
                     subresource="status")
    await kube.patch(PODS, NS, "w-abc", {"status": {"hostIP": "10.0.0.1", "podIP": "10.1.0.1",
                                                    "conditions": [{"type": "PodScheduled",
                                                                    "status": "True"}]}},
                     subresource="status")
    await asyncio.sleep(0.5)
    assert reconciles._value.get() == before
    waiting = {"reason": "ImagePullBackOff", "message": f'Back-off pulling image "{IMAGE}"'}
    await kube.patch(PODS, NS, "w-abc", container({"waiting": waiting}), subresource="status")
    await available(kube, "w", "False", "pod w-abc container main: ImagePullBackOff")
    await kube.patch(PODS, NS, "w-abc", container({"running": {}}), subresource="status")

    async def story_gone() -> bool:
        message = condition(await kube.get(COMPONENT_DEPLOYMENTS, NS, "w"),
                            "Available").get("message", "")
        return "0/1 replicas available" in message and "w-abc" not in message
    await eventually(story_gone)


async def test_invalid_spec_is_reported_once(kube: KubeClient, operator: Operator,
                                             cluster: LocalCluster) -> None:
    bad = dcd("bad", "worker")
    bad["spec"]["subComponentType"] = "middle"
    await kube.create(COMPONENT_DEPLOYMENTS, bad)
    obj = await wait_for(kube, COMPONENT_DEPLOYMENTS, NS, "bad",
                         lambda o: condition(o, "Valid").get("status") == "False")
    valid = condition(obj, "Valid")
    assert valid["reason"] == "ValidationFailed"
    # Named as the DCD is stored (v1beta1): subComponentType is part of `type` there.
    assert valid["message"].startswith("Validation failed: spec.type: unsupported value"), \
        valid["message"]
    assert await get_or_none(kube, DEPLOYMENTS, NS, "bad") is None
    # No retry loop: nothing more is read or written until the spec changes.
    await asyncio.sleep(0.3)
    cluster.stats.reset()
    await asyncio.sleep(1.0)
    requests = cluster.stats.count(user_agent=OPERATOR_AGENT, verbs=frozenset(
        {"get", "list", "create", "update", "patch", "delete"}))
    assert requests == 0, cluster.stats.snapshot()
    reconciles = operator.manager.metrics.reconcile_total.labels(
        controller="DynamoComponentDeployment", result="error")._value.get()
    assert reconciles == 0
    # Fixing the spec is picked up.
    await kube.patch(COMPONENT_DEPLOYMENTS, NS, "bad", {"spec": {"subComponentType": "prefill"}})
    await wait_for(kube, DEPLOYMENTS, NS, "bad")
    await wait_for(kube, COMPONENT_DEPLOYMENTS, NS, "bad",
                   lambda o: condition(o, "Valid").get("status") == "True")


async def test_hand_edits_of_the_spec_are_reverted(kube: KubeClient,
                                                   operator: Operator) -> None:
    await kube.create(COMPONENT_DEPLOYMENTS, dcd("w"))
    await wait_for(kube, DEPLOYMENTS, NS, "w")
    await wait_for(kube, SERVICES, NS, "w")
    await kube.patch(DEPLOYMENTS, NS, "w", {"metadata": {"labels": {"team": "x"}},
                                            "spec": {"replicas": 7}})
    dep = await wait_for(kube, DEPLOYMENTS, NS, "w", lambda d: d["spec"]["replicas"] == 2)
    assert dep["metadata"]["labels"]["team"] == "x"  # labels we did not set stay
    assert dep["metadata"]["annotations"][GENERATION_ANNOTATION] == str(
        dep["metadata"]["generation"])
    await kube.patch(SERVICES, NS, "w", {"spec": {"ports": [
        {"name": "system", "port": 1234, "targetPort": "system", "protocol": "TCP"}]}})
    await wait_for(kube, SERVICES, NS, "w", lambda s: s["spec"]["ports"][0]["port"] == 9090)


async def test_disabled_ingress_is_deleted(kube: KubeClient, operator: Operator) -> None:
    ingress = {"enabled": True, "host": "chat", "ingressControllerClassName": "nginx"}
    await kube.create(COMPONENT_DEPLOYMENTS, dcd("f", "frontend", 1, ingress=ingress))
    found = await wait_for(kube, INGRESSES, NS, "f")
    assert found["spec"]["rules"][0]["host"] == "chat.local"
    await kube.patch(COMPONENT_DEPLOYMENTS, NS, "f", {"spec": {"ingress": {"enabled": False}}})

    async def gone() -> bool:
        return await get_or_none(kube, INGRESSES, NS, "f") is None

    await eventually(gone)
    assert await get_or_none(kube, SERVICES, NS, "f") is not None


async def test_model_service_follows_model_ref(kube: KubeClient, operator: Operator) -> None:
    model = "Qwen/Qwen3-0.6B"
    name = naming.model_service_name(model)
    await kube.create(COMPONENT_DEPLOYMENTS, dcd("w", modelRef={"name": model}))
    svc = await wait_for(kube, SERVICES, NS, name)
    assert svc["spec"]["clusterIP"] == "None"
    await kube.patch(COMPONENT_DEPLOYMENTS, NS, "w", {"spec": {"modelRef": None}})

    async def gone() -> bool:
        return await get_or_none(kube, SERVICES, NS, name) is None

    await eventually(gone)


async def create_ngc_secret(kube: KubeClient, operator: Operator) -> None:
    """A docker-config Secret for nvcr.io, once the operator's cache holds it."""
    config = {"auths": {"https://nvcr.io": {"auth": base64.b64encode(b"u:p").decode()}}}
    data = base64.b64encode(json.dumps(config).encode()).decode()
    await kube.create(SECRETS, {"apiVersion": "v1", "kind": "Secret", "type":
                                "kubernetes.io/dockerconfigjson",
                                "metadata": {"name": "ngc", "namespace": NS},
                                "data": {".dockerconfigjson": data}})
    cached = operator.ctx.cache.informer(SECRETS).store

    async def seen() -> bool:
        return cached.get(NS, "ngc") is not None

    await eventually(seen)


async def test_pull_secrets_by_registry_without_caching_credentials(
        kube: KubeClient, operator: Operator) -> None:
    await create_ngc_secret(kube, operator)
    cached = operator.ctx.cache.informer(SECRETS).store
    assert cached.get(NS, "ngc") == {
        "apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/dockerconfigjson",
        HOSTS_KEY: ["nvcr.io"],
        "metadata": {k: v for k, v in (await kube.get(SECRETS, NS, "ngc"))["metadata"].items()
                     if k in ("name", "namespace", "uid", "resourceVersion")}}
    await kube.create(COMPONENT_DEPLOYMENTS, dcd("w"))
    dep = await wait_for(kube, DEPLOYMENTS, NS, "w")
    assert dep["spec"]["template"]["spec"]["imagePullSecrets"] == [{"name": "ngc"}]


async def test_a_pull_secret_added_later_reaches_the_pods_at_the_next_reconcile(
        kube: KubeClient, operator: Operator) -> None:
    """Nothing of the DCD changes, only its namespace: the spec hashes remembered from the
    last sync (machinery.spec_hashes) must not hide the new Secret."""
    await kube.create(COMPONENT_DEPLOYMENTS, dcd("w"))
    dep = await wait_for(kube, DEPLOYMENTS, NS, "w")
    assert "imagePullSecrets" not in dep["spec"]["template"]["spec"]
    await create_ngc_secret(kube, operator)
    # A status change of its Deployment wakes the DCD.
    await set_deployment_status(kube, "w", replicas=2, updatedReplicas=2)
    dep = await wait_for(kube, DEPLOYMENTS, NS, "w", lambda d: "imagePullSecrets" in
                         d["spec"]["template"]["spec"])
    assert dep["spec"]["template"]["spec"]["imagePullSecrets"] == [{"name": "ngc"}]


async def test_etcd_discovery_keeps_the_finalizer(kube: KubeClient, operator: Operator) -> None:
    """With etcd discovery a DCD's keys need removing on deletion (spec §1.1): the finalizer
    is added there, and only there."""
    body = dcd("e", dynamoNamespace="t-g", serviceName="e",
               annotations={"nvidia.com/dynamo-discovery-backend": "etcd"})
    await kube.create(COMPONENT_DEPLOYMENTS, body)
    obj = await wait_for(kube, COMPONENT_DEPLOYMENTS, NS, "e",
                         lambda o: FINALIZER in (o["metadata"].get("finalizers") or []))
    assert obj["metadata"]["finalizers"] == [FINALIZER]
    await kube.delete(COMPONENT_DEPLOYMENTS, NS, "e")

    async def gone() -> bool:
        return await get_or_none(kube, COMPONENT_DEPLOYMENTS, NS, "e") is None

    await eventually(gone)


async def test_terminating_dcd_gets_no_children(kube: KubeClient, kubeconfig: Path) -> None:
    body = dcd("w")
    body["metadata"]["finalizers"] = ["test.example.com/hold", FINALIZER]
    await kube.create(COMPONENT_DEPLOYMENTS, body)
    await kube.delete(COMPONENT_DEPLOYMENTS, NS, "w")
    async with running_operator(kubeconfig, [component_deployment.register]):
        obj = await wait_for(kube, COMPONENT_DEPLOYMENTS, NS, "w",
                             lambda o: FINALIZER not in o["metadata"].get("finalizers", []))
        assert obj["metadata"]["finalizers"] == ["test.example.com/hold"]
        await asyncio.sleep(0.5)
        assert await get_or_none(kube, DEPLOYMENTS, NS, "w") is None
        assert await get_or_none(kube, SERVICES, NS, "w") is None
    await kube.patch(COMPONENT_DEPLOYMENTS, NS, "w", {"metadata": {"finalizers": None}})


async def test_idle_operator_makes_no_writes(kube: KubeClient, operator: Operator,
                                             cluster: LocalCluster) -> None:
    await kube.create(COMPONENT_DEPLOYMENTS, dcd("w"))
    await kube.create(COMPONENT_DEPLOYMENTS, dcd("f", "frontend", 1))
    for name, replicas in (("w", 2), ("f", 1)):
        await wait_for(kube, DEPLOYMENTS, NS, name)
        await set_deployment_status(kube, name, replicas=replicas, updatedReplicas=replicas,
                                    readyReplicas=replicas, availableReplicas=replicas)
        await available(kube, name, "True")
    await asyncio.sleep(0.5)
    cluster.stats.reset()
    await asyncio.sleep(2.0)
    assert cluster.stats.writes(user_agent=OPERATOR_AGENT) == 0, cluster.stats.snapshot()


async def test_unrenderable_specs_are_reported_not_retried(
        kube: KubeClient, operator: Operator, cluster: LocalCluster) -> None:
    # Multinode without LeaderWorkerSet installed; a label the API server would refuse,
    # caught by validation before anything is written, naming the field.
    await kube.create(COMPONENT_DEPLOYMENTS, dcd("mn", multinode={"nodeCount": 2}))
    await kube.create(COMPONENT_DEPLOYMENTS, dcd("lbl", labels={"bad key!": "x"}))
    obj = await available(kube, "mn", "False", "no multinode orchestrator available")
    assert condition(obj, "Available")["reason"] == "GenerationFailed"

    def invalid(obj: Json) -> bool:
        c = condition(obj, "Valid")
        return c.get("status") == "False" and "spec.podTemplate.metadata.labels" in c.get(
            "message", "")
    obj = await wait_for(kube, COMPONENT_DEPLOYMENTS, NS, "lbl", invalid)
    assert condition(obj, "Valid")["reason"] == "ValidationFailed"
    assert "bad key!" in condition(obj, "Valid")["message"]
    await asyncio.sleep(0.3)
    cluster.stats.reset()
    await asyncio.sleep(1.0)
    assert cluster.stats.writes(user_agent=OPERATOR_AGENT) == 0, cluster.stats.snapshot()


async def test_a_standalone_trtllm_multinode_dcd_names_its_missing_mpi_secret(
        kube: KubeClient, operator: Operator) -> None:
    await kube.create(COMPONENT_DEPLOYMENTS, dcd("mpi", backendFramework="trtllm",
                                                 multinode={"nodeCount": 2}))
    obj = await available(kube, "mpi", "False",
                          'MPI SSH Secret "default/mpi-run-ssh-secret" not found')
    assert condition(obj, "Available")["reason"] == "ReconcileFailed"
