"""The conversion's payload annotations that a child DCD carries on the wire are never recorded
as metadata keys the operator set: recorded, the next reconcile found them undesired and
updated the child again, for ever (a graph whose DCDs carry a spec payload, updated once)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from graph_harness import NS, ROOT, eventually, installed_client, operator, worker_name

from api.conversion import CONVERSIONS
from controller.client import KubeClient
from hack.our_crds import GRAPH_DEPLOYMENTS as ALPHA_GRAPHS
from reconcilers.machinery.applied_metadata import APPLIED_KEYS_ANNOTATION
from reconcilers.machinery.resources import COMPONENT_DEPLOYMENTS

Json = dict[str, Any]
SPEC_PAYLOAD = CONVERSIONS["DynamoComponentDeployment"].spec_annotation


@pytest.fixture
async def client(kubeconfig: Path) -> AsyncIterator[KubeClient]:
    async with installed_client(kubeconfig) as c:
        yield c


async def test_an_updated_child_records_no_payload_and_settles(client: KubeClient,
                                                                kubeconfig: Path) -> None:
    graph: Json = yaml.safe_load((ROOT / "deploy/examples/vllm-lora.yaml").read_text())
    graph["metadata"]["namespace"] = NS
    dcd_name = worker_name(graph, "VllmDecodeWorker")  # vllm-lora-vllmdecodeworker-<hash>
    await client.create(ALPHA_GRAPHS, graph)
    async with operator(kubeconfig):
        await eventually(lambda: client.get(COMPONENT_DEPLOYMENTS, NS, dcd_name))
        await client.patch(ALPHA_GRAPHS, NS, "vllm-lora", {"spec": {"services": {
            "VllmDecodeWorker": {"replicas": 3}}}})

        async def updated() -> Json | None:
            dcd: Json = await client.get(COMPONENT_DEPLOYMENTS, NS, dcd_name)
            return dcd if dcd["spec"].get("replicas") == 3 else None

        dcd = await eventually(updated)
        annotations = dcd["metadata"]["annotations"]
        assert SPEC_PAYLOAD in annotations  # the case: the child's wire form has a payload
        recorded = json.loads(annotations[APPLIED_KEYS_ANNOTATION])["annotations"]
        assert SPEC_PAYLOAD not in recorded
