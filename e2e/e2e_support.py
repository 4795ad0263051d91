"""What the end-to-end tests share: kubectl bound to a namespace, `dynamo-operator` processes.

The cluster is the in-process local cluster with its simulation (4 nodes x 8 GPUs, scheduler,
kubelets, Deployment/ReplicaSet/EndpointSlice/LWS controllers), started per test; or, when
`E2E_KUBECONFIG` names a kubeconfig, that cluster (then each test works in a fresh namespace,
and tests that need the local cluster's request statistics are skipped).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import yaml

from backends.hub_graph import hub_graph
from backends.worker_generation import worker_dcd_name, worker_hash
from hack.localcluster.server import LocalCluster
from hack.localcluster.testing import Kubectl, kubectl_binary
from hack.localcluster.testing import eventually as shared_eventually
from hack.our_crds import write_our_crds
from hack.processes import free_port

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "deploy" / "examples"
THIRD_PARTY_CRD_FILES = [ROOT / "hack" / "crds" / "leaderworkerset.yaml",
                         ROOT / "hack" / "crds" / "inferencepool.yaml"]
OPERATOR = Path(sys.executable).parent / "dynamo-operator"
#: kubectl's names of our kinds in v1alpha1, the version these tests write and read. A short
#: name (`dgd`) reads discovery's preferred version, v1beta1, through the operator's
#: conversion webhook, which most tests run without (a read then fails with a 500).
DGD = "dynamographdeployments.v1alpha1.nvidia.com"
DCD = "dynamocomponentdeployments.v1alpha1.nvidia.com"
DGDR = "dynamographdeploymentrequests.v1alpha1.nvidia.com"
DGDSA = "dynamographdeploymentscalingadapters.v1alpha1.nvidia.com"
DM = "dynamomodels.v1alpha1.nvidia.com"
#: The labels that find a component's DCDs (and their Deployments, Services and pods).
GRAPH_LABEL = "nvidia.com/dynamo-graph-deployment-name"
COMPONENT_LABEL = "nvidia.com/dynamo-component"
WORKER_HASH_LABEL = "nvidia.com/dynamo-worker-hash"

eventually = partial(shared_eventually, within=30.0, interval=0.2)

@dataclass
class Env:
    """One test's cluster: kubectl bound to its namespace, and the local cluster if ours."""

    kubectl: Kubectl
    namespace: str
    kubeconfig: Path
    local: LocalCluster | None
    tmp: Path

    async def k(self, *args: str, stdin: str | None = None, check: bool = True) -> str:
        """kubectl in the test's namespace; stdout (raises on failure when `check`)."""
        result = await self.kubectl.run("-n", self.namespace, *args, stdin=stdin)
        if check:
            result.check()
        return result.stdout

    async def k_result(self, *args: str, stdin: str | None = None) -> tuple[int, str]:
        result = await self.kubectl.run("-n", self.namespace, *args, stdin=stdin)
        return result.code, result.stdout + result.stderr

    async def get(self, kind: str, name: str | None = None,
                  selector: str | None = None) -> Any:
        args = ["get", kind, *([name] if name else []), "-o", "json"]
        if selector:
            args += ["-l", selector]
        result = await self.kubectl.run("-n", self.namespace, *args)
        if result.code != 0:
            if "NotFound" in result.stderr:
                return None
            raise AssertionError(result.stdout + result.stderr)
        return json.loads(result.stdout)  # stderr may hold a deprecation warning

    async def names(self, kind: str, selector: str | None = None) -> list[str]:
        items = (await self.get(kind, selector=selector))["items"]
        return sorted(i["metadata"]["name"] for i in items
                      if not i["metadata"].get("deletionTimestamp"))

    async def apply_example(self, name: str) -> None:
        await self.k("apply", "-f", str(EXAMPLES / f"{name}.yaml"))

    async def ready(self, dgd: str) -> dict[str, Any]:
        """The Ready condition of a DGD ({} when absent)."""
        obj = await self.get(DGD, dgd)
        for c in ((obj or {}).get("status") or {}).get("conditions") or []:
            if c.get("type") == "Ready":
                return dict(c)
        return {}

    async def wait_ready(self, dgd: str, seconds: int = 60) -> None:
        await self.k("wait", "--for=condition=Ready", f"{DGD}/{dgd}", f"--timeout={seconds}s")

    async def wait_reason(self, dgd: str, *words: str, within: float = 30) -> dict[str, Any]:
        """Wait until Ready is False and its reason+message contain every word."""
        seen: dict[str, Any] = {}

        async def check() -> bool:
            nonlocal seen
            seen = await self.ready(dgd)
            text = (str(seen.get("reason")) + " " + str(seen.get("message"))).lower()
            return seen.get("status") == "False" and all(w.lower() in text for w in words)

        try:
            await eventually(check, within=within, what=f"dgd/{dgd} not ready because of {words}")
        except AssertionError as err:
            raise AssertionError(f"{err}; last Ready condition: {seen}") from None
        return seen

    def writes(self, user_agent: str = "dynamo-operator") -> int:
        """Write requests the local API server answered for this user agent (prefix)."""
        assert self.local is not None
        return self.local.stats.writes(user_agent=user_agent)


def worker_generation(graph: dict[str, Any]) -> str:
    """The worker generation of a graph (a manifest or a live object, in either version) as
    the operator computes it: the hash its worker DCDs are named and labelled with."""
    return worker_hash(hub_graph(graph))


def component_selector(graph: str, service: str) -> str:
    """The label selector of a component's DCDs, Deployments, Services and pods."""
    return f"{GRAPH_LABEL}={graph},{COMPONENT_LABEL}={service}"


def example_worker_dcd(example: str, service: str) -> str:
    """The name of the worker DCD (and Deployment, Service) an example graph as written gives
    the service: `<graph>-<service>-<generation>`, the generation from the manifest."""
    graph = yaml.safe_load((EXAMPLES / f"{example}.yaml").read_text())
    return worker_dcd_name(graph["metadata"]["name"], service, worker_generation(graph))


async def current_worker_dcd(env: Env, graph: str, service: str) -> str | None:
    """The name of the DCD the graph's current worker generation gives the worker component,
    computed from the live graph (None when the graph is gone); it need not exist yet."""
    live = await env.get(DGD, graph)
    return None if live is None else worker_dcd_name(graph, service, worker_generation(live))


async def worker_dcds(env: Env, graph: str, service: str) -> list[str]:
    """The live (not terminating) DCDs of a worker component, of every generation, found by
    their labels."""
    return await env.names(DCD, selector=component_selector(graph, service))


async def worker_dcd(env: Env, graph: str, service: str, within: float = 30) -> str:
    """The name of a worker component's one DCD once its rollout has settled: found by
    labels, it must be the only live one, carry the graph's current worker generation as its
    `nvidia.com/dynamo-worker-hash` label and be named `<graph>-<service>-<hash>`. Waits for
    that (a rollout leaves an older generation's DCD behind for a while)."""
    seen: list[str] = []
    want = ""

    async def settled() -> bool:
        nonlocal seen, want
        live = await env.get(DGD, graph)
        if live is None:
            return False
        generation = worker_generation(live)
        want = worker_dcd_name(graph, service, generation)
        items = (await env.get(DCD, selector=component_selector(graph, service)))["items"]
        items = [i for i in items if not i["metadata"].get("deletionTimestamp")]
        seen = [i["metadata"]["name"] for i in items]
        return seen == [want] and (
            items[0]["metadata"].get("labels") or {}).get(WORKER_HASH_LABEL) == generation

    try:
        await eventually(settled, within=within, what=f"{service}'s one DCD of {graph}")
    except AssertionError as err:
        raise AssertionError(f"{err}; expected {want!r}, live: {seen}") from None
    return want


@dataclass
class OperatorProcess:
    """One `dynamo-operator` process; its log is kept beside the test's files. With `tree`,
    the operator of that folder's product packages (an earlier commit's,
    `old_operator_support`), else the installed one."""

    kubeconfig: Path
    namespace: str
    log_path: Path
    name: str = "op"
    extra: list[str] = field(default_factory=list)
    proc: asyncio.subprocess.Process | None = None
    tree: Path | None = None

    async def start(self) -> None:
        env = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "POD_NAMESPACE")}
        env["POD_NAME"] = self.name
        program = [str(OPERATOR)]
        if self.tree is not None:
            program = [sys.executable, "-m", "reconcilers.operator"]
            env["PYTHONPATH"] = str(self.tree)
        args = [*program, "--kubeconfig", str(self.kubeconfig),
                "--leader-election-namespace", self.namespace,
                # Short enough for a takeover test, long enough that a few seconds' stall of
                # the loaded 2-core machine does not make a leader give up and exit (2 s did).
                "--leader-election-lease-duration", "6s",
                "--leader-election-renew-deadline", "4s",
                "--leader-election-retry-period", "1s",
                "--health-probe-bind-address", f"127.0.0.1:{free_port()}",
                "--metrics-bind-address", f"127.0.0.1:{free_port()}", "--metrics-secure=false",
                "--kube-api-qps", "0", "--log-format", "json", *self.extra]
        with self.log_path.open("ab") as log:
            self.proc = await asyncio.create_subprocess_exec(
                *args, stdin=asyncio.subprocess.DEVNULL, stdout=log, stderr=log, env=env,
                cwd=self.tree)

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.returncode is None

    async def kill(self, sig: int = signal.SIGKILL) -> None:
        if self.running:
            assert self.proc is not None
            self.proc.send_signal(sig)
            try:
                await asyncio.wait_for(self.proc.wait(), 15)
            except TimeoutError:
                self.proc.kill()
                await self.proc.wait()

    def tail(self, chars: int = 3000) -> str:
        return self.log_path.read_text(errors="replace")[-chars:] if self.log_path.exists() \
            else ""


async def install_crds(e: Env) -> None:
    """Apply the nvidia.com CRDs (converting through the in-process conversion webhook until
    an operator with webhooks points them at its own), LeaderWorkerSet's and InferencePool's;
    wait until they are served."""
    args: list[str] = []
    for path in [*sorted(write_our_crds(e.tmp / "our-crds").glob("*.yaml")),
                 *THIRD_PARTY_CRD_FILES]:
        args += ["-f", str(path)]
    await e.k("apply", "--server-side", *args)
    await e.k("wait", "--for=condition=Established", "--timeout=30s", "crd", "--all")


@contextlib.asynccontextmanager
async def watched_column(env: Env, kind: str, jsonpath: str) -> AsyncIterator[list[str]]:
    """`kubectl get KIND -w` in the background for the block: the values of one column as
    they come, each change once. Unlike polling, a state that lasts a moment is not missed."""
    proc = await asyncio.create_subprocess_exec(
        kubectl_binary(), "--kubeconfig", str(env.kubeconfig), "-n", env.namespace, "get",
        kind, "-w", "--no-headers", "-o", f"custom-columns=NAME:.metadata.name,VALUE:{jsonpath}",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
        env={**os.environ, "HOME": str(env.tmp), "KUBECACHEDIR": str(env.tmp / "kcache")})
    values: list[str] = []

    async def read() -> None:
        assert proc.stdout is not None
        async for line in proc.stdout:
            parts = line.decode().split()
            if len(parts) == 2 and (not values or values[-1] != parts[1]):
                values.append(parts[1])

    reader = asyncio.create_task(read())
    try:
        await asyncio.sleep(0.5)  # the watch is open before the block changes anything
        yield values
    finally:
        proc.kill()
        await proc.wait()
        await reader


def disaggregated_graph(name: str, image: str, *, frontend_image: str, replicas: int = 2,
                        gpus: int = 1, annotations: dict[str, str] | None = None,
                        pod_annotations: dict[str, str] | None = None) -> dict[str, Any]:
    """A disaggregated vLLM graph (v1alpha1): a frontend, and decode and prefill workers of
    `image`, `replicas` replicas and `gpus` GPUs each; `annotations` on the graph,
    `pod_annotations` on the workers' pods (the simulation's readiness delays, say)."""
    def worker(sub: str) -> dict[str, Any]:
        spec: dict[str, Any] = {
            "componentType": "worker", "subComponentType": sub, "replicas": replicas,
            "resources": {"limits": {"gpu": str(gpus)}},
            "extraPodSpec": {"mainContainer": {
                "image": image, "command": ["python3", "-m", "dynamo.vllm"],
                "args": ["--model", "Qwen/Qwen3-0.6B", f"--is-{sub}-worker"]}},
        }
        if pod_annotations:
            spec["extraPodMetadata"] = {"annotations": dict(pod_annotations)}
        return spec
    meta: dict[str, Any] = {"name": name}
    if annotations:
        meta["annotations"] = dict(annotations)
    return {
        "apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment",
        "metadata": meta,
        "spec": {"backendFramework": "vllm", "services": {
            "Frontend": {"componentType": "frontend", "replicas": 1,
                         "extraPodSpec": {"mainContainer": {"image": frontend_image}}},
            "VllmDecodeWorker": worker("decode"),
            "VllmPrefillWorker": worker("prefill"),
        }},
    }
