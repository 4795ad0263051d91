"""What the rollout benchmark deploys: a disaggregated graph whose workers take a moment to turn
ready and to stop, the patch that changes its workers' image, and nodes with room for it."""

from __future__ import annotations

import math
from typing import Any

from api.conversion import convert
from controller.resource import Resource
from hack.localcluster.simulation.behaviors import READY_AFTER, STOP_AFTER
from hack.localcluster.simulation.config import NodeSpec

GROUP, VERSION = "nvidia.com", "v1beta1"
#: The hub: written, read and sampled as stored, so no conversion webhook is called.
DGDS = Resource(GROUP, VERSION, "dynamographdeployments", "DynamoGraphDeployment")
IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.6.1"
NEW_IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.7.0"
WORKERS = ("VllmDecodeWorker", "VllmPrefillWorker")
REPLICAS = 2
#: GPUs a graph may hold during its rollout: its workers plus one surge pod each (25% of 2).
GPUS_PER_GRAPH = len(WORKERS) * (REPLICAS + 1)
PODS_PER_GRAPH = 1 + GPUS_PER_GRAPH


def graph(name: str, namespace: str, ready_after: float, stop_after: float) -> dict[str, Any]:
    """A frontend and two workers (decode, prefill) of `REPLICAS` each, one GPU per worker;
    worker pods ready `ready_after` s after they run and `stop_after` s to stop; as the hub."""
    slow = {READY_AFTER: str(ready_after), STOP_AFTER: str(stop_after)}

    def worker(sub: str) -> dict[str, Any]:
        return {"componentType": "worker", "subComponentType": sub, "replicas": REPLICAS,
                "resources": {"limits": {"gpu": "1"}},
                "extraPodMetadata": {"annotations": slow},
                "extraPodSpec": {"mainContainer": {
                    "image": IMAGE, "command": ["python3", "-m", "dynamo.vllm"],
                    "args": ["--model", "Qwen/Qwen3-0.6B", f"--is-{sub}-worker"]}}}

    return convert({"apiVersion": f"{GROUP}/v1alpha1", "kind": "DynamoGraphDeployment",
                    "metadata": {"name": name, "namespace": namespace},
                    "spec": {"backendFramework": "vllm", "services": {
                        "Frontend": {"componentType": "frontend", "replicas": 1,
                                     "extraPodSpec": {"mainContainer": {"image": IMAGE}}},
                        "VllmDecodeWorker": worker("decode"),
                        "VllmPrefillWorker": worker("prefill")}}}, VERSION)


def image_patch(live: dict[str, Any], image: str) -> list[dict[str, Any]]:
    """A JSON patch setting every worker's main container image of the hub graph `live`."""
    ops = []
    for i, component in enumerate(live["spec"]["components"]):
        if component["name"] in WORKERS:
            ops.append({"op": "replace",
                        "path": f"/spec/components/{i}/podTemplate/spec/containers/0/image",
                        "value": image})
    return ops


def nodes_for(graphs: int, gpus_per_node: int = 64, pods_per_node: int = 110) -> list[NodeSpec]:
    """Roomy nodes: every graph's rollout fits with a quarter to spare, so nothing waits for
    a GPU (the surge that cannot fit is an e2e scenario, not this benchmark)."""
    count = max(math.ceil(graphs * GPUS_PER_GRAPH / gpus_per_node),
                math.ceil(graphs * PODS_PER_GRAPH / pods_per_node))
    count = max(1, math.ceil(count * 1.25))
    return [NodeSpec(name=f"bench-node-{i}", cpu="100000", memory="1000Ti", pods=pods_per_node,
                     gpus=gpus_per_node, zone=f"zone-{'ab'[i % 2]}") for i in range(count)]
