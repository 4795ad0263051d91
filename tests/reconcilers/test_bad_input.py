"""Bad input the API server accepts (free-form labels, pod specs, names that only break the
children) fails the graph once, naming the field as the graph is stored (v1beta1, though the
user wrote v1alpha1), and is not retried until the spec changes; nothing logs a traceback. The
cases are those a mutation run found left `pending` for good."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from operator_harness import OPERATOR_AGENT, eventually, install_crds, running_operator
from operator_harness import setup_client as operator_setup_client
from structlog.contextvars import merge_contextvars
from structlog.testing import capture_logs

from controller.resource import Resource
from hack.localcluster.server import LocalCluster
from hack.our_crds import COMPONENT_DEPLOYMENTS, GRAPH_DEPLOYMENTS
from reconcilers.operator.registry import REGISTRATIONS

NS = "default"
IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.6.0"

Json = dict[str, Any]
EVENTS = Resource("", "v1", "events", "Event")


def service(**fields: Any) -> Json:
    main = fields.pop("main", {"image": IMAGE})
    return {"componentType": "frontend", "replicas": 1,
            "extraPodSpec": {"mainContainer": main}, **fields}


def dgd(name: str, services: Json) -> Json:
    return {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment",
            "metadata": {"name": name, "namespace": NS}, "spec": {"services": services}}


CASES = {
    "long label value": ("g1", {"Frontend": service(labels={"big": "x" * 64})},
                         "spec.components[0].podTemplate.metadata.labels.big"),
    "integer image": ("g2", {"Frontend": service(main={"image": 5})},
                      "spec.components[0].podTemplate.spec.containers[0].image"),
    "dotted graph name": ("fz-10.a.b.c", {"Frontend": service()}, "metadata.name"),
    "int32 overflow": ("g4", {"Frontend": service(replicas=2147483648)},
                       "spec.components[0].replicas"),
    "bad label key": ("g5", {"Frontend": service(labels={"-bad/key": "v"})},
                      "spec.components[0].podTemplate.metadata.labels"),
    "env name not a string": ("g6", {"Frontend": service(main={"image": IMAGE,
                                                              "env": [{"name": 3}]})},
                              "spec.components[0].podTemplate.spec.containers[0].env[0].name"),
}


def ready(obj: Json) -> Json:
    return next(c for c in (obj.get("status") or {}).get("conditions") or []
                if c["type"] == "Ready")


@pytest.mark.parametrize("case", sorted(CASES))
async def test_bad_spec_fails_once_naming_the_field(case: str, cluster: LocalCluster,
                                                    kubeconfig: Path) -> None:
    name, services, field = CASES[case]
    kube = await operator_setup_client(kubeconfig)
    try:
        await install_crds(kube)
        with capture_logs(processors=[merge_contextvars]) as lines:
            async with running_operator(kubeconfig, REGISTRATIONS):
                await kube.create(GRAPH_DEPLOYMENTS, dgd(name, services))

                async def failed() -> bool:
                    obj = await kube.get(GRAPH_DEPLOYMENTS, NS, name)
                    events = (await kube.list(EVENTS, NS))["items"]
                    # The failure's status, and the Warning event that follows it.
                    return ((obj.get("status") or {}).get("state") == "failed" and any(
                        e["involvedObject"].get("name") == name and e["type"] == "Warning"
                        for e in events))

                await eventually(failed)
                writes = cluster.stats.writes(user_agent=OPERATOR_AGENT)
                # Settled: later watch events (its own status write) change nothing.
                await asyncio.sleep(0.5)
                assert cluster.stats.writes(user_agent=OPERATOR_AGENT) == writes
        obj = await kube.get(GRAPH_DEPLOYMENTS, NS, name)
        children = (await kube.list(COMPONENT_DEPLOYMENTS, NS))["items"]
    finally:
        await kube.close()
    condition = ready(obj)
    assert condition["reason"] == "ValidationFailed"
    assert field in condition["message"], condition["message"]
    assert not children  # nothing was built from it
    status_writes = cluster.stats.count(verbs=frozenset({"update", "patch"}),
                                        resource="dynamographdeployments.nvidia.com/status",
                                        user_agent=OPERATOR_AGENT)
    assert status_writes == 1  # one attempt, recorded once
    assert not [line for line in lines
                if line["log_level"] == "error" or "exc_info" in line], lines


async def test_a_refused_child_fails_the_graph_naming_the_field(
        cluster: LocalCluster, kubeconfig: Path) -> None:
    """A service without an image: the API server refuses its Deployment (422); the DCD
    records the field it names, and the graph fails instead of waiting for ever."""
    kube = await operator_setup_client(kubeconfig)
    try:
        await install_crds(kube)
        with capture_logs(processors=[merge_contextvars]) as lines:
            async with running_operator(kubeconfig, REGISTRATIONS):
                await kube.create(GRAPH_DEPLOYMENTS, dgd("noimg", {
                    "Frontend": {"componentType": "frontend", "replicas": 1}}))

                async def failed() -> bool:
                    obj = await kube.get(GRAPH_DEPLOYMENTS, NS, "noimg")
                    return (obj.get("status") or {}).get("state") == "failed"

                await eventually(failed, within=20)
                deployments = cluster.stats.count(verb="create", resource="deployments.apps",
                                                  user_agent=OPERATOR_AGENT)
                obj = await kube.get(GRAPH_DEPLOYMENTS, NS, "noimg")
                await asyncio.sleep(0.5)
                assert cluster.stats.count(verb="create", resource="deployments.apps",
                                           user_agent=OPERATOR_AGENT) == deployments
    finally:
        await kube.close()
    message = ready(obj)["message"]
    assert "image" in message and "refused" in message, message
    assert deployments <= 2  # its own attempt, and at most the one its status write woke
    assert not [line for line in lines
                if line["log_level"] == "error" or "exc_info" in line], lines
