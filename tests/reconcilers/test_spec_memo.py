"""reconcilers.machinery.spec_views: the hub graph and the render inputs of a stored graph or
DCD are made once per change of it, and a DCD's restart token is read from its inputs in
either version."""

from __future__ import annotations

import copy
from typing import Any

from api.conversion import convert
from backends.constants import ANNOTATION_RESTART_AT
from reconcilers.graph.children import claimed_names
from reconcilers.graph.readiness import restart_token
from reconcilers.machinery.spec_views import graph_of, inputs_of

Json = dict[str, Any]
TOKEN = ANNOTATION_RESTART_AT


def graph() -> Json:
    return {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment",
            "metadata": {"name": "g", "namespace": "t", "uid": "memo-graph", "generation": 1,
                         "resourceVersion": "7"},
            "spec": {"pvcs": [{"name": "models"}], "services": {
                "decode": {"componentType": "worker", "replicas": 2,
                           "scalingAdapter": {"enabled": True}}}}}


def test_the_hub_graph_is_made_once_per_change() -> None:
    live = convert(graph(), "v1beta1")
    made = graph_of(live)
    assert made.inputs.pvcs[0].name == "models"
    status_written = {**copy.deepcopy(live), "status": {"state": "successful"}}
    status_written["metadata"]["resourceVersion"] = "8"
    assert graph_of(status_written) is made
    assert inputs_of(status_written) is inputs_of(live)
    edited = copy.deepcopy(live)
    edited["metadata"]["generation"] = 2
    edited["spec"]["components"][0]["replicas"] = 3
    assert graph_of(edited) is not made
    assert graph_of(edited).model.spec.components[0].replicas == 3  # type: ignore[index]
    relabelled = copy.deepcopy(live)
    relabelled["metadata"]["labels"] = {"a": "b"}
    assert graph_of(relabelled) is not made


def test_an_object_without_uid_or_generation_is_read_each_time() -> None:
    bare = convert(graph(), "v1beta1")
    del bare["metadata"]["uid"]
    assert graph_of(bare) is not graph_of(bare)
    assert graph_of(bare) == graph_of(bare)


def dcd(annotations: dict[str, str]) -> Json:
    return {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoComponentDeployment",
            "metadata": {"name": "g-decode", "namespace": "t", "uid": "memo-dcd",
                         "generation": 1},
            "spec": {"serviceName": "decode", "componentType": "worker",
                     "labels": {"nvidia.com/dynamo-component": "decode"},
                     "annotations": annotations}}


def test_the_restart_token_of_a_dcd_in_either_version() -> None:
    spoke = dcd({TOKEN: "r1", "other": "x"})
    stored = convert(spoke, "v1beta1")
    assert "annotations" not in stored["spec"]
    assert restart_token(spoke) == restart_token(stored) == "r1"
    assert inputs_of(stored).component("decode").annotations == {TOKEN: "r1", "other": "x"}
    assert restart_token(dcd({})) is None
    assert restart_token(convert(dcd({"other": "x"}), "v1beta1")) is None


def test_the_claim_index_of_a_graph_whose_saved_claims_do_not_fit_is_empty() -> None:
    live = convert(graph(), "v1beta1")
    assert claimed_names(live) == ["t/models"]
    broken = copy.deepcopy(live)
    broken["metadata"]["uid"] = "memo-broken"
    broken["metadata"]["annotations"]["nvidia.com/dgd-spec"] = '{"pvcs":[{"create":"x"}]}'
    assert claimed_names(broken) == []
