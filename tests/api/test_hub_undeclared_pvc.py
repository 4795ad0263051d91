"""A `v1beta1` graph's podTemplate volumes and compilationCache name existing PVCs: the
`v1alpha1` rule that a mount's PVC be declared in `spec.pvcs` does not hold for it, and still
holds for a graph written in `v1alpha1`."""

from __future__ import annotations

from typing import Any

import pytest

from api.conversion import convert
from api.errors import InvalidObject
from api.hub_errors import validate_stored
from api.load import load_valid
from api.v1alpha1 import DynamoGraphDeployment

Json = dict[str, Any]

GRAPH: Json = {
    "apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment",
    "metadata": {"name": "g", "namespace": "team"},
    "spec": {"backendFramework": "vllm", "components": [{
        "name": "w", "type": "worker", "compilationCache": {"pvcName": "cache"},
        "podTemplate": {"spec": {"containers": [{"name": "main", "image": "img"}]}}}]},
}


def test_the_hub_may_mount_a_claim_it_does_not_declare() -> None:
    assert validate_stored(DynamoGraphDeployment, GRAPH) == []


def test_a_v1alpha1_graph_must_still_declare_it() -> None:
    with pytest.raises(InvalidObject, match=r"is not declared in spec\.pvcs"):
        load_valid(DynamoGraphDeployment, convert(GRAPH, "v1alpha1"))


def test_other_errors_are_still_reported() -> None:
    bad = convert(convert(GRAPH, "v1alpha1"), "v1beta1")
    bad["spec"]["components"][0]["compilationCache"]["mountPath"] = "relative"
    with pytest.raises(InvalidObject, match="absolute"):
        validate_stored(DynamoGraphDeployment, bad)
