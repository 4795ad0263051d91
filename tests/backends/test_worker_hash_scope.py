"""What the worker hash covers (issue #28 item 1): scaling a worker, or giving it a scaling
adapter, never starts a generation; a change of what a worker runs, of the graph's env, or
of the workers' set does; the frontend is not part of it."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from backends.hub_graph import hub_graph
from backends.worker_generation import worker_hash

Json = dict[str, Any]


def _graph() -> Json:
    def worker(sub: str) -> Json:
        return {"componentType": "worker", "subComponentType": sub, "replicas": 2,
                "extraPodSpec": {"mainContainer": {"image": "img:1"}}}
    return {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment",
            "metadata": {"name": "g", "namespace": "ns"},
            "spec": {"backendFramework": "vllm", "envs": [{"name": "A", "value": "1"}],
                     "services": {"Frontend": {"componentType": "frontend", "replicas": 1},
                                  "Prefill": worker("prefill"), "Decode": worker("decode")}}}


def _services(graph: Json) -> Json:
    services: Json = graph["spec"]["services"]
    return services


SAME: dict[str, Callable[[Json], None]] = {
    "replicas": lambda g: _services(g)["Decode"].update(replicas=7),
    "scaling adapter": lambda g: _services(g)["Prefill"].update(scalingAdapter={"enabled": True}),
    "frontend": lambda g: _services(g)["Frontend"].update(
        replicas=3, extraPodSpec={"mainContainer": {"image": "fe:2"}}),
}
OTHER: dict[str, Callable[[Json], None]] = {
    "image": lambda g: _services(g)["Decode"]["extraPodSpec"]["mainContainer"].update(
        image="img:2"),
    "graph env": lambda g: g["spec"]["envs"].append({"name": "B", "value": "2"}),
    "worker env": lambda g: _services(g)["Prefill"].update(envs=[{"name": "C", "value": "3"}]),
    "a worker removed": lambda g: _services(g).pop("Prefill"),
}


@pytest.mark.parametrize("edit", list(SAME), ids=list(SAME))
def test_scaling_and_the_frontend_keep_the_generation(edit: str) -> None:
    changed = copy.deepcopy(_graph())
    SAME[edit](changed)
    assert worker_hash(hub_graph(changed)) == worker_hash(hub_graph(_graph()))


@pytest.mark.parametrize("edit", list(OTHER), ids=list(OTHER))
def test_a_change_of_the_workers_starts_a_generation(edit: str) -> None:
    changed = copy.deepcopy(_graph())
    OTHER[edit](changed)
    wanted = worker_hash(hub_graph(changed))
    assert wanted != worker_hash(hub_graph(_graph()))
    assert len(wanted) == 8 and int(wanted, 16) >= 0
