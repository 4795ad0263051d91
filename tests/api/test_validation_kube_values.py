"""Kubernetes' rules for the values a component passes on to the objects made for it, named
at the user's field path."""

from __future__ import annotations

from typing import Any

import pytest

from api.convert import load
from api.v1alpha1 import DynamoComponentDeployment, DynamoGraphDeployment
from api.validation import kube_values, validate

IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.6.0"


def graph(name: str = "g", **service: Any) -> DynamoGraphDeployment:
    body = {"componentType": "frontend", "replicas": 1,
            "extraPodSpec": {"mainContainer": {"image": IMAGE}}, **service}
    return load(DynamoGraphDeployment, {
        "apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment",
        "metadata": {"name": name, "namespace": "ns"},
        "spec": {"services": {"Frontend": body}}})


def paths(obj: Any) -> list[str]:
    return [e.path for e in validate(obj)]


def test_a_valid_graph_has_no_errors() -> None:
    assert validate(graph(labels={"app": "x", "example.com/tier": "a.b_c-1", "empty": ""},
                          annotations={"note": "anything at all: 名前"})) == []


@pytest.mark.parametrize("labels, path", [
    ({"big": "x" * 64}, "spec.services.Frontend.labels.big"),
    ({"v": "-starts-with-dash"}, "spec.services.Frontend.labels.v"),
    ({"v": "has space"}, "spec.services.Frontend.labels.v"),
    ({"bad key!": "x"}, "spec.services.Frontend.labels"),
    ({"UPPER.Prefix/name": "x"}, "spec.services.Frontend.labels"),
    ({"a/" + "n" * 64: "x"}, "spec.services.Frontend.labels"),
    ({"/name": "x"}, "spec.services.Frontend.labels"),
])
def test_label_rules(labels: dict[str, str], path: str) -> None:
    assert paths(graph(labels=labels)) == [path]


def test_values_that_become_labels() -> None:
    assert paths(graph(componentType="x" * 64)) == ["spec.services.Frontend.componentType"]
    assert paths(graph(serviceName="not a label")) == ["spec.services.Frontend.serviceName"]


def test_label_messages_quote_long_values_shortly() -> None:
    (error,) = validate(graph(labels={"big": "x" * 5000}))
    assert "5000 characters" in error.message and len(error.message) < 200


def test_annotations_total_size() -> None:
    big = {f"k{i}": "x" * 100_000 for i in range(3)}
    assert paths(graph(annotations=big)) == ["spec.services.Frontend.annotations"]
    assert paths(graph(extraPodMetadata={"annotations": {"bad key!": "v"}})) == [
        "spec.services.Frontend.extraPodMetadata.annotations"]
    assert paths(graph(extraPodMetadata={"labels": {"l": "x" * 70}})) == [
        "spec.services.Frontend.extraPodMetadata.labels.l"]


@pytest.mark.parametrize("replicas", [2**31, 2**40])
def test_replicas_are_int32(replicas: int) -> None:
    (error,) = validate(graph(replicas=replicas))
    assert error.path == "spec.services.Frontend.replicas"
    assert "32-bit" in error.message
    assert validate(graph(replicas=2**31 - 1)) == []


@pytest.mark.parametrize("main, path", [
    ({"image": 5}, "mainContainer.image"),
    ({"image": ""}, "mainContainer.image"),
    ({"image": IMAGE, "command": "python"}, "mainContainer.command"),
    ({"image": IMAGE, "args": ["--a", 1]}, "mainContainer.args[1]"),
    ({"image": IMAGE, "env": [{"name": 3}]}, "mainContainer.env[0].name"),
    ({"image": IMAGE, "env": ["X=1"]}, "mainContainer.env[0]"),
    ({"image": IMAGE, "env": 7}, "mainContainer.env"),
    ({"image": IMAGE, "ports": [{"containerPort": 70000}]}, "mainContainer.ports[0].containerPort"),
    ({"image": IMAGE, "resources": "lots"}, "mainContainer.resources"),
])
def test_main_container_shape(main: dict[str, Any], path: str) -> None:
    assert paths(graph(extraPodSpec={"mainContainer": main})) == [
        "spec.services.Frontend.extraPodSpec." + path]


@pytest.mark.parametrize("pod, path", [
    ({"containers": [{"name": "side", "image": 1}]}, "containers[0].image"),
    ({"containers": "nope"}, "containers"),
    ({"volumes": 3}, "volumes"),
    ({"volumes": [{"name": 1}]}, "volumes[0].name"),
    ({"imagePullSecrets": ["s"]}, "imagePullSecrets[0]"),
    ({"nodeSelector": {"gpu": "x" * 64}}, "nodeSelector.gpu"),
    ({"serviceAccountName": 3}, "serviceAccountName"),
    ({"terminationGracePeriodSeconds": "30"}, "terminationGracePeriodSeconds"),
])
def test_free_form_pod_spec_shape(pod: dict[str, Any], path: str) -> None:
    extra = {"mainContainer": {"image": IMAGE}, **pod}
    assert paths(graph(extraPodSpec=extra)) == ["spec.services.Frontend.extraPodSpec." + path]


def test_deep_nesting_is_refused() -> None:
    value: Any = "leaf"
    for _ in range(kube_values.MAX_DEPTH + 5):
        value = {"n": value}
    extra = {"mainContainer": {"image": IMAGE}, "affinity": value}
    assert paths(graph(extraPodSpec=extra)) == ["spec.services.Frontend.extraPodSpec"]


@pytest.mark.parametrize("name", ["fz-10.a.b.c", "1graph"])
def test_graph_names_begin_service_names(name: str) -> None:
    errors = validate(graph(name))
    assert [e.path for e in errors] == ["metadata.name"]
    assert "RFC 1035" in errors[0].message


def test_a_standalone_component_is_checked_too() -> None:
    dcd = load(DynamoComponentDeployment, {
        "apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoComponentDeployment",
        "metadata": {"name": "c", "namespace": "ns"},
        "spec": {"componentType": "worker", "labels": {"big": "y" * 64},
                 "extraPodSpec": {"mainContainer": {"image": 7}}}})
    assert sorted(paths(dcd)) == ["spec.extraPodSpec.mainContainer.image", "spec.labels.big"]


def test_messages_never_carry_huge_values() -> None:
    from api.validation import warnings
    huge = "x" * 300_000
    (note,) = warnings(graph(componentType=huge))
    assert "300000 characters" in note.message and len(note.message) < 400
    (error,) = validate(graph(componentType=huge))
    assert "300000 characters" in error.message and len(error.message) < 400
    errors = validate(graph(envFromSecret=huge))
    assert errors and all(len(e.message) < 2000 for e in errors)
