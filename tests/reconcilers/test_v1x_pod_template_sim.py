"""A `v1beta1` graph using the pod-template fields of issue #29 item 2 reaches Deployments
through the local cluster as the builders render them: the /dev/shm size, the user's sidecar
container and init container, the user's command and args, the graph's labels, annotations
and env, an undeclared compilation-cache claim (which `v1beta1` may name), and a
dynamoSidecar's runtime init container."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from graph_harness import worker_name
from operator_harness import install_crds, running_operator, setup_client, wait_for

from hack.localcluster.server import LocalCluster
from reconcilers.machinery.resources import DEPLOYMENTS, GRAPH_DEPLOYMENTS
from reconcilers.operator.registry import REGISTRATIONS

Json = dict[str, Any]
NS = "default"
IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.0.0"

GRAPH: Json = {
    "apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment",
    "metadata": {"name": "pods", "namespace": NS},
    "spec": {
        "backendFramework": "vllm",
        "labels": {"cost-center": "42"},
        "annotations": {"owner": "team-a"},
        "env": [{"name": "GRAPH_WIDE", "value": "yes"}],
        "components": [{
            "name": "worker", "type": "worker", "replicas": 1,
            "sharedMemorySize": "16Gi",
            "compilationCache": {"pvcName": "vllm-cache"},
            "podTemplate": {"spec": {
                "initContainers": [{"name": "fetch", "image": "busybox:1",
                                    "command": ["true"]}],
                "containers": [
                    {"name": "main", "image": IMAGE, "command": ["python3"],
                     "args": ["-m", "dynamo.vllm", "--model", "m"]},
                    {"name": "log-shipper", "image": "fluent-bit:3",
                     "args": ["--config", "/etc/fb.conf"]},
                ]}},
        }, {
            "name": "engine", "type": "worker", "replicas": 1, "dynamoSidecar": "runtime",
            "podTemplate": {"spec": {
                "initContainers": [{"name": "runtime", "image": IMAGE,
                                    "restartPolicy": "Always"}],
                "containers": [{"name": "main", "image": "vllm/vllm-openai:v0.11.0",
                                "command": ["vllm"], "args": ["serve", "m"]}]}},
        }, {
            "name": "nocache", "type": "worker", "replicas": 1, "sharedMemorySize": "0",
            "podTemplate": {"spec": {"containers": [
                {"name": "main", "image": IMAGE, "command": ["python3"],
                 "args": ["-m", "dynamo.vllm"]}]}},
        }],
    },
}


async def test_a_v1beta1_graph_reaches_deployments_with_its_pod_template(
        cluster: LocalCluster, kubeconfig: Path) -> None:
    kube = await setup_client(kubeconfig)
    try:
        await install_crds(kube)
        async with running_operator(kubeconfig, REGISTRATIONS):
            await kube.create(GRAPH_DEPLOYMENTS, GRAPH)
            # Each a worker DCD's Deployment, named by the generation: pods-<name>-<hash>.
            worker, nocache, engine = [
                await wait_for(kube, DEPLOYMENTS, NS, worker_name(GRAPH, name), within=20)
                for name in ("worker", "nocache", "engine")]
    finally:
        await kube.close()

    assert worker["metadata"]["labels"]["cost-center"] == "42"
    assert worker["metadata"]["annotations"]["owner"] == "team-a"
    template = worker["spec"]["template"]
    assert template["metadata"]["labels"]["cost-center"] == "42"
    assert template["metadata"]["annotations"]["owner"] == "team-a"
    pod = template["spec"]
    by_name = {c["name"]: c for c in pod["containers"]}
    assert set(by_name) == {"main", "log-shipper"}
    assert by_name["log-shipper"]["image"] == "fluent-bit:3"
    assert by_name["log-shipper"]["args"] == ["--config", "/etc/fb.conf"]
    assert [c["name"] for c in pod["initContainers"]] == ["fetch"]
    main = by_name["main"]
    assert main["command"] == ["python3"]
    assert main["args"][:4] == ["-m", "dynamo.vllm", "--model", "m"]
    assert {"name": "GRAPH_WIDE", "value": "yes"} in main["env"]
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert volumes["shared-memory"]["emptyDir"] == {"medium": "Memory", "sizeLimit": "16Gi"}
    assert volumes["vllm-cache"]["persistentVolumeClaim"] == {"claimName": "vllm-cache"}
    mounts = {m["name"]: m["mountPath"] for m in main["volumeMounts"]}
    assert mounts == {"shared-memory": "/dev/shm", "vllm-cache": "/root/.cache/vllm"}

    plain = nocache["spec"]["template"]["spec"]
    assert all(v["name"] != "shared-memory" for v in plain.get("volumes", []))
    (plain_main,) = plain["containers"]
    assert all(m["mountPath"] != "/dev/shm" for m in plain_main.get("volumeMounts", []))

    # dynamoSidecar: the runtime in its restartable init container, the engine in main.
    sidecar_pod = engine["spec"]["template"]["spec"]
    (runtime,) = sidecar_pod["initContainers"]
    assert runtime["restartPolicy"] == "Always"
    assert runtime["readinessProbe"]["httpGet"]["path"] == "/health"
    assert {"name": "GRAPH_WIDE", "value": "yes"} in runtime["env"]
    (engine_main,) = sidecar_pod["containers"]
    assert engine_main["command"] == ["vllm"] and "readinessProbe" not in engine_main
