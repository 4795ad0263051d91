"""Intent-based v1beta1 requests on the simulated cluster, end to end: the request as the
upstream reference writes it is profiled by the simulated profiler (a Job built from its
intent, hardware discovered from the GPU nodes), its v1beta1 graph is created with the
override applied and comes up through the graph and component controllers; without autoApply
it stops at Ready until autoApply is switched on; an infeasible SLA fails with the profiler's
reason; a model cache PVC must exist, and is mounted in the profiler and the graph's
workers; `kubectl get dgdr` shows the v1beta1 columns."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from operator_harness import (
    Operator,
    condition,
    eventually,
    get_or_none,
    wait_for,
)
from request_support import NS, Json, request_client, sim_operator

from controller.client import KubeClient
from hack.localcluster.server import LocalCluster
from hack.localcluster.testing import Kubectl
from hack.our_crds import DEPLOYMENT_REQUESTS as ALPHA_REQUESTS
from hack.our_crds import GRAPH_DEPLOYMENTS as ALPHA_GRAPHS
from reconcilers.machinery.resources import (
    DEPLOYMENT_REQUESTS,
    GRAPH_DEPLOYMENTS,
    JOBS,
    PERSISTENT_VOLUME_CLAIMS,
)

EXAMPLES = Path(__file__).resolve().parents[2] / "deploy" / "examples" / "v1beta1"
ORDER = ["", "Pending", "Profiling", "Deploying", "Deployed"]


@pytest.fixture
async def kube(sim_cluster: LocalCluster, tmp_path: Path) -> AsyncIterator[KubeClient]:
    async with request_client(tmp_path / "sim" / "kubeconfig") as client:
        yield client


@pytest.fixture
async def operator(kube: KubeClient, tmp_path: Path) -> AsyncIterator[Operator]:
    async with sim_operator(tmp_path / "sim" / "kubeconfig") as op:
        yield op


def example(name: str, **spec: Any) -> Json:
    obj: Json = yaml.safe_load((EXAMPLES / name).read_text())
    obj["metadata"]["namespace"] = NS
    obj["spec"].update(spec)
    return obj


async def phases_until(kube: KubeClient, name: str, final: str) -> list[str]:
    """Every phase the request is seen in, in order, until `final`."""
    seen: list[str] = []

    async def reached() -> bool:
        obj = await kube.get(DEPLOYMENT_REQUESTS, NS, name)
        phase = (obj.get("status") or {}).get("phase") or ""
        if not seen or seen[-1] != phase:
            seen.append(phase)
        return phase == final

    await eventually(reached, within=30.0, interval=0.005)
    return seen


def main_container(component_spec: Json) -> Json:
    found: Json = next(c for c in component_spec["podTemplate"]["spec"]["containers"]
                       if c["name"] == "main")
    return found


async def test_the_reference_example_is_profiled_deployed_and_ready(
        kube: KubeClient, operator: Operator) -> None:
    await kube.create(DEPLOYMENT_REQUESTS, example("dgdr-intent-qwen3-sglang.yaml"))
    seen = await phases_until(kube, "qwen3-sglang", "Deployed")
    # Every phase is passed through in order (a fast poll may miss a short one, never reorder).
    assert [ORDER.index(p) for p in seen] == sorted(ORDER.index(p) for p in seen)
    obj = await kube.get(DEPLOYMENT_REQUESTS, NS, "qwen3-sglang")
    status = obj["status"]
    assert status["profilingJobName"] == "profile-qwen3-sglang"
    assert "profilingPhase" not in status
    assert status["observedGeneration"] == obj["metadata"]["generation"]
    for ctype, reason in (("Validation", "ValidationPassed"), ("Profiling", "ProfilingCompleted"),
                          ("SpecGenerated", "SpecGenerated"),
                          ("DeploymentReady", "DeploymentReady"), ("Succeeded", "Deployed")):
        assert (condition(obj, ctype)["status"], condition(obj, ctype)["reason"]) == (
            "True", reason), ctype
    # The Job carried the intent, with the defaults and the discovered GPUs.
    job = await kube.get(JOBS, NS, "profile-qwen3-sglang")
    profiler = job["spec"]["template"]["spec"]["containers"][0]
    assert profiler["command"] == ["python", "-m", "dynamo.profiler"]
    handed = json.loads(profiler["args"][1])
    assert (handed["backend"], handed["searchStrategy"], handed["sla"]) == (
        "sglang", "rapid", {"ttft": 2000, "itl": 30})
    assert handed["hardware"]["numGpusPerNode"] >= 1 and handed["hardware"]["totalGpus"] >= 1
    # The graph: v1beta1, named by the profiler, the override applied to `decode`, Ready.
    name = status["dgdName"]
    dgd = await kube.get(GRAPH_DEPLOYMENTS, NS, name)
    assert dgd["metadata"]["labels"]["dgdr.nvidia.com/name"] == "qwen3-sglang"
    assert "ownerReferences" not in dgd["metadata"]
    components = {c["name"]: c for c in dgd["spec"]["components"]}
    assert set(components) == {"Frontend", "prefill", "decode"}
    assert {"name": "TRITON_PTXAS_PATH", "value": "/usr/local/cuda/bin/ptxas"} in \
        main_container(components["decode"])["env"]
    assert status["profilingResults"]["selectedConfig"]["spec"] == dgd["spec"]
    assert (await kube.get(ALPHA_GRAPHS, NS, name))["status"]["state"] == "successful"
    assert status["deploymentInfo"]["replicas"] >= 3
    # v1alpha1 readers see the state the conversion maps.
    alpha = await kube.get(ALPHA_REQUESTS, NS, "qwen3-sglang")
    assert alpha["status"]["state"] == "Ready"
    assert alpha["status"]["deployment"] == {"name": name, "created": True}
    assert "profilingConfig" not in alpha["spec"]


async def test_without_auto_apply_it_stops_at_ready_until_switched_on(
        kube: KubeClient, operator: Operator) -> None:
    await kube.create(DEPLOYMENT_REQUESTS, example("dgdr-intent-minimal.yaml", autoApply=False))
    obj = await wait_for(kube, DEPLOYMENT_REQUESTS, NS, "qwen3-minimal",
                         lambda o: (o.get("status") or {}).get("phase") == "Ready", within=30.0)
    selected = obj["status"]["profilingResults"]["selectedConfig"]
    assert selected["apiVersion"] == "nvidia.com/v1beta1"
    assert (condition(obj, "Succeeded")["status"], condition(obj, "Succeeded")["reason"]) == (
        "True", "SpecGenerated")
    assert await get_or_none(kube, GRAPH_DEPLOYMENTS, NS, selected["metadata"]["name"]) is None
    # Switching autoApply on deploys what was generated.
    await kube.patch(DEPLOYMENT_REQUESTS, NS, "qwen3-minimal", {"spec": {"autoApply": True}})
    await phases_until(kube, "qwen3-minimal", "Deployed")
    assert await get_or_none(kube, GRAPH_DEPLOYMENTS, NS, selected["metadata"]["name"])


async def test_an_infeasible_sla_fails_with_the_profilers_reason(
        kube: KubeClient, operator: Operator) -> None:
    await kube.create(DEPLOYMENT_REQUESTS, example("dgdr-intent-minimal.yaml",
                                                   sla={"ttft": 5, "itl": 10}))
    obj = await wait_for(kube, DEPLOYMENT_REQUESTS, NS, "qwen3-minimal",
                         lambda o: (o.get("status") or {}).get("phase") == "Failed",
                         within=30.0)
    profiling = condition(obj, "Profiling")
    assert (profiling["status"], profiling["reason"]) == ("False", "ProfilingFailed")
    assert "Container: profiler, ExitCode: 1" in profiling["message"]
    assert "ttft 5 ms is below the 10 ms floor" in profiling["message"]
    assert (condition(obj, "Succeeded")["status"], condition(obj, "Succeeded")["reason"]) == (
        "False", "Failed")
    assert "profilingPhase" not in obj["status"] and "dgdName" not in obj["status"]


@pytest.mark.kubectl
async def test_kubectl_get_dgdr_shows_the_v1beta1_columns(
        kube: KubeClient, operator: Operator, tmp_path: Path) -> None:
    await kube.create(DEPLOYMENT_REQUESTS, example("dgdr-intent-qwen3-sglang.yaml"))
    obj = await wait_for(kube, DEPLOYMENT_REQUESTS, NS, "qwen3-sglang",
                         lambda o: (o.get("status") or {}).get("phase") == "Deployed",
                         within=30.0)
    kubectl = Kubectl(tmp_path / "sim" / "kubeconfig", tmp_path / "kubectl-cache")
    table = await kubectl("get", "dgdr", "-n", NS, "-o", "wide")
    header, row = table.splitlines()[:2]
    assert header.split() == ["NAME", "MODEL", "BACKEND", "PHASE", "PROFILING", "REASON",
                              "MESSAGE", "DGD", "AGE", "JOB"]
    succeeded = condition(obj, "Succeeded")
    # Profiling is done, so its column is blank; the message has spaces of its own.
    assert row.split()[:5] == ["qwen3-sglang", "Qwen/Qwen3-30B-A3B", "sglang", "Deployed",
                               succeeded["reason"]]
    assert row[header.index("PROFILING"):header.index("REASON")].strip() == ""
    assert f" {succeeded['message']} " in row
    assert row.split()[-3] == obj["status"]["dgdName"]
    assert row.split()[-1] == "profile-qwen3-sglang"


async def test_the_model_cache_is_mounted_in_the_profiler_and_the_graph(
        kube: KubeClient, operator: Operator) -> None:
    cache = {"pvcName": "weights", "pvcModelPath": "qwen3"}
    await kube.create(DEPLOYMENT_REQUESTS, example("dgdr-intent-minimal.yaml", modelCache=cache))
    obj = await wait_for(kube, DEPLOYMENT_REQUESTS, NS, "qwen3-minimal",
                         lambda o: (o.get("status") or {}).get("phase") == "Failed")
    assert f"model cache PVC weights not found in namespace {NS}" in condition(
        obj, "Validation")["message"]
    await kube.delete(DEPLOYMENT_REQUESTS, NS, "qwen3-minimal")
    await eventually(lambda: _gone(kube, "qwen3-minimal"))

    await kube.create(PERSISTENT_VOLUME_CLAIMS, {
        "apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": "weights", "namespace": NS},
        "spec": {"accessModes": ["ReadWriteMany"],
                 "resources": {"requests": {"storage": "10Gi"}}}})
    await kube.create(DEPLOYMENT_REQUESTS, example("dgdr-intent-minimal.yaml", modelCache=cache))
    await phases_until(kube, "qwen3-minimal", "Deployed")
    job = await kube.get(JOBS, NS, "profile-qwen3-minimal")
    assert {"name": "model-cache", "persistentVolumeClaim": {
        "claimName": "weights", "readOnly": True}} in job["spec"]["template"]["spec"]["volumes"]
    name = (await kube.get(DEPLOYMENT_REQUESTS, NS, "qwen3-minimal"))["status"]["dgdName"]
    view = await kube.get(ALPHA_GRAPHS, NS, name)
    assert view["spec"]["pvcs"] == [{"name": "weights", "create": False}]
    decode = view["spec"]["services"]["decode"]
    assert decode["volumeMounts"] == [{"name": "weights", "mountPoint": "/opt/model-cache"}]
    assert "/opt/model-cache/qwen3" in decode["extraPodSpec"]["mainContainer"]["args"]


async def _gone(kube: KubeClient, name: str) -> bool:
    return await get_or_none(kube, DEPLOYMENT_REQUESTS, NS, name) is None


async def test_an_older_controllers_status_payload_is_dropped_once_the_status_is_written(
        kube: KubeClient, operator: Operator) -> None:
    # As the v1alpha1 controller left a request: its v1alpha1-only status fields in the payload.
    obj = example("dgdr-intent-minimal.yaml", autoApply=False)
    stale = {"backend": "trtllm", "deployment": {"name": "old", "state": "pending"}}
    obj["metadata"].setdefault("annotations", {})["nvidia.com/dgdr-status"] = json.dumps(stale)
    await kube.create(DEPLOYMENT_REQUESTS, obj)
    await wait_for(kube, DEPLOYMENT_REQUESTS, NS, "qwen3-minimal",
                   lambda o: (o.get("status") or {}).get("phase") == "Ready", within=30.0)
    live = await kube.get(DEPLOYMENT_REQUESTS, NS, "qwen3-minimal")
    assert "nvidia.com/dgdr-status" not in (live["metadata"].get("annotations") or {})
    alpha = await kube.get(ALPHA_REQUESTS, NS, "qwen3-minimal")
    assert "backend" not in alpha["status"]
    assert alpha["status"]["deployment"] == {"name": live["status"]["dgdName"]}
