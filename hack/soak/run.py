"""The chaos soak: two operator replicas (leader election) against a simulated local cluster,
graphs churned while faults are injected, invariants measured and reported as figures.

Churn: create graphs; change an image or env; scale through the graph and through a scaling
adapter (two `/scale` writes back to back, as an autoscaler correcting itself); restart;
`kubectl replace` (an update without our annotations); delete with each propagation policy (a
name deleted with Orphan is retired: its children are the user's now); create DGDRs and
DynamoModels. Faults: a share of 503 and 429 answers (Retry-After 1), dropped watches, history
compaction, API-server restarts, SIGKILL of the leader (a new replica takes its place), pod
kills and a node going NotReady for a while.

Figures: graphs converged after the faults stop (successful at their generation), the most
worker generations one graph's pods held at once, workers registered outside their
generation, and falls of serving capacity below the floor and surge above the budget while
workers rolled out under the faults (hack/soak/rollout_watch.py), duplicate
children (two DCDs for one service of a graph, two Deployments for one DCD), children left
whose controller owner is gone, planted user objects changed or lost, sample windows in which
two replicas wrote, adapters whose last scale request was lost (the adapter or its graph not
at the value last written to `/scale`), replica exits that were not injected, RSS and
queue-depth slopes per leadership term (hack/soak/growth.py), the queue depth once settled,
and the writes of a settled, idle operator.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import random
import signal
import socket
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp

from controller.client import ClientConfig, KubeClient
from controller.errors import ApiError
from controller.metrics import Metrics
from controller.resource import Resource
from e2e.rollout_invariants import MAX_GENERATIONS
from hack.fuzz.session import install_crds
from hack.localcluster.request_stats import WRITE_VERBS
from hack.localcluster.server import LocalCluster
from hack.soak.growth import Growth, Sample, queue_depth, rss_bytes
from hack.soak.rollout_watch import RolloutWatch

Json = dict[str, Any]
NS = "soak"
IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.8.0"
LEASE = "dynamo-operator-leader"
NAMESPACES = Resource("", "v1", "namespaces", "Namespace", namespaced=False)
CONFIG_MAPS = Resource("", "v1", "configmaps", "ConfigMap")
SERVICES = Resource("", "v1", "services", "Service")
PODS = Resource("", "v1", "pods", "Pod")
NODES = Resource("", "v1", "nodes", "Node", namespaced=False)
LEASES = Resource("coordination.k8s.io", "v1", "leases", "Lease")
DEPLOYMENTS = Resource("apps", "v1", "deployments", "Deployment")
DGDS = Resource("nvidia.com", "v1alpha1", "dynamographdeployments", "DynamoGraphDeployment")
DCDS = Resource("nvidia.com", "v1alpha1", "dynamocomponentdeployments",
                "DynamoComponentDeployment")
ADAPTERS = Resource("nvidia.com", "v1alpha1", "dynamographdeploymentscalingadapters",
                    "DynamoGraphDeploymentScalingAdapter")
DGDRS = Resource("nvidia.com", "v1alpha1", "dynamographdeploymentrequests",
                 "DynamoGraphDeploymentRequest")
MODELS = Resource("nvidia.com", "v1alpha1", "dynamomodels", "DynamoModel")
GRAPH_LABEL = "nvidia.com/dynamo-graph-deployment-name"
COMPONENT_LABEL = "nvidia.com/dynamo-component"


@dataclass
class SoakConfig:
    """How long, how much, and how often each fault strikes (seconds)."""

    minutes: float = 1.0
    graphs: int = 10
    error_rate: float = 0.05
    watch_drop_every: float = 10.0
    compact_every: float = 15.0
    restart_every: float = 30.0
    kill_every: float = 20.0
    pod_kill_every: float = 10.0
    node_down_every: float = 25.0
    settle: float = 90.0
    idle_window: float = 5.0
    #: Seconds of each leadership term left out of the growth slopes (caches filling).
    growth_warmup: float = 60.0
    growth_sample_every: float = 2.0
    seed: int = 1


@dataclass
class Replica:
    name: str
    proc: asyncio.subprocess.Process
    probes: int
    metrics: int
    killed: bool = False


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def graph(name: str, adapter: bool) -> Json:
    def service(kind: str, replicas: int, scaled: bool = False) -> Json:
        spec: Json = {"componentType": kind, "replicas": replicas,
                      "extraPodSpec": {"mainContainer": {"image": IMAGE}}}
        if scaled:
            spec["scalingAdapter"] = {"enabled": True}
        return spec
    return {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment",
            "metadata": {"name": name, "namespace": NS},
            "spec": {"services": {"Frontend": service("frontend", 1),
                                  "decode": service("worker", 1, adapter)}}}


class Soak:
    """One soak run; `run()` returns its figures."""

    def __init__(self, cluster: LocalCluster, kubeconfig: Path, work: Path,
                 config: SoakConfig) -> None:
        self.cluster = cluster
        self.kubeconfig = kubeconfig
        self.work = work
        self.config = config
        self.rng = random.Random(config.seed)
        self.replicas: list[Replica] = []
        self.names = itertools.count()
        self.retired: set[str] = set()
        self.counts: dict[str, int] = {}
        self.double_writer_windows = 0
        #: Worker rollouts under the faults: generations, isolation, capacity and surge.
        self.rollouts = RolloutWatch()
        self.user_objects: dict[tuple[str, str], str] = {}
        self.kube: KubeClient | None = None
        self.growth = Growth(warmup=config.growth_warmup)
        self.unconverged: list[str] = []
        #: Adapter name -> (the value last written to its /scale, when).
        self.last_scale: dict[str, tuple[int, float]] = {}
        #: Graph name -> when it was last replaced (a replace may rightly undo a scale).
        self.replaced_at: dict[str, float] = {}

    # --- replicas --------------------------------------------------------------------------

    async def start_replica(self) -> Replica:
        name = f"op-{next(self.names)}"
        probes, metrics = _free_port(), _free_port()
        env = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "POD_NAMESPACE")}
        env["POD_NAME"] = name
        with (self.work / f"{name}.log").open("wb") as log:
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "reconcilers.operator", "--kubeconfig",
                str(self.kubeconfig), "--leader-election-namespace", NS, "--log-format", "json",
                # controller-runtime's defaults: a leader starved of CPU on a busy test
                # machine still renews in time; a killed one is replaced within 15 s.
                "--leader-election-lease-duration", "15s",
                "--leader-election-renew-deadline", "10s",
                "--leader-election-retry-period", "2s",
                "--health-probe-bind-address", f"127.0.0.1:{probes}",
                "--metrics-bind-address", f"127.0.0.1:{metrics}", "--metrics-secure=false",
                stdout=asyncio.subprocess.DEVNULL, stderr=log, env=env)
        replica = Replica(name, proc, probes, metrics)
        self.replicas.append(replica)
        return replica

    async def leader(self) -> Replica | None:
        assert self.kube is not None
        try:
            lease = await self.kube.get(LEASES, NS, LEASE)
        except (ApiError, aiohttp.ClientError, OSError):
            return None  # the API server may be down for an injected restart
        holder = str((lease.get("spec") or {}).get("holderIdentity") or "")
        for replica in self.replicas:
            if replica.proc.returncode is None and holder.startswith(replica.name):
                return replica
        return None

    # --- the run ---------------------------------------------------------------------------

    async def run(self) -> Json:
        kube = self.kube = await KubeClient.connect(
            self.kubeconfig, ClientConfig(qps=None, user_agent="soak"), Metrics())
        started = time.monotonic()
        try:
            await install_crds(kube)
            await kube.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace",
                                           "metadata": {"name": NS}})
            await self.plant_user_objects()
            for _ in range(2):
                await self.start_replica()
            deadline = time.monotonic() + self.config.minutes * 60
            rules = [self.cluster.faults.error(503, fraction=self.config.error_rate / 2),
                     self.cluster.faults.error(429, fraction=self.config.error_rate / 2)]
            tasks = [asyncio.create_task(self.churn(deadline)),
                     asyncio.create_task(self.faults(deadline)),
                     asyncio.create_task(self.watch_writers(deadline)),
                     asyncio.create_task(self.watch_rollouts(deadline)),
                     asyncio.create_task(self.sample_growth(deadline))]
            try:
                await asyncio.gather(*tasks)
            finally:
                for rule in rules:
                    self.cluster.faults.remove(rule)
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
            figures = await self.judge()
        finally:
            for replica in self.replicas:
                if replica.proc.returncode is None:
                    replica.proc.send_signal(signal.SIGTERM)
            for replica in self.replicas:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(replica.proc.wait(), 10)
                if replica.proc.returncode is None:
                    replica.proc.kill()
                    await replica.proc.wait()
            await kube.close()
        figures["seconds"] = round(time.monotonic() - started, 1)
        return figures

    async def plant_user_objects(self) -> None:
        """Objects of the user's with our labels: the operator must never touch them."""
        assert self.kube is not None
        labels = {GRAPH_LABEL: "soak-0", COMPONENT_LABEL: "Frontend",
                  "app.kubernetes.io/managed-by": "someone-else"}
        cm = await self.kube.create(CONFIG_MAPS, {
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "user-config", "namespace": NS, "labels": labels},
            "data": {"k": "v"}})
        svc = await self.kube.create(SERVICES, {
            "apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "user-frontend", "namespace": NS, "labels": labels},
            "spec": {"selector": labels, "ports": [{"port": 80}]}})
        for obj in (cm, svc):
            self.user_objects[(obj["kind"], obj["metadata"]["name"])] = (
                obj["metadata"]["resourceVersion"])

    def _count(self, what: str) -> None:
        self.counts[what] = self.counts.get(what, 0) + 1

    async def churn(self, deadline: float) -> None:
        assert self.kube is not None
        kube = self.kube
        live: list[str] = []
        serial = itertools.count()
        while time.monotonic() < deadline:
            await asyncio.sleep(0.3)
            action = self.rng.choices(
                ["create", "env", "scale", "adapter", "restart", "replace", "delete", "request",
                 "model"], weights=[6, 3, 3, 3, 2, 2, 1, 1, 1])[0]
            if action == "create" or not live:
                if len(live) >= self.config.graphs:
                    continue
                name = f"soak-{next(serial)}"
                action = "create"
            else:
                name = self.rng.choice(live)
            try:
                await self._act(kube, action, name, live)
                self._count(action)
            except ApiError as err:
                self._count(f"{action} refused {err.code}")
            except (OSError, TimeoutError, aiohttp.ClientError):
                # An injected API-server restart drops connections mid-request.
                self._count(f"{action} unanswered")

    async def _act(self, kube: KubeClient, action: str, name: str, live: list[str]) -> None:
        if action in ("adapter", "restart", "replace"):
            self.rollouts.disturb(name)  # what is desired, or the pods, change by design
        if action == "create":
            await kube.create(DGDS, graph(name, adapter=self.rng.random() < 0.5))
            live.append(name)
        elif action == "env":
            await kube.patch(DGDS, NS, name, {"spec": {"services": {"decode": {"envs": [
                {"name": "SOAK", "value": str(self.rng.randint(0, 9))}]}}}})
        elif action == "scale":
            await kube.patch(DGDS, NS, name, {"spec": {"services": {"Frontend": {
                "replicas": self.rng.randint(0, 2)}}}})
        elif action == "adapter":
            adapter = f"{name}-decode"
            for _ in range(2):  # back to back: the second must win
                replicas = self.rng.randint(0, 2)
                with contextlib.suppress(ApiError):
                    await kube.patch(ADAPTERS, NS, adapter, {"spec": {"replicas": replicas}},
                                     subresource="scale")
                    self.last_scale[adapter] = (replicas, time.monotonic())
        elif action == "restart":
            await kube.patch(DGDS, NS, name, {"spec": {"restart": {
                "id": f"r{self.rng.randint(0, 10**6)}"}}})
        elif action == "replace":
            obj = await kube.get(DGDS, NS, name)
            meta = obj["metadata"]
            obj["metadata"] = {"name": meta["name"], "namespace": NS,
                               "labels": meta.get("labels") or {}}
            obj.pop("status", None)
            self.replaced_at[name] = time.monotonic()
            await kube.update(DGDS, obj)
        elif action == "delete":
            policy = self.rng.choice(["Foreground", "Background", "Orphan"])
            await kube.delete(DGDS, NS, name, propagation_policy=policy)
            live.remove(name)
            if policy == "Orphan":
                self.retired.add(name)
        elif action == "request":
            await kube.create(DGDRS, {
                "apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeploymentRequest",
                "metadata": {"name": f"req-{self.rng.randint(0, 10**6)}", "namespace": NS},
                "spec": {"model": "Qwen/Qwen3-0.6B", "backend": "vllm", "autoApply": False,
                         "profilingConfig": {"profilerImage": IMAGE, "config": {
                             "sla": {"ttft": 200, "itl": 20}}}}})
        elif action == "model":
            await kube.create(MODELS, {
                "apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoModel",
                "metadata": {"name": f"model-{self.rng.randint(0, 10**6)}", "namespace": NS},
                "spec": {"modelName": "qwen", "baseModelName": "Qwen/Qwen3-0.6B"}})

    async def faults(self, deadline: float) -> None:
        c, faults = self.config, self.cluster.faults
        last = dict.fromkeys(("watch", "compact", "restart", "kill", "pods", "node"),
                             time.monotonic())
        every = {"watch": c.watch_drop_every, "compact": c.compact_every,
                 "restart": c.restart_every, "kill": c.kill_every,
                 "pods": c.pod_kill_every, "node": c.node_down_every}
        while time.monotonic() < deadline:
            await asyncio.sleep(0.25)
            now = time.monotonic()
            due = [k for k, t in last.items() if now - t >= every[k]]
            for kind in due:
                last[kind] = now
                self._count(f"fault {kind}")
                if kind == "watch":
                    faults.close_watches()
                elif kind == "compact":
                    faults.compact()
                elif kind == "restart":
                    await faults.restart_server(down_for=1.0)
                elif kind == "kill":
                    await self._kill_leader()
                elif kind == "pods":
                    pod_graphs = {p["metadata"]["name"]: _graph_of(p) for p in
                                  self.cluster.storage.list_objects(("", "pods"), NS)}
                    pods = sorted(pod_graphs)
                    for pod in self.rng.sample(pods, min(2, len(pods))):
                        self.rollouts.disturb(pod_graphs.get(pod, ""))
                        faults.kill_pods(NS, name=pod)
                elif kind == "node":
                    await self._node_down()

    async def _kill_leader(self) -> None:
        leader = await self.leader()
        if leader is None:
            return
        leader.killed = True
        leader.proc.send_signal(signal.SIGKILL)
        await leader.proc.wait()
        await self.start_replica()

    async def _node_down(self) -> None:
        nodes = [n["metadata"]["name"] for n in self.cluster.storage.list_objects(("", "nodes"),
                                                                                   None)]
        if not nodes:
            return
        node = self.rng.choice(nodes)
        for pod in self.cluster.storage.list_objects(("", "pods"), NS):
            if (pod.get("spec") or {}).get("nodeName") == node:
                self.rollouts.disturb(_graph_of(pod), seconds=5.0)
        self.cluster.faults.set_node_ready(node, False)
        try:
            await asyncio.sleep(5.0)  # the fault loop waits too: one fault at a time
        finally:
            self.cluster.faults.set_node_ready(node, True)

    async def watch_writers(self, deadline: float) -> None:
        """Sample the writes of each replica; a window where two wrote is a double writer."""
        before = self._writes_by_replica()
        while time.monotonic() < deadline:
            await asyncio.sleep(0.5)
            after = self._writes_by_replica()
            writers = [name for name, n in after.items() if n > before.get(name, 0)]
            if len(writers) > 1:
                self.double_writer_windows += 1
            before = after

    async def watch_rollouts(self, deadline: float) -> None:
        """Every half second, each graph and its pods, judged by `RolloutWatch`."""
        assert self.kube is not None
        while time.monotonic() < deadline:
            await asyncio.sleep(0.5)
            try:
                pods = (await self.kube.list(PODS, NS))["items"]
                graphs = {g["metadata"]["name"]: g
                          for g in (await self.kube.list(DGDS, NS))["items"]}
            except (ApiError, TimeoutError, aiohttp.ClientError):
                continue  # an injected fault: the next sample
            by_graph: dict[str, list[Json]] = {}
            for pod in pods:
                graph = ((pod.get("metadata") or {}).get("labels") or {}).get(GRAPH_LABEL)
                if graph:
                    by_graph.setdefault(graph, []).append(pod)
            for graph, items in by_graph.items():
                self.rollouts.sample(graph, graphs.get(graph), items)

    async def sample_growth(self, deadline: float) -> None:
        """Every few seconds: each live replica's RSS, and the leader's queue depth."""
        async with aiohttp.ClientSession() as session:
            while time.monotonic() < deadline:
                leader = await self.leader()
                for replica in list(self.replicas):
                    rss = rss_bytes(replica.proc.pid) if replica.proc.returncode is None else 0
                    if not rss:
                        continue
                    is_leader = replica is leader
                    depth = await queue_depth(session, replica.metrics) if is_leader else None
                    self.growth.add(replica.name, Sample(time.monotonic(), rss, is_leader, depth))
                await asyncio.sleep(self.config.growth_sample_every)

    def _writes_by_replica(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for row in self.cluster.stats.snapshot():
            agent = str(row["userAgent"])
            if row["verb"] not in WRITE_VERBS or "leases" in str(row["resource"]):
                continue
            if not agent.startswith("dynamo-operator") or "(" not in agent:
                continue
            name = agent.rsplit("(", 1)[1].rstrip(")")
            out[name] = out.get(name, 0) + int(str(row["count"]))
        return out

    # --- the verdict -----------------------------------------------------------------------

    async def judge(self) -> Json:
        assert self.kube is not None
        kube = self.kube
        # Faults are off: every replica we did not kill is still running, and a leader leads.
        converged, total = await self._converge(kube)
        dcds = (await kube.list(DCDS, NS))["items"]
        deployments = (await kube.list(DEPLOYMENTS, NS))["items"]
        graphs = (await kube.list(DGDS, NS))["items"]
        adapters = (await kube.list(ADAPTERS, NS))["items"]
        services = (await kube.list(SERVICES, NS))["items"]
        uids = {o["metadata"]["uid"] for o in [*graphs, *dcds, *deployments]}
        checked_scales, lost_scales = self._lost_scales(graphs, adapters)
        duplicates = _duplicates(dcds, lambda o: (_owner(o), (o["metadata"].get("labels") or {})
                                                 .get(COMPONENT_LABEL)))
        duplicates += _duplicates(deployments, _owner)
        orphans = [f"{o['kind']} {o['metadata']['name']}"
                   for o in [*dcds, *deployments, *adapters, *services]
                   if _owner(o) and _owner(o) not in uids]
        touched = []
        for (kind, name), version in self.user_objects.items():
            resource = CONFIG_MAPS if kind == "ConfigMap" else SERVICES
            try:
                live = await kube.get(resource, NS, name)
            except ApiError:
                touched.append(f"{kind} {name} lost")
                continue
            if live["metadata"]["resourceVersion"] != version:
                touched.append(f"{kind} {name} changed")
        self.cluster.stats.reset()
        await asyncio.sleep(self.config.idle_window)
        settled_depth = None
        leader = await self.leader()
        if leader is not None:
            async with aiohttp.ClientSession() as session:
                settled_depth = await queue_depth(session, leader.metrics)
        idle = sum(self._writes_by_replica().values())
        idle_by = sorted({f"{r['verb']} {r['resource']}" for r in self.cluster.stats.snapshot()
                          if r["verb"] in WRITE_VERBS and "leases" not in str(r["resource"])
                          and str(r["userAgent"]).startswith("dynamo-operator")})
        restarts = [r.name for r in self.replicas
                    if r.proc.returncode is not None and not r.killed]
        tracebacks = sum((self.work / f"{r.name}.log").read_text().count('"exception"')
                         for r in self.replicas)
        return {
            "graphs": total, "converged": converged,
            "convergedPercent": round(100.0 * converged / total, 1) if total else 100.0,
            "duplicates": len(duplicates), "orphans": len(orphans),
            "userObjectsTouched": len(touched), "doubleWriterWindows": self.double_writer_windows,
            **self.rollouts.figures(),
            "scalesChecked": checked_scales, "scalesLost": len(lost_scales),
            "unexpectedRestarts": len(restarts),
            "injectedKills": sum(1 for r in self.replicas if r.killed),
            **self.growth.figures(), "queueDepthSettled": settled_depth,
            "idleWrites": idle, "tracebacks": tracebacks,
            "actions": dict(sorted(self.counts.items())),
            "details": {"duplicates": duplicates[:10], "orphans": orphans[:10],
                        "touched": touched, "restarts": restarts, "idleWrites": idle_by,
                        **self.rollouts.details(),
                        "scalesLost": lost_scales[:10],
                        "unconverged": dict(Counter(self.unconverged).most_common(10))},
        }

    def _lost_scales(self, graphs: list[Json], adapters: list[Json]) -> tuple[int, list[str]]:
        """How many adapters were checked, and those not at the value last written to their
        /scale or whose graph is not; a graph replaced since that write may rightly have
        undone it, and is left out."""
        by_name = {g["metadata"]["name"]: g for g in graphs}
        lost, checked = [], 0
        for obj in adapters:
            name = obj["metadata"]["name"]
            graph_name = obj["spec"]["dgdRef"]["name"]
            if name not in self.last_scale or graph_name not in by_name:
                continue
            value, at = self.last_scale[name]
            if self.replaced_at.get(graph_name, -1.0) > at:
                continue
            checked += 1
            services = by_name[graph_name]["spec"].get("services") or {}
            applied = (services.get(obj["spec"]["dgdRef"]["serviceName"]) or {}).get("replicas")
            if obj["spec"]["replicas"] != value or applied != value:
                lost.append(f"{name}: asked {value}, adapter {obj['spec']['replicas']}, "
                            f"graph {applied}")
        return checked, lost

    async def _converge(self, kube: KubeClient) -> tuple[int, int]:
        deadline = time.monotonic() + self.config.settle
        while True:
            graphs = [g for g in (await kube.list(DGDS, NS))["items"]
                      if not g["metadata"].get("deletionTimestamp")]
            done = sum(1 for g in graphs if _converged(g))
            requests = (await kube.list(DGDRS, NS))["items"]
            profiled = all((r.get("status") or {}).get("state") in ("Ready", "Failed")
                           for r in requests)
            if (done == len(graphs) and profiled) or time.monotonic() > deadline:
                self.unconverged = sorted(_why_not(g) for g in graphs if not _converged(g))
                return done, len(graphs)
            await asyncio.sleep(0.5)


def _converged(graph: Json) -> bool:
    status = graph.get("status") or {}
    return bool(status.get("state") == "successful"
                and status.get("observedGeneration") == graph["metadata"].get("generation"))


def _why_not(graph: Json) -> str:
    """What a graph that did not converge says of itself: state, and its Ready condition."""
    status = graph.get("status") or {}
    ready: Json = next((c for c in status.get("conditions") or [] if c.get("type") == "Ready"),
                       {})
    stale = status.get("observedGeneration") != graph["metadata"].get("generation")
    message = str(ready.get("message", ""))[:160]
    return (f"{status.get('state', '-')}{' (stale generation)' if stale else ''}: "
            f"{ready.get('reason', '-')}: {message}")


def _graph_of(pod: Json) -> str:
    return str(((pod.get("metadata") or {}).get("labels") or {}).get(GRAPH_LABEL) or "")


def _owner(obj: Json) -> str:
    for ref in obj["metadata"].get("ownerReferences") or []:
        if ref.get("controller"):
            return str(ref["uid"])
    return ""


def _duplicates(objs: list[Json], key: Any) -> list[str]:
    seen: dict[Any, str] = {}
    out = []
    for obj in objs:
        k = key(obj)
        if not _owner(obj) or (isinstance(k, tuple) and k[1] is None):
            continue
        if k in seen:
            out.append(f"{obj['kind']} {obj['metadata']['name']} and {seen[k]}")
        seen[k] = str(obj["metadata"]["name"])
    return out


def broken(figures: Json) -> list[str]:
    """The invariants a soak must keep, as messages for those it broke."""
    checks = {"convergedPercent": figures["convergedPercent"] == 100.0,
              "duplicates": figures["duplicates"] == 0, "orphans": figures["orphans"] == 0,
              "userObjectsTouched": figures["userObjectsTouched"] == 0,
              "doubleWriterWindows": figures["doubleWriterWindows"] == 0,
              "workerGenerationsMax": figures["workerGenerationsMax"] <= MAX_GENERATIONS,
              "misplacedWorkers": figures["misplacedWorkers"] == 0,
              "rolloutCapacityBreaches": figures["rolloutCapacityBreaches"] == 0,
              "rolloutSurgeBreaches": figures["rolloutSurgeBreaches"] == 0,
              "scalesLost": figures["scalesLost"] == 0,
              "unexpectedRestarts": figures["unexpectedRestarts"] == 0,
              "idleWrites": figures["idleWrites"] == 0,
              "queueDepthSettled": figures["queueDepthSettled"] in (0, None),
              "tracebacks": figures["tracebacks"] == 0}
    return [f"{name} = {figures[name]}" for name, ok in checks.items() if not ok]
