"""Worker generations where Grove or LeaderWorkerSet replaces the pods
(`backends.worker_generation.PROVIDER_GENERATION`, issue #28 item 6): a graph stamped at the
gate's version (0.3.0; builds of 0.2.0 without this rendering stamp 0.2.0 too) gets, as the
original's, the worker-hash label on every worker's Grove cliques and on its multinode
workers' LeaderWorkerSet templates, `DYN_NAMESPACE_WORKER_SUFFIX` with the same hash in their
`main`, and `DYN_NAMESPACE_PREFIX` in the frontend's; the hash covers every worker, so a
graph's single-node and multinode workers register in one Dynamo namespace. A graph stamped
0.1.0 or 0.2.0, or without the stamp, renders without any of them (the upgrade baseline pins
it byte for byte; e2e/test_operator_upgrade_pods.py takes over the graphs of the build
before)."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import pytest
from backend_cases import SETTINGS, containers

from backends.hub_graph import hub_graph
from backends.render import render
from backends.worker_generation import PROVIDER_GENERATION, graph_workers, worker_hash

Json = dict[str, Any]
ORIGIN = "nvidia.com/dynamo-operator-origin-version"
NEW = ".".join(str(n) for n in PROVIDER_GENERATION.min_version.numbers)
HASH = "nvidia.com/dynamo-worker-hash"
COMPONENT = "nvidia.com/dynamo-component"
SUFFIX = "DYN_NAMESPACE_WORKER_SUFFIX"
PREFIX = "DYN_NAMESPACE_PREFIX"
GROVE = dataclasses.replace(SETTINGS, grove_enabled=True)
LWS = dataclasses.replace(SETTINGS, lws_enabled=True)
PATHS = {"grove": GROVE, "lws": LWS}
IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.4.0"
ARGS = ["--model", "Qwen/Qwen3-8B", "--tensor-parallel-size", "2"]
WORKERS = ("prefill", "decode")


def beta(origin: str | None, image: str = IMAGE) -> Json:
    """A frontend, a single-node prefill and a decode on two nodes, as `v1beta1`."""
    def worker(name: str, nodes: int) -> Json:
        return {"name": name, "type": name, "replicas": 1,
                **({"multinode": {"nodeCount": nodes}} if nodes > 1 else {}),
                "podTemplate": {"spec": {"containers": [{
                    "name": "main", "image": image if name == "decode" else IMAGE,
                    "command": ["python3", "-m", "dynamo.vllm"], "args": ARGS,
                    "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}}
    return {"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment",
            "metadata": _metadata(origin),
            "spec": {"backendFramework": "vllm", "components": [
                {"name": "frontend", "type": "frontend", "replicas": 1},
                worker("prefill", 1), worker("decode", 2)]}}


def alpha(origin: str | None, image: str = IMAGE) -> Json:
    """The same graph as `v1alpha1` writes it."""
    def worker(sub: str, nodes: int) -> Json:
        return {"componentType": "worker", "subComponentType": sub, "replicas": 1,
                **({"multinode": {"nodeCount": nodes}} if nodes > 1 else {}),
                "resources": {"limits": {"gpu": "1"}},
                "extraPodSpec": {"mainContainer": {
                    "image": image if sub == "decode" else IMAGE,
                    "command": ["python3", "-m", "dynamo.vllm"], "args": ARGS}}}
    return {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment",
            "metadata": _metadata(origin),
            "spec": {"backendFramework": "vllm", "services": {
                "frontend": {"componentType": "frontend", "replicas": 1},
                "prefill": worker("prefill", 1), "decode": worker("decode", 2)}}}


VERSIONS = {"v1beta1": beta, "v1alpha1": alpha}


def _metadata(origin: str | None) -> Json:
    metadata: Json = {"name": "gen", "namespace": "team"}
    if origin is not None:
        metadata["annotations"] = {ORIGIN: origin}
    return metadata


def templates(objects: list[Json]) -> list[tuple[str, Json, Json]]:
    """(component, pod labels, main) of every pod template: Grove's cliques, the
    Deployments' and LeaderWorkerSets' templates."""
    found = []
    for obj in objects:
        if obj["kind"] == "PodCliqueSet":
            for clique in obj["spec"]["template"]["cliques"]:
                found.append((clique["labels"][COMPONENT], clique["labels"],
                              containers(clique["spec"]["podSpec"])["main"]))
        pods = []
        if obj["kind"] == "Deployment":
            pods = [obj["spec"]["template"]]
        if obj["kind"] == "LeaderWorkerSet":
            group = obj["spec"]["leaderWorkerTemplate"]
            pods = [group["leaderTemplate"], group["workerTemplate"]]
        for pod in pods:
            labels = pod["metadata"]["labels"]
            found.append((labels[COMPONENT], labels, containers(pod["spec"])["main"]))
    return found


def env(main: Json) -> dict[str, Any]:
    return {e["name"]: e.get("value") for e in main.get("env") or []}


def expected_hash(obj: Json) -> str:
    hub = hub_graph(obj)
    wanted = worker_hash(hub)
    assert wanted == worker_hash(hub, graph_workers(hub))  # every worker, as the original
    return wanted


@pytest.mark.parametrize("version", sorted(VERSIONS))
@pytest.mark.parametrize("path", sorted(PATHS))
def test_a_graph_created_now_carries_its_generation(path: str, version: str) -> None:
    obj = VERSIONS[version](NEW)
    wanted = expected_hash(obj)
    found = templates(render(obj, PATHS[path]))
    assert {c for c, _, _ in found} == {"frontend", *WORKERS}
    for component, labels, main in found:
        variables = env(main)
        if component in WORKERS:
            assert labels[HASH] == wanted, component
            assert variables[SUFFIX] == wanted, component
            assert PREFIX not in variables
        else:
            assert HASH not in labels
            assert SUFFIX not in variables
            assert variables[PREFIX] == variables["DYN_NAMESPACE"]


@pytest.mark.parametrize("version", sorted(VERSIONS))
def test_the_multinode_worker_keeps_its_one_dcd_on_the_lws_path(version: str) -> None:
    """LeaderWorkerSet replaces the pods of the one DCD in place; the single-node prefill
    rolls by generation, named after the same hash, so both register in one namespace."""
    obj = VERSIONS[version](NEW)
    wanted = expected_hash(obj)
    dcds = {d["metadata"]["name"]: d for d in render(obj, LWS)
            if d["kind"] == "DynamoComponentDeployment"}
    assert sorted(dcds) == ["gen-decode", "gen-frontend", f"gen-prefill-{wanted}"]
    assert dcds["gen-decode"]["metadata"]["labels"][HASH] == wanted
    assert dcds[f"gen-prefill-{wanted}"]["metadata"]["labels"][HASH] == wanted
    assert HASH not in dcds["gen-frontend"]["metadata"]["labels"]


@pytest.mark.parametrize("origin", [None, "0.1.0", "0.2.0", "not-a-version"])
@pytest.mark.parametrize("version", sorted(VERSIONS))
@pytest.mark.parametrize("path", sorted(PATHS))
def test_an_older_graph_renders_as_before(path: str, version: str, origin: str | None) -> None:
    obj = VERSIONS[version](origin)
    found = templates(render(obj, PATHS[path]))
    for component, labels, main in found:
        variables = env(main)
        if path == "lws" and component == "prefill":
            continue  # the DCD path's own generations, as before (tests/reconcilers)
        assert HASH not in labels, component
        assert SUFFIX not in variables, component
        if path == "grove":
            assert PREFIX not in variables, component
    if path == "lws":
        hub = hub_graph(obj)
        # The rolled workers' hash alone, as before: the multinode decode is not in it.
        assert worker_hash(hub) == worker_hash(hub, ["prefill"])


@pytest.mark.parametrize("version", sorted(VERSIONS))
@pytest.mark.parametrize("path", sorted(PATHS))
def test_a_new_worker_image_moves_the_generation(path: str, version: str) -> None:
    before = VERSIONS[version](NEW)
    after = VERSIONS[version](NEW, image="nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.4.1")
    old, new = expected_hash(before), expected_hash(after)
    assert old != new
    for component, labels, main in templates(render(after, PATHS[path])):
        if component in WORKERS:
            assert (labels[HASH], env(main)[SUFFIX]) == (new, new), component


def test_a_graph_without_workers_still_has_the_frontend_see_every_generation() -> None:
    obj = copy.deepcopy(beta(NEW))
    obj["spec"]["components"] = obj["spec"]["components"][:1]
    for path in sorted(PATHS):
        [(component, labels, main)] = templates(render(obj, PATHS[path]))
        assert component == "frontend" and HASH not in labels
        assert env(main)[PREFIX] == env(main)["DYN_NAMESPACE"]
