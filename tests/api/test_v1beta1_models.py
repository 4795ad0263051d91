"""The v1beta1 models: the upstream-shaped examples in manifests/v1beta1 load, dump back
unchanged and survive a trip through v1alpha1; any object the models hold dumps and loads
without loss; the list and enum rules of the reference are declared."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import api.v1alpha1 as alpha
import api.v1beta1 as beta
from api.conversion import convert, private_annotations
from api.convert import dump, load
from api.markers import field_info
from tests.api.model_strategies import objects

EXAMPLES = Path(__file__).parent / "manifests" / "v1beta1"


def _examples() -> list[tuple[str, dict[str, Any]]]:
    return [
        (f"{path.name}#{i}", doc)
        for path in sorted(EXAMPLES.glob("*.yaml"))
        for i, doc in enumerate(yaml.safe_load_all(path.read_text()))
        if doc
    ]


EXAMPLE_DOCS = _examples()


def test_every_kind_has_an_example() -> None:
    assert {doc["kind"] for _, doc in EXAMPLE_DOCS} == set(beta.KINDS)


@pytest.mark.parametrize(("name", "doc"), EXAMPLE_DOCS, ids=[n for n, _ in EXAMPLE_DOCS])
def test_example_loads_and_dumps_unchanged(name: str, doc: dict[str, Any]) -> None:
    assert doc["apiVersion"] == "nvidia.com/v1beta1"
    obj = load(beta.KINDS[doc["kind"]], doc)
    assert dump(obj) == doc


@pytest.mark.parametrize(("name", "doc"), EXAMPLE_DOCS, ids=[n for n, _ in EXAMPLE_DOCS])
def test_example_survives_v1alpha1(name: str, doc: dict[str, Any]) -> None:
    spoke = convert(doc, "v1alpha1")
    load(alpha.KINDS[doc["kind"]], spoke)
    assert convert(spoke, "v1beta1") == doc


def test_minimal_graph_reads_as_the_reference_describes() -> None:
    doc = dict(EXAMPLE_DOCS)["dgd-minimal.yaml#0"]
    graph = load(beta.DynamoGraphDeployment, doc)
    assert graph.spec.components is not None
    assert [c.name for c in graph.spec.components] == ["frontend", "worker"]
    worker = graph.spec.components[1]
    assert worker.type == "worker"
    assert beta.main_container(worker) == {
        "name": "main",
        "image": "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.4.0",
    }
    assert beta.main_container(beta.DynamoComponentDeploymentSharedSpec(name="x")) is None


def test_scaling_adapter_presence_is_kept_as_an_empty_object() -> None:
    doc = dict(EXAMPLE_DOCS)["dgd-disagg-topology.yaml#0"]
    graph = load(beta.DynamoGraphDeployment, doc)
    assert graph.spec.components is not None
    adapters = {c.name: c.scaling_adapter for c in graph.spec.components}
    assert adapters == {
        "frontend": None,
        "prefill": beta.ScalingAdapter(),
        "decode": beta.ScalingAdapter(),
    }
    assert dump(graph)["spec"]["components"][1]["scalingAdapter"] == {}


def test_graph_rules_of_the_reference_are_declared() -> None:
    components = attrs.fields(beta.DynamoGraphDeploymentSpec).components
    assert field_info(components).max_items == 25
    messages = {rule.message for rule in beta.DynamoGraphDeploymentSpec.cel_rules}
    assert messages == {
        "at most one component may have type epp",
        "component names must be unique case-insensitively",
    }
    assert beta.COMPONENT_TYPES == ("frontend", "worker", "prefill", "decode", "planner", "epp")
    assert "Superseded" in beta.RESTART_PHASES
    assert "Superseded" in alpha.RESTART_PHASES


def test_v1alpha1_fields_added_after_v0_8_are_kept() -> None:
    doc = {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g"},
        "spec": {
            "annotations": {"a": "1"},
            "labels": {"l": "2"},
            "services": {
                "Worker": {
                    "topologyConstraint": {"packDomain": "rack"},
                    "frontendSidecar": {"image": "fe:1", "args": ["-m", "dynamo.frontend"]},
                    "checkpoint": {"enabled": True, "checkpointRef": "snap"},
                    "gpuMemoryService": {"enabled": True, "mode": "intraPod"},
                    "failover": {"enabled": True, "mode": "intraPod", "numShadows": 1},
                }
            },
        },
        "status": {
            "observedGeneration": 2,
            "rollingUpdate": {"phase": "InProgress", "updatedComponents": ["Worker"]},
            "services": {
                "Worker": {
                    "componentName": "g-worker-b",
                    "componentNames": ["g-worker-a", "g-worker-b"],
                }
            },
            "restart": {"observedID": "1", "phase": "Superseded"},
        },
    }
    graph = load(alpha.DynamoGraphDeployment, doc)
    assert dump(graph) == doc
    assert graph.spec.services is not None
    worker = graph.spec.services["Worker"]
    assert worker.frontend_sidecar == alpha.FrontendSidecarSpec(
        image="fe:1", args=["-m", "dynamo.frontend"]
    )
    assert graph.status is not None and graph.status.rolling_update is not None


@pytest.mark.parametrize("kind", list(beta.KINDS))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_dump_load_round_trip(kind: str, data: st.DataObject) -> None:
    obj = data.draw(objects("v1beta1", kind))
    out = dump(obj)
    assert json.loads(json.dumps(out)) == out
    assert load(beta.KINDS[kind], out) == obj


def test_private_annotation_names() -> None:
    assert private_annotations("DynamoGraphDeployment") == (
        "nvidia.com/dgd-spec",
        "nvidia.com/dgd-status",
    )
    assert private_annotations("DynamoGraphDeploymentRequest") == (
        "nvidia.com/dgdr-spec",
        "nvidia.com/dgdr-status",
    )
