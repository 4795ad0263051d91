"""What the graph benchmark deploys and what it counts: the DGD manifest, the simulated nodes
sized so scheduling never waits, and the minimum writes a graph needs."""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

from api.conversion import convert
from controller.resource import Resource
from hack.localcluster.simulation.config import NodeSpec

#: The hub: stored, watched and written as v1beta1, so seeding and watching call no webhook
#: and the figures hold the operator's own conversion cost only.
GROUP, VERSION = "nvidia.com", "v1beta1"
DGDS = Resource(GROUP, VERSION, "dynamographdeployments", "DynamoGraphDeployment")
DCDS_PLURAL = "dynamocomponentdeployments"
#: Resources whose writes are not a graph's children: events and the leader-election lease.
NOT_CHILDREN = frozenset({"events", "events.events.k8s.io", "leases.coordination.k8s.io"})
IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.6.1"
#: GPUs per graph: one prefill and one decode worker with one GPU each.
GPUS_PER_GRAPH = 2
PODS_PER_GRAPH = 3


def graph(name: str, namespace: str) -> dict[str, Any]:
    """A disaggregated vLLM graph: a frontend, a prefill worker and a decode worker, written
    in v1alpha1 and sent as the hub."""
    def worker(sub: str, extra: list[str]) -> dict[str, Any]:
        return {"componentType": "worker", "subComponentType": sub, "replicas": 1,
                "resources": {"limits": {"gpu": "1"}},
                "extraPodSpec": {"mainContainer": {
                    "image": IMAGE, "workingDir": "/workspace/examples/backends/vllm",
                    "command": ["python3", "-m", "dynamo.vllm"],
                    "args": ["--model", "Qwen/Qwen3-0.6B", *extra]}}}

    return convert({"apiVersion": f"{GROUP}/v1alpha1", "kind": "DynamoGraphDeployment",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"backendFramework": "vllm", "services": {
                "Frontend": {"componentType": "frontend", "replicas": 1,
                             "extraPodSpec": {"mainContainer": {"image": IMAGE}}},
                "VllmPrefillWorker": worker("prefill", ["--is-prefill-worker"]),
                "VllmDecodeWorker": worker("decode", [])}}}, VERSION)


def nodes_for(graphs: int, gpus_per_node: int = 64, pods_per_node: int = 110) -> list[NodeSpec]:
    """Enough roomy nodes that every pod of every graph fits with a quarter to spare."""
    count = max(math.ceil(graphs * GPUS_PER_GRAPH / gpus_per_node),
                math.ceil(graphs * PODS_PER_GRAPH / pods_per_node))
    count = max(1, math.ceil(count * 1.25))
    return [NodeSpec(name=f"bench-node-{i}", cpu="100000", memory="1000Ti", pods=pods_per_node,
                     gpus=gpus_per_node, zone=f"zone-{'ab'[i % 2]}") for i in range(count)]


def minimum_writes(children: Counter[str], status_objects: int, graphs: int) -> dict[str, Any]:
    """One create per child object plus one status write per object that reports status
    (each DGD and each DCD reaching Ready): the fewest writes that produce the end state."""
    per_graph = {k: round(v / graphs, 3) for k, v in sorted(children.items())}
    creates = sum(children.values()) / graphs
    status = status_objects / graphs
    return {"children_per_graph": per_graph, "creates": round(creates, 3),
            "status_writes": round(status, 3), "total": round(creates + status, 3)}
