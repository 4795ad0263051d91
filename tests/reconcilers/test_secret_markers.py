"""No secret value ever reaches the operator's logs, events or metrics.

Secrets carrying marker values are planted where the operator reads or points at them (an
image pull secret it matches by registry, the MPI SSH Secret it copies, secrets named by env
references and `envFromSecret`), the operator runs as its own process at debug level with
every controller, and the markers (and the base64 the API server stores) are searched for."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import secrets
import sys
from pathlib import Path
from typing import Any

import aiohttp
import yaml
from operator_harness import CRDS, ROOT, eventually, install_crds, setup_client, wait_for
from test_operator_process import free_port, http_get

from controller.resource import Resource
from hack.our_crds import COMPONENT_DEPLOYMENTS, GRAPH_DEPLOYMENTS
from reconcilers.machinery.resources import DEPLOYMENTS, SECRETS

NS = "default"
SOURCE_NS = "dynamo-system"
MPI_SECRET = "mpi-run-ssh-secret"
NAMESPACES = Resource("", "v1", "namespaces", "Namespace", namespaced=False)
EVENTS = Resource("", "v1", "events", "Event")
LWS_CRD = ROOT / "hack" / "crds" / "leaderworkerset.yaml"
IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.6.0"

Json = dict[str, Any]


def marker(kind: str) -> str:
    return f"SECRETMARKER{kind}{secrets.token_hex(8)}"


def secret(name: str, namespace: str, data: dict[str, str], kind: str = "Opaque") -> Json:
    return {"apiVersion": "v1", "kind": "Secret", "type": kind,
            "metadata": {"name": name, "namespace": namespace},
            "data": {k: base64.b64encode(v.encode()).decode() for k, v in data.items()}}


def forms(planted: list[Json]) -> list[str]:
    """Every value to look for: the plain markers and the base64 data of each Secret."""
    out = []
    for obj in planted:
        for encoded in obj["data"].values():
            out.append(encoded)
            text = base64.b64decode(encoded).decode()
            out += [word for word in text.replace('"', " ").split() if "SECRETMARKER" in word]
    return out


async def test_secret_values_never_reach_logs_events_or_metrics(kubeconfig: Path,
                                                               tmp_path: Path) -> None:
    kube = await setup_client(kubeconfig)
    await install_crds(kube)
    # LeaderWorkerSet served: the multinode TRT-LLM worker needs the MPI SSH Secret.
    await kube.create(CRDS, yaml.safe_load(LWS_CRD.read_text()))
    await kube.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace",
                                   "metadata": {"name": SOURCE_NS}})
    password = marker("PULL")
    auth = base64.b64encode(f"user:{password}".encode()).decode()
    docker_config = json.dumps({"auths": {"nvcr.io": {"username": "user", "password": password,
                                                      "auth": auth}}})
    planted = [
        secret("nvcr-pull", NS, {".dockerconfigjson": docker_config},
               "kubernetes.io/dockerconfigjson"),
        secret(MPI_SECRET, SOURCE_NS, {"private.key": marker("MPIKEY"),
                                       "private.key.pub": marker("MPIPUB")}),
        secret("hf-token", NS, {"HF_TOKEN": marker("ENVFROM")}),
        secret("api-key", NS, {"key": marker("ENVREF")}),
    ]
    for obj in planted:
        await kube.create(SECRETS, obj)
    looked_for = forms(planted)

    probes, metrics = free_port(), free_port()
    log_path = tmp_path / "operator.log"
    env = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "POD_NAMESPACE")}
    with log_path.open("wb") as log:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "reconcilers.operator", "--kubeconfig", str(kubeconfig),
            "--leader-election-namespace", NS, "--log-format", "json", "--log-level", "debug",
            "--mpi-run-ssh-secret-namespace", SOURCE_NS,
            "--health-probe-bind-address", f"127.0.0.1:{probes}",
            "--metrics-bind-address", f"127.0.0.1:{metrics}", "--metrics-secure=false",
            stdout=asyncio.subprocess.DEVNULL, stderr=log, env=env)
    try:
        async def ready() -> bool:
            assert proc.returncode is None, "the operator exited"
            try:
                return (await http_get(probes, "/readyz"))[0] == 200
            except (aiohttp.ClientError, TimeoutError):  # a loaded machine: not yet
                return False

        await eventually(ready, within=20)
        main = {"image": IMAGE, "env": [{"name": "API_KEY", "valueFrom": {
            "secretKeyRef": {"name": "api-key", "key": "key"}}}]}
        await kube.create(GRAPH_DEPLOYMENTS, {
            "apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment",
            "metadata": {"name": "g", "namespace": NS},
            "spec": {"backendFramework": "trtllm", "services": {
                "Frontend": {"componentType": "frontend", "replicas": 1,
                             "envFromSecret": "hf-token",
                             "extraPodSpec": {"mainContainer": main}},
                "Worker": {"componentType": "worker", "replicas": 1,
                           "multinode": {"nodeCount": 2}, "envFromSecret": "hf-token",
                           "extraPodSpec": {"mainContainer": main}}}}})
        await kube.create(COMPONENT_DEPLOYMENTS, {
            "apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoComponentDeployment",
            "metadata": {"name": "solo", "namespace": NS},
            "spec": {"componentType": "worker", "replicas": 1, "envFromSecret": "hf-token",
                     "extraPodSpec": {"mainContainer": main}}})
        # The operator did read them: the pull secret was matched, the MPI Secret copied.
        deployment = await wait_for(kube, DEPLOYMENTS, NS, "g-frontend", within=20)
        pulls = deployment["spec"]["template"]["spec"].get("imagePullSecrets") or []
        assert {"name": "nvcr-pull"} in pulls
        await wait_for(kube, SECRETS, NS, MPI_SECRET, within=20)
        await wait_for(kube, DEPLOYMENTS, NS, "solo", within=20)
        status, metrics_text = await http_get(metrics, "/metrics")
        assert status == 200
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    events = json.dumps((await kube.list(EVENTS, None))["items"])
    await kube.close()
    logs = log_path.read_text()
    assert '"level": "debug"' in logs or '"level":"debug"' in logs  # debug lines were on
    for where, text in (("logs", logs), ("events", events), ("metrics", metrics_text)):
        leaked = [value for value in looked_for if value in text]
        assert not leaked, f"secret values in the operator's {where}: {leaked}"
