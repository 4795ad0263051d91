"""`api.conversion.render_inputs`: what a hub graph or DCD tells the builders that `v1beta1`
cannot is exactly what its `v1alpha1` view holds, for objects written in either version, after
a change made in `v1beta1`, and for every manifest and example of the repository."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import attrs
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from api.conversion import convert
from api.conversion.render_inputs import ComponentInputs, PodInputs, RenderInputs, render_inputs
from api.convert import dump, load
from api.v1alpha1 import PVC, DynamoComponentDeploymentSharedSpec, IngressSpec, SharedMemorySpec
from tests.api.model_strategies import objects

Json = dict[str, Any]
ROOT = Path(__file__).resolve().parents[2]
KINDS = ("DynamoGraphDeployment", "DynamoComponentDeployment")
SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


POD_FIELDS = [f.name for f in attrs.fields(PodInputs)]
POD_KEYS = ("resources", "envs", "envFromSecret", "livenessProbe", "readinessProbe",
            "volumeMounts", "extraPodMetadata", "extraPodSpec", "frontendSidecar")


def component_of_view(service: Json) -> ComponentInputs:
    """The inputs as the `v1alpha1` view of one component holds them."""
    def opt(key: str) -> Any:
        return service.get(key)

    adapter = opt("scalingAdapter")
    model = load(DynamoComponentDeploymentSharedSpec,
                 {k: v for k, v in service.items() if k in POD_KEYS or k == "scalingAdapter"})
    pod = PodInputs(**{k: getattr(model, k) for k in POD_FIELDS})
    return ComponentInputs(
        component_type=opt("componentType"),
        sub_component_type=opt("subComponentType"),
        labels=opt("labels"),
        annotations=opt("annotations"),
        ingress=load(IngressSpec, service["ingress"]) if "ingress" in service else None,
        dynamo_namespace=opt("dynamoNamespace"),
        autoscaling=opt("autoscaling"),
        service_name=opt("serviceName"),
        shared_memory=(load(SharedMemorySpec, service["sharedMemory"])
                       if "sharedMemory" in service else None),
        scaling_adapter_enabled=adapter.get("enabled") if isinstance(adapter, dict) else None,
        scaling_adapter=model.scaling_adapter,
        pod=pod,
    )


def from_view(hub: Json) -> RenderInputs:
    """The inputs read the old way: the whole object converted to `v1alpha1`."""
    view = convert(hub, "v1alpha1")
    spec = view.get("spec") or {}
    if view["kind"] == "DynamoComponentDeployment":
        name = hub["spec"].get("name", hub["metadata"].get("name"))
        return RenderInputs(components={name: component_of_view(spec)})
    return RenderInputs(
        pvcs=tuple(load(PVC, p) for p in spec.get("pvcs") or []),
        components={n: component_of_view(s) for n, s in (spec.get("services") or {}).items()},
    )


def valid_hub(obj: Json) -> bool:
    components = (obj.get("spec") or {}).get("components")
    if obj["kind"] != "DynamoGraphDeployment" or not isinstance(components, list):
        return True
    names = [c.get("name") for c in components]
    return len(names) == len(set(names))


def written(version: str, *kinds: str) -> st.SearchStrategy[Json]:
    """Objects of these kinds written in `version`, as JSON."""
    return st.one_of(*(objects(version, k) for k in kinds)).map(dump)


@SETTINGS
@given(data=written("v1alpha1", *KINDS))
def test_an_object_written_in_v1alpha1_gives_its_own_inputs(data: Json) -> None:
    hub = convert(data, "v1beta1")
    assert render_inputs(hub) == from_view(hub)


@SETTINGS
@given(data=written("v1beta1", *KINDS))
def test_an_object_written_in_v1beta1_gives_what_its_fields_say(data: Json) -> None:
    if not valid_hub(data):
        return
    hub = convert(convert(data, "v1alpha1"), "v1beta1")  # the payloads as stored
    assert render_inputs(hub) == from_view(hub)


@SETTINGS
@given(data=written("v1alpha1", "DynamoGraphDeployment"))
def test_a_change_made_in_v1beta1_wins_over_the_saved_group(data: Json) -> None:
    hub = convert(data, "v1beta1")
    for component in hub["spec"].get("components") or []:
        template = component.setdefault("podTemplate", {"spec": {"containers": [{"name": "main"}]}})
        template.setdefault("metadata", {})["labels"] = {"edited": "in-v1beta1"}
        component["type"] = "planner"
    inputs = render_inputs(hub)
    assert inputs == from_view(hub)
    for component in hub["spec"].get("components") or []:
        assert inputs.component(component["name"]).labels is None
        assert inputs.component(component["name"]).component_type == "planner"


def test_only_a_hub_graph_or_dcd_is_read() -> None:
    with pytest.raises(ValueError, match="graph or DCD"):
        render_inputs({"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment"})
    with pytest.raises(ValueError, match="graph or DCD"):
        render_inputs({"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoModel"})


def test_a_v1alpha1_graph_keeps_its_pvcs_ingress_and_service_metadata() -> None:
    graph = {
        "apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g", "namespace": "n"},
        "spec": {
            "pvcs": [{"name": "models", "create": True, "size": "10Gi"}],
            "services": {
                "Frontend": {"componentType": "frontend", "labels": {"team": "a"},
                             "annotations": {"note": "x"},
                             "extraPodMetadata": {"labels": {"pod": "only"}},
                             "ingress": {"enabled": True, "host": "h"},
                             "dynamoNamespace": "legacy"},
                "Worker": {"componentType": "worker", "subComponentType": "prefill",
                           "sharedMemory": {"size": "0"}},
            },
        },
    }
    inputs = render_inputs(convert(graph, "v1beta1"))
    assert inputs.pvcs == (PVC(name="models", create=True, size="10Gi"),)
    frontend = inputs.component("Frontend")
    assert (frontend.labels, frontend.annotations) == ({"team": "a"}, {"note": "x"})
    assert frontend.ingress == IngressSpec(enabled=True, host="h")
    assert frontend.dynamo_namespace == "legacy"
    worker = inputs.component("Worker")
    assert (worker.component_type, worker.sub_component_type) == ("worker", "prefill")
    assert worker.shared_memory == SharedMemorySpec(size="0")
    assert inputs.component("Absent") == ComponentInputs()


def repository_objects() -> list[Json]:
    """Every graph and DCD of the repository's manifests, examples and golden files."""
    found = []
    for folder in ("tests/api/manifests", "deploy/examples", "tests/backends/golden"):
        for path in sorted((ROOT / folder).rglob("*.yaml")):
            for doc in yaml.safe_load_all(path.read_text()):
                if isinstance(doc, dict) and doc.get("kind") in KINDS and \
                        str(doc.get("apiVersion", "")).startswith("nvidia.com/"):
                    found.append(doc)
    return found


OBJECTS = repository_objects()


def test_the_repository_holds_graphs_and_dcds() -> None:
    assert len(OBJECTS) >= 30


@pytest.mark.parametrize("obj", OBJECTS, ids=[f"{o['kind']}-{o['metadata'].get('name')}-{i}"
                                              for i, o in enumerate(OBJECTS)])
def test_every_manifest_gives_its_view_inputs(obj: Json) -> None:
    hub = convert(copy.deepcopy(obj), "v1beta1")
    assert render_inputs(hub) == from_view(hub)


def test_a_dcd_service_name_is_the_one_it_gave() -> None:
    def dcd(spec: Json) -> Json:
        return {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoComponentDeployment",
                "metadata": {"name": "d"}, "spec": spec}

    absent = convert(dcd({"componentType": "worker"}), "v1beta1")
    assert absent["spec"]["name"] == "d"
    assert render_inputs(absent).component("d").service_name is None
    named_alike = convert(dcd({"serviceName": "d"}), "v1beta1")
    assert render_inputs(named_alike).component("d").service_name == "d"
    renamed = copy.deepcopy(absent)
    renamed["spec"]["name"] = "other"  # a v1beta1 edit: the name is now given
    assert render_inputs(renamed).component("other").service_name == "other"
