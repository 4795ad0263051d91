"""The worker revision history as a pure function: which ControllerRevisions a graph keeps,
their numbers (a configuration used again gets the next one), the history limit, the data undo
writes back."""

from __future__ import annotations

from typing import Any

import pytest

from backends.errors import GenerationError
from backends.hub_graph import HubGraph, hub_graph
from backends.worker_generation import graph_workers, worker_hash
from backends.worker_revisions import (
    CHANGE_CAUSE,
    HISTORY_LIMIT,
    REVISION_ANNOTATION,
    revision_data,
    worker_revisions,
)

Json = dict[str, Any]


def _graph(image: str = "img:1", annotations: dict[str, str] | None = None) -> HubGraph:
    worker = {"componentType": "worker", "subComponentType": "decode", "replicas": 3,
              "extraPodSpec": {"mainContainer": {"image": image}}}
    return hub_graph({
        "apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g", "namespace": "ns", "annotations": annotations or {}},
        "spec": {"backendFramework": "vllm", "envs": [{"name": "A", "value": "1"}],
                 "services": {"Frontend": {"componentType": "frontend"}, "Decode": worker}}})


def _live(desired: Json) -> Json:
    """A written revision as the cluster returns it."""
    return {**desired, "metadata": {**desired["metadata"], "uid": "u", "resourceVersion": "1"}}


def _history(*images: str, limit: int | None = None) -> list[Json]:
    """The revisions kept after the graph ran `images` in turn."""
    live: list[Json] = []
    for image in images:
        annotations = {HISTORY_LIMIT: str(limit)} if limit else {}
        live = [_live(r) for r in worker_revisions(_graph(image, annotations), live)]
    return live


def test_the_first_revision_holds_the_workers_as_stated_without_their_replicas() -> None:
    graph = _graph()
    [revision] = worker_revisions(graph, [])
    assert revision["metadata"]["name"] == f"g-{worker_hash(graph)}"
    assert revision["metadata"]["labels"] == {"nvidia.com/dynamo-graph-deployment-name": "g",
                                              "nvidia.com/dynamo-worker-hash": worker_hash(graph)}
    assert revision["revision"] == 1
    assert revision["metadata"]["annotations"][REVISION_ANNOTATION] == "1"
    assert revision["data"] == revision_data(graph)
    [decode] = revision["data"]["components"]
    assert decode["name"] == "Decode" and "replicas" not in decode
    assert decode["podTemplate"]["spec"]["containers"][0]["image"] == "img:1"
    assert revision["data"]["backendFramework"] == "vllm"
    assert revision["data"]["env"] == [{"name": "A", "value": "1"}]


def test_each_new_configuration_takes_the_next_number_and_a_reused_one_is_renumbered() -> None:
    history = _history("img:1", "img:2", "img:3")
    assert sorted(r["revision"] for r in history) == [1, 2, 3]
    again = _history("img:1", "img:2", "img:3", "img:1")
    by_image = {r["data"]["components"][0]["podTemplate"]["spec"]["containers"][0]["image"]:
                r["revision"] for r in again}
    assert by_image == {"img:1": 4, "img:2": 2, "img:3": 3}
    # Stable once written: the same graph keeps the same numbers.
    assert worker_revisions(_graph("img:1"), again) == [
        {k: v for k, v in r.items() if k != "metadata"} | {"metadata": {
            k: v for k, v in r["metadata"].items() if k not in ("uid", "resourceVersion")}}
        for r in sorted(again, key=lambda r: -int(r["revision"]))]


def test_the_history_limit_drops_the_oldest_but_never_a_running_generation() -> None:
    history = _history(*(f"img:{i}" for i in range(1, 14)))
    assert sorted(r["revision"] for r in history) == list(range(4, 14))  # default 10
    limited = _history("img:1", "img:2", "img:3", "img:4", limit=2)
    assert sorted(r["revision"] for r in limited) == [3, 4]
    running = worker_hash(_graph("img:1"))
    graph = _graph("img:3", {HISTORY_LIMIT: "1"})
    kept = worker_revisions(graph, [_live(r) for r in worker_revisions(
        _graph("img:2"), [_live(r) for r in worker_revisions(_graph("img:1"), [])])],
        running={running})
    assert {r["metadata"]["labels"]["nvidia.com/dynamo-worker-hash"] for r in kept} == {
        worker_hash(graph), running}


def test_the_change_cause_is_copied_and_a_bad_limit_is_refused() -> None:
    [revision] = worker_revisions(_graph(annotations={CHANGE_CAUSE: "bump"}), [])
    assert revision["metadata"]["annotations"][CHANGE_CAUSE] == "bump"
    with pytest.raises(GenerationError, match=HISTORY_LIMIT):
        worker_revisions(_graph(annotations={HISTORY_LIMIT: "ten"}), [])


def test_on_the_grove_path_a_revision_covers_every_worker_multinode_ones_too() -> None:
    graph = hub_graph({
        "apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g", "namespace": "ns"},
        "spec": {"services": {
            "Frontend": {"componentType": "frontend"},
            "Decode": {"componentType": "worker", "subComponentType": "decode",
                       "multinode": {"nodeCount": 2}, "resources": {"limits": {"gpu": "8"}}},
            "Prefill": {"componentType": "worker", "subComponentType": "prefill"}}}})
    assert worker_revisions(graph, [])[0]["data"]["components"][0]["name"] == "Prefill"
    workers = graph_workers(graph)
    [revision] = worker_revisions(graph, [], workers=workers)
    assert [c["name"] for c in revision["data"]["components"]] == ["Decode", "Prefill"]
    assert revision["metadata"]["name"] == f"g-{worker_hash(graph, workers)}"
    assert worker_hash(graph, workers) != worker_hash(graph)
