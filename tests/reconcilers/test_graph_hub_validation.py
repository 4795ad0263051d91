"""A graph's ValidationFailed names the fields as the graph is stored (v1beta1), in v1beta1's
words, whichever version it was written in; and the shape rules of a stored graph do not hold
the create-only rule against it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from graph_harness import (
    NS,
    eventually,
    installed_client,
    operator,
    ready_condition,
)

from api.conversion import convert
from api.errors import InvalidObject
from api.hub_errors import load_valid_view
from api.v1alpha1 import DynamoGraphDeployment
from controller.client import KubeClient
from reconcilers.machinery.resources import GRAPH_DEPLOYMENTS

Json = dict[str, Any]


def beta_graph(*components: Json, **spec: Any) -> Json:
    return {"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment",
            "metadata": {"name": "g", "namespace": NS},
            "spec": {"backendFramework": "vllm", "components": list(components), **spec}}


def errors_of(hub: Json) -> str:
    with pytest.raises(InvalidObject) as raised:
        load_valid_view(DynamoGraphDeployment, hub, convert(hub, "v1alpha1"))
    return str(raised.value)


def test_rules_on_the_view_name_v1beta1_fields_in_v1beta1_words() -> None:
    hub = beta_graph({"name": "Frontend", "type": "frontend"},
                     {"name": "Bad_Name", "type": "worker"},
                     {"name": "picker", "type": "epp"})
    message = errors_of(hub)
    assert message.startswith("spec.components[1].name: component name 'Bad_Name' lowercased")
    assert "spec.components[2].eppConfig: required for type epp" in message
    assert "service" not in message and "componentType" not in message


def test_shape_rules_of_a_stored_graph() -> None:
    twice = beta_graph({"name": "w", "type": "worker"}, {"name": "W", "type": "worker"})
    assert errors_of(twice) == 'spec.components[1].name: Duplicate value: "W"'
    # A stored graph may carry a restart: it is refused on create only.
    restarted = beta_graph({"name": "w", "type": "worker"}, restart={"id": "r1"})
    model = load_valid_view(DynamoGraphDeployment, restarted, convert(restarted, "v1alpha1"))
    assert model.spec.restart is not None and model.spec.restart.id == "r1"


@pytest.fixture
async def client(kubeconfig: Path) -> AsyncIterator[KubeClient]:
    async with installed_client(kubeconfig) as c:
        yield c


async def test_a_stored_graph_fails_naming_its_v1beta1_fields(client: KubeClient,
                                                             kubeconfig: Path) -> None:
    async with operator(kubeconfig):
        await client.create(GRAPH_DEPLOYMENTS, beta_graph(
            {"name": "Frontend", "type": "frontend"},
            {"name": "decode", "type": "worker", "replicas": 1, "podTemplate": {
                "metadata": {"labels": {"big": "x" * 64}},
                "spec": {"containers": [{"name": "main", "image": "runtime:1"}]}}}))

        async def failed() -> Json | None:
            obj = await client.get(GRAPH_DEPLOYMENTS, NS, "g")
            return obj if (obj.get("status") or {}).get("state") == "failed" else None

        condition = ready_condition(await eventually(failed))
        assert condition["reason"] == "ValidationFailed"
        assert condition["message"].startswith(
            "Validation failed: spec.components[1].podTemplate.metadata.labels.big: "), \
            condition["message"]
