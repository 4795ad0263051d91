"""Drive the latency benchmark: `python -m hack.bench.latency [--graphs 1000] [--samples 100]`.

N three-service graphs (those of `hack.bench.graphs`, the decode worker with a scaling adapter)
are made Ready by the `dynamo-operator` process on the in-process local cluster. Then, one
change at a time, it measures the time from a write until a watch sees its effect:

- scale: a DGDSA `/scale` write (replicas + 1) until the decode Deployment's `spec.replicas`;
- image: a DGD image change of the decode worker until the Deployment's pod template has it;
- their floors, in the same run and interleaved with them: the same change written by a raw
  client straight onto a Deployment nobody owns (its copy in another namespace), so the
  operator's share is the difference.

Each operator path is also timed hop by hop, from watches on DGDs and DCDs beside the one on
Deployments: scale is DGDSA→DGD (the adapter's replicas in the graph's service), DGD→DCD
(in the DCD's spec) and DCD→Deployment; image is write→DGD (the API server alone), DGD→DCD
and DCD→Deployment. Each hop is one reaction of the operator plus one write and its watch
event, which is what the floor measures once. The operator's 409 and failed-`test` answers
during the samples are counted, and the slowest samples are printed with their wall-clock
start, for the operator's log (`--operator-log-level info` or `debug` to get its lines).

This process is the API server and the simulation too: a pause of its event loop holds up
every client at once, the floor included. Its full garbage collections took up to 2 s with
1,000 graphs, so before the samples what it holds is frozen out of the collector's reach and
full collections wait until the samples end (`--server-gc freeze`, the default;
kube-apiserver's collector runs beside the server, not instead of it); its loop
stalls and full collections during the samples are reported and named beside each slow
sample.

p50 and p99 per path and hop, in milliseconds, as a table on stderr. The last line printed
is one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import os
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from api.conversion import convert
from api.conversion.views import read_as
from backends.hub_graph import hub_graph
from backends.worker_generation import worker_dcd_name, worker_hash
from controller.client import ClientConfig, KubeClient
from controller.resource import Resource
from hack.bench import calibration
from hack.bench.checks import ImpossibleFigures, at_least, check, report_and_exit_code
from hack.bench.graphs import __main__ as graphs
from hack.bench.graphs.graph import DCDS_PLURAL, DGDS, GROUP, IMAGE, VERSION, graph, nodes_for
from hack.bench.server_gc import MODES, FullCollections, held_full_collections
from hack.localcluster.request_stats import WRITE_VERBS
from hack.localcluster.server import ClusterConfig, LocalCluster
from hack.localcluster.simulation.config import SimulationConfig

NAMESPACE = graphs.NAMESPACE
FLOOR_NAMESPACE = "bench-latency-floor"
SERVICE = "VllmDecodeWorker"
DEPLOYMENTS = Resource("apps", "v1", "deployments", "Deployment")
ADAPTERS = Resource("nvidia.com", "v1alpha1", "dynamographdeploymentscalingadapters",
                    "DynamoGraphDeploymentScalingAdapter")
DCDS = Resource(GROUP, VERSION, DCDS_PLURAL, "DynamoComponentDeployment")
FLOOR_AGENT = "bench-latency-floor"
PATHS = ("scale", "scale_floor", "image", "image_floor")
#: Per operator path, the hops between stages: (name, from stage or None for the write, to).
HOPS: dict[str, tuple[tuple[str, str | None, str], ...]] = {
    "scale": (("dgdsa_to_dgd", None, "dgd"), ("dgd_to_dcd", "dgd", "dcd"),
              ("dcd_to_deployment", "dcd", "deployment")),
    "image": (("write_to_dgd", None, "dgd"), ("dgd_to_dcd", "dgd", "dcd"),
              ("dcd_to_deployment", "dcd", "deployment")),
}
LOG_LEVELS = ("debug", "info", "warning", "error")
Json = dict[str, Any]
Predicate = Callable[[Json], bool]


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m hack.bench.latency")
    parser.add_argument("--graphs", type=int, default=1000, help="Ready graphs under the operator")
    parser.add_argument("--samples", type=int, default=100,
                        help="changes measured per path (each on its own graph)")
    parser.add_argument("--workers", type=int, default=4,
                        help="--max-concurrent-reconciles of the operator")
    parser.add_argument("--timeout", type=float, default=600.0,
                        help="seconds allowed for all graphs to be Ready")
    parser.add_argument("--sample-timeout", type=float, default=30.0,
                        help="seconds allowed for one change to arrive")
    parser.add_argument("--operator-log-level", choices=LOG_LEVELS, default="warning",
                        help="--log-level of the operator (its log's path is printed)")
    parser.add_argument("--server-gc", choices=MODES, default="freeze",
                        help="freeze: during the samples, this process (the API server and "
                             "the simulation) makes no full garbage collection and what it "
                             "held before is out of the collector's reach, so no collection "
                             "stalls every client for seconds, as kube-apiserver's concurrent "
                             "collector does not")
    parser.add_argument("--slowest", type=int, default=5,
                        help="print this many slowest samples per operator path, hop by hop")
    args = parser.parse_args(argv)
    args.samples = min(args.samples, args.graphs)
    return args


def scaled_graph(name: str) -> Json:
    """The graph benchmark's graph, its decode worker scaled through an adapter; written in
    v1alpha1, sent as v1beta1 (the hub: no webhook call on the paths measured)."""
    obj = read_as(graph(name, NAMESPACE), "v1alpha1")
    obj["spec"]["services"][SERVICE]["scalingAdapter"] = {"enabled": True}
    return convert(obj, VERSION)


def main_image_pointer(graph_obj: Json) -> str:
    """The JSON pointer of the decode worker's main container image in a v1beta1 graph."""
    components = graph_obj["spec"]["components"]
    i = next(n for n, c in enumerate(components) if c.get("name") == SERVICE)
    containers = components[i]["podTemplate"]["spec"]["containers"]
    j = next(n for n, c in enumerate(containers) if c.get("name") == "main")
    return f"/spec/components/{i}/podTemplate/spec/containers/{j}/image"


def _set_pointer(obj: Json, pointer: str, value: Any) -> None:
    *path, last = pointer.strip("/").split("/")
    target: Any = obj
    for part in path:
        target = target[int(part)] if isinstance(target, list) else target[part]
    target[int(last) if isinstance(target, list) else last] = value


def adapter(name: str) -> str:
    """The decode worker's scaling adapter of graph `name`."""
    return f"{name}-{SERVICE.lower()}"


def workload(graph_obj: Json) -> str:
    """The decode worker's DCD and Deployment of a graph as it stands: named after its worker
    generation, so an image change names new ones."""
    hub = hub_graph(graph_obj)
    return worker_dcd_name(hub.name, SERVICE, worker_hash(hub))


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of non-empty `values`."""
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * q // 100))
    return ordered[int(rank) - 1]


class Watch:
    """One cluster-wide watch on a resource; `expect` waits until an object matches."""

    def __init__(self, client: KubeClient, resource: Resource) -> None:
        self.client = client
        self.resource = resource
        self.waiters: dict[tuple[str, str], tuple[Predicate, asyncio.Future[float]]] = {}

    async def run(self, resource_version: str) -> None:
        async with self.client.watch(self.resource, None, resource_version=resource_version,
                                     timeout_seconds=3600, read_timeout=60) as events:
            async for event in events:
                now = time.monotonic()
                obj = event.get("object") or {}
                meta = obj.get("metadata") or {}
                key = (str(meta.get("namespace")), str(meta.get("name")))
                waiter = self.waiters.get(key)
                if waiter is not None and str(obj.get("apiVersion")).startswith("nvidia.com/"):
                    obj = read_as(obj, "v1alpha1")  # the predicates read the v1alpha1 shape
                if waiter is not None and waiter[0](obj) and not waiter[1].done():
                    waiter[1].set_result(now)

    def expect(self, namespace: str, name: str, predicate: Predicate) -> asyncio.Future[float]:
        future: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        self.waiters[(namespace, name)] = (predicate, future)
        return future

    def forget(self, namespace: str, name: str) -> None:
        self.waiters.pop((namespace, name), None)


@dataclass
class Watches:
    """The watches a change is followed through, by stage."""

    by_stage: dict[str, Watch]

    async def start(self, client: KubeClient, tg: asyncio.TaskGroup) -> list[asyncio.Task[None]]:
        tasks = []
        for watch in self.by_stage.values():
            listed = await client.list(watch.resource, None, limit=1)
            tasks.append(tg.create_task(watch.run(listed["metadata"]["resourceVersion"])))
        return tasks


def replicas_are(n: int) -> Predicate:
    return lambda obj: (obj.get("spec") or {}).get("replicas") == n


def service_of(obj: Json) -> Json:
    return ((obj.get("spec") or {}).get("services") or {}).get(SERVICE) or {}


def main_image(spec: Json) -> Any:
    return ((spec.get("extraPodSpec") or {}).get("mainContainer") or {}).get("image")


def graph_replicas_are(n: int) -> Predicate:
    return lambda obj: service_of(obj).get("replicas") == n


def graph_image_is(image: str) -> Predicate:
    return lambda obj: main_image(service_of(obj)) == image


def component_image_is(image: str) -> Predicate:
    return lambda obj: main_image(obj.get("spec") or {}) == image


def image_is(image: str) -> Predicate:
    def match(obj: Json) -> bool:
        pod = ((obj.get("spec") or {}).get("template") or {}).get("spec") or {}
        return any(c.get("image") == image for c in pod.get("containers") or [])
    return match


class Stalls:
    """Pauses of this process, which is the API server and the simulation: event-loop lags
    past `threshold` and full (generation 2) garbage collections, as (wall start, ms)."""

    def __init__(self, threshold: float = 0.05) -> None:
        self.threshold = threshold
        self.lags: list[tuple[float, float]] = []
        self.full = FullCollections()

    @property
    def collections(self) -> list[tuple[float, float]]:
        return self.full.collections

    async def run(self) -> None:
        with self.full:
            while True:
                before = time.monotonic()
                await asyncio.sleep(0.005)
                lag = time.monotonic() - before - 0.005
                if lag > self.threshold:
                    self.lags.append((time.time() - lag, lag * 1000))

    def during(self, start: float, ms: float) -> list[tuple[float, float]]:
        """The lags that overlap [start, start + ms]."""
        end = start + ms / 1000
        return [(at, lag) for at, lag in self.lags if at <= end and at + lag / 1000 >= start]

    def figures(self) -> dict[str, Any]:
        return {"server_loop_stalls": len(self.lags),
                "server_loop_stall_max_ms": round(max((v for _, v in self.lags),
                                                      default=0.0), 1),
                "server_full_gcs": len(self.collections),
                "server_full_gc_max_ms": round(max((v for _, v in self.collections),
                                                   default=0.0), 1)}


@dataclass
class Sample:
    """One change: when it was written, and when each stage was seen (ms after the write)."""

    wall: float
    graph: str
    stages: dict[str, float | None] = field(default_factory=dict)

    @property
    def total(self) -> float | None:
        return self.stages.get("deployment")

    def hop(self, start: str | None, end: str) -> float | None:
        began = 0.0 if start is None else self.stages.get(start)
        ended = self.stages.get(end)
        return None if began is None or ended is None else ended - began


async def timed(watches: Watches, expected: dict[str, tuple[str, str, Predicate]],
                write: Awaitable[Any], limit: float, graph_name: str) -> Sample:
    """Write, then wait until every stage's watch saw its predicate hold: `expected` maps a
    stage to (namespace, name, predicate)."""
    arrivals = {stage: watches.by_stage[stage].expect(ns, name, predicate)
                for stage, (ns, name, predicate) in expected.items()}
    sample = Sample(time.time(), graph_name)
    started = time.monotonic()
    await write
    try:
        async with asyncio.timeout(limit):
            for stage, arrived in arrivals.items():
                sample.stages[stage] = (await arrived - started) * 1000
    except TimeoutError:
        for stage in arrivals:
            sample.stages.setdefault(stage, None)
    finally:
        for stage, (ns, name, _) in expected.items():
            watches.by_stage[stage].forget(ns, name)
    return sample


async def seed(kubeconfig: Path, count: int) -> None:
    await graphs.seed(kubeconfig, 0)  # CRDs and the namespace
    client = await KubeClient.connect(kubeconfig, ClientConfig(qps=None,
                                                               user_agent=graphs.SETUP_AGENT))
    try:
        await client.create(graphs.NAMESPACES, {"metadata": {"name": FLOOR_NAMESPACE}})
        sem = asyncio.Semaphore(16)

        async def one(i: int) -> None:
            async with sem:
                await client.create(DGDS, scaled_graph(f"g{i:05d}"))

        async with asyncio.TaskGroup() as tg:
            for i in range(count):
                tg.create_task(one(i))
    finally:
        await client.close()


async def floor_copies(client: KubeClient, count: int) -> None:
    """Copies, owned by nobody, of the operator's decode Deployments of the first graphs."""
    for i in range(count):
        dep = workload(await client.get(DGDS, NAMESPACE, f"g{i:05d}"))
        live = await client.get(DEPLOYMENTS, NAMESPACE, dep)
        meta = {"name": live["metadata"]["name"], "namespace": FLOOR_NAMESPACE,
                "labels": live["metadata"].get("labels") or {}}
        await client.create(DEPLOYMENTS, {"apiVersion": "apps/v1", "kind": "Deployment",
                                          "metadata": meta, "spec": live["spec"]})


async def measure(args: argparse.Namespace, client: KubeClient, floor: KubeClient,
                  watches: Watches) -> dict[str, list[Sample]]:
    samples: dict[str, list[Sample]] = {path: [] for path in PATHS}
    limit = args.sample_timeout
    for i in range(args.samples):
        name = f"g{i:05d}"
        live_graph = await client.get(DGDS, NAMESPACE, name)
        dep = workload(live_graph)
        image = f"{IMAGE}-latency{i}"
        samples["scale"].append(await timed(watches, {
            "dgd": (NAMESPACE, name, graph_replicas_are(2)),
            "dcd": (NAMESPACE, dep, replicas_are(2)),
            "deployment": (NAMESPACE, dep, replicas_are(2)),
        }, client.patch(ADAPTERS, NAMESPACE, adapter(name), {"spec": {"replicas": 2}},
                        subresource="scale"), limit, name))
        samples["scale_floor"].append(await timed(watches, {
            "deployment": (FLOOR_NAMESPACE, dep, replicas_are(2)),
        }, floor.patch(DEPLOYMENTS, FLOOR_NAMESPACE, dep, {"spec": {"replicas": 2}},
                       subresource="scale"), limit, name))
        live_graph = await client.get(DGDS, NAMESPACE, name)
        pointer = main_image_pointer(live_graph)
        change = [{"op": "replace", "value": image, "path": pointer}]
        # The new image is a new worker generation: its DCD and Deployment are new objects.
        changed = copy.deepcopy(live_graph)
        _set_pointer(changed, pointer, image)
        rolled = workload(changed)
        samples["image"].append(await timed(watches, {
            "dgd": (NAMESPACE, name, graph_image_is(image)),
            "dcd": (NAMESPACE, rolled, component_image_is(image)),
            "deployment": (NAMESPACE, rolled, image_is(image)),
        }, client.patch(DGDS, NAMESPACE, name, change, patch_type="json"), limit, name))
        ops = [{"op": "replace", "path": "/spec/template/spec/containers/0/image",
                "value": image}]
        samples["image_floor"].append(await timed(watches, {
            "deployment": (FLOOR_NAMESPACE, dep, image_is(image)),
        }, floor.patch(DEPLOYMENTS, FLOOR_NAMESPACE, dep, ops, patch_type="json"),
            limit, name))
    return samples


def _quantiles(result: dict[str, Any], prefix: str, values: list[float | None]) -> None:
    seen = [v for v in values if v is not None]
    for q in (50, 99):
        result[f"{prefix}_p{q}_ms"] = round(percentile(seen, q), 1) if seen else None


def figures(samples: dict[str, list[Sample]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for path, values in samples.items():
        totals = [s.total for s in values]
        seen = [v for v in totals if v is not None]
        result[f"{path}_samples"] = len(seen)
        result[f"{path}_timeouts"] = len(values) - len(seen)
        _quantiles(result, path, totals)
    for path, hops in HOPS.items():
        for hop, start, end in hops:
            _quantiles(result, f"{path}_hop_{hop}", [s.hop(start, end) for s in samples[path]])
        # Samples where a later stage was seen before an earlier one: watch streams that
        # deliver out of order, never a change that skipped a stage.
        result[f"{path}_hops_out_of_order"] = sum(
            1 for s in samples[path]
            if any((h := s.hop(start, end)) is not None and h < 0 for _, start, end in hops))
    for path in HOPS:
        for q in (50, 99):
            ours, base = result[f"{path}_p{q}_ms"], result[f"{path}_floor_p{q}_ms"]
            result[f"{path}_operator_share_p{q}_ms"] = (
                round(ours - base, 1) if ours is not None and base is not None else None)
    return result


def table(result: dict[str, Any]) -> str:
    """The figures as a Markdown table: each path, then its hops, then its floor."""
    lines = ["| path / hop | p50 ms | p99 ms |", "|---|---|---|"]

    def row(label: str, prefix: str) -> None:
        lines.append(f"| {label} | {result[f'{prefix}_p50_ms']} | {result[f'{prefix}_p99_ms']} |")

    for path, hops in HOPS.items():
        row(f"{path}: write → Deployment", path)
        for hop, _, _ in hops:
            arrow = hop.replace("_to_", " → ").replace("dgdsa", "DGDSA").replace(
                "dgd", "DGD").replace("dcd", "DCD").replace("deployment", "Deployment")
            row(f"  {path} hop {arrow}", f"{path}_hop_{hop}")
        row(f"{path} floor (raw client → Deployment)", f"{path}_floor")
        row(f"{path} operator share (path - floor)", f"{path}_operator_share")
    return "\n".join(lines)


def slowest(samples: dict[str, list[Sample]], count: int, stalls: Stalls) -> str:
    """The slowest samples of each operator path, hop by hop, with their UTC start and the
    stalls of the API server's process during them."""
    lines = []
    for path, hops in HOPS.items():
        done = [s for s in samples[path] if s.total is not None]
        for s in sorted(done, key=lambda s: s.total or 0.0, reverse=True)[:count]:
            parts = " ".join(f"{hop}={s.hop(start, end):.1f}" for hop, start, end in hops
                             if s.hop(start, end) is not None)
            started = datetime.fromtimestamp(s.wall, UTC).isoformat(timespec="milliseconds")
            lags = " ".join(f"{lag:.0f}" for _, lag in stalls.during(s.wall, s.total or 0.0))
            lines.append(f"slow {path} {s.graph} at {started}: total={s.total:.1f} ms {parts}"
                         + (f" (server stalled ms: {lags})" if lags else ""))
    return "\n".join(lines)


def writes_by(cluster: LocalCluster, agent_suffix: str, resource: str) -> int:
    return sum(int(str(row["count"])) for row in cluster.stats.snapshot()
               if str(row["userAgent"]).endswith(agent_suffix) and row["verb"] in WRITE_VERBS
               and str(row["resource"]).split("/")[0] == resource)  # with /scale


def lost_races(cluster: LocalCluster, agent_suffix: str) -> Counter[str]:
    """The agent's writes answered 409 (a stale read) or 422 (a failed JSON-patch `test`
    among them), by "verb resource code"."""
    counts: Counter[str] = Counter()
    for row in cluster.stats.snapshot():
        if (str(row["userAgent"]).endswith(agent_suffix) and row["verb"] in WRITE_VERBS
                and row["code"] in (409, 422)):
            counts[f"{row['verb']} {row['resource']} {row['code']}"] += int(str(row["count"]))
    return counts


async def run(args: argparse.Namespace) -> dict[str, Any]:
    workdir = Path(tempfile.mkdtemp(prefix="bench-latency-"))
    extra = 3 * args.samples  # scaled workers and floor copies need room too
    sim = SimulationConfig(nodes=nodes_for(args.graphs + extra))
    cluster = LocalCluster(ClusterConfig(simulation=sim, bookmark_interval=5.0))
    await cluster.start()
    try:
        kubeconfig = cluster.write_kubeconfig(workdir / "kubeconfig")
        await seed(kubeconfig, args.graphs)
        env = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "POD_NAMESPACE")}
        env["POD_NAME"] = graphs.RUN_POD
        graph_args = graphs.parse_args(["--workers", str(args.workers)])
        command = graphs.operator_command(graph_args, kubeconfig, args.graphs)
        command[command.index("--log-level") + 1] = args.operator_log_level
        log_path = workdir / "operator.log"
        print(f"latency: the operator's log is {log_path}", file=sys.stderr)
        started = time.monotonic()
        with log_path.open("wb") as log:
            proc = await asyncio.create_subprocess_exec(
                *command, stdout=log,
                stderr=asyncio.subprocess.STDOUT, env={**env, "PYTHONUNBUFFERED": "1"})
        try:
            while graphs.ready_count(cluster) < args.graphs:
                if proc.returncode is not None:
                    raise RuntimeError(f"the operator exited:\n{graphs.log_tail(log_path)}")
                if time.monotonic() - started > args.timeout:
                    raise RuntimeError(f"not all {args.graphs} graphs Ready in {args.timeout} s")
                await asyncio.sleep(0.5)
            ready_seconds = time.monotonic() - started
            return await measure_ready(args, cluster, kubeconfig, ready_seconds)
        finally:
            if proc.returncode is None:
                proc.terminate()
                await proc.wait()
    finally:
        await cluster.stop()


async def sample_all(args: argparse.Namespace, client: KubeClient, floor: KubeClient,
                     ours_suffix: str, cluster: LocalCluster,
                     ) -> tuple[dict[str, list[Sample]], Counter[str], Stalls]:
    watches = Watches({"dgd": Watch(client, DGDS), "dcd": Watch(client, DCDS),
                       "deployment": Watch(client, DEPLOYMENTS)})
    async with asyncio.TaskGroup() as tg:
        tasks = await watches.start(client, tg)
        stalls = Stalls()
        tasks.append(tg.create_task(stalls.run()))
        await asyncio.sleep(0.2)
        races_before = lost_races(cluster, ours_suffix)
        samples = await measure(args, client, floor, watches)
        races = lost_races(cluster, ours_suffix)
        races.subtract(races_before)
        for task in tasks:
            task.cancel()
    return samples, races, stalls


async def measure_ready(args: argparse.Namespace, cluster: LocalCluster, kubeconfig: Path,
                        ready_seconds: float) -> dict[str, Any]:
    client = await KubeClient.connect(kubeconfig, ClientConfig(qps=None, user_agent="bench-user"))
    floor = await KubeClient.connect(kubeconfig, ClientConfig(qps=None, user_agent=FLOOR_AGENT))
    ours_suffix = f"({graphs.RUN_POD})"
    try:
        await floor_copies(client, args.samples)
        # Young collections go on (they are short); with "freeze", full ones wait until the
        # samples end.
        with held_full_collections(args.server_gc):
            samples, races, stalls = await sample_all(args, client, floor, ours_suffix, cluster)
    finally:
        await client.close()
        await floor.close()
    result = {"graphs": args.graphs, "samples": args.samples, "workers": args.workers,
              "server_gc": args.server_gc, "seconds_to_ready": round(ready_seconds, 1),
              **figures(samples)}
    result.update(stalls.figures())
    result["operator_lost_races_during_samples"] = {k: v for k, v in sorted(races.items()) if v}
    ours = writes_by(cluster, ours_suffix, "deployments.apps")
    floors = writes_by(cluster, FLOOR_AGENT, "deployments.apps")
    graph_writes = writes_by(cluster, ours_suffix, f"{DGDS.plural}.{GROUP}")
    result["operator_deployment_writes"] = ours
    result["floor_deployment_writes"] = floors
    result["operator_graph_writes"] = graph_writes
    print(table(result), file=sys.stderr)
    if args.slowest > 0:
        print(slowest(samples, args.slowest, stalls), file=sys.stderr)
    print(f"latency: {json.dumps(result)}", file=sys.stderr)
    n = args.samples
    hop_prefixes = [f"{path}_hop_{hop}" for path, hops in HOPS.items() for hop, _, _ in hops]
    check([at_least(f"{path} changes seen", result[f"{path}_samples"], n) for path in samples]
          + [at_least("operator Deployment writes (creates + changes)", ours,
                      args.graphs * 3 + 2 * n),
             at_least("floor Deployment writes", floors, 2 * n),
             # Each scale sample is one replicas patch of a graph by the operator, besides the
             # status writes that made the graphs Ready.
             at_least("operator DGD writes (status + scales)", graph_writes, args.graphs + n),
             *(at_least(f"{path} p50 ms", result[f"{path}_p50_ms"], 0.001) for path in samples),
             # A change passes its stages in order: a hop's median below zero means the stages
             # were matched to the wrong events.
             *(at_least(f"{prefix} p50 ms", result[f"{prefix}_p50_ms"], 0.0)
               for prefix in hop_prefixes),
             *(at_least(f"{path} samples with every hop", sum(
                 1 for s in samples[path] if all(s.hop(a, b) is not None for _, a, b in hops)), n)
               for path, hops in HOPS.items())])
    return result


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        cal = calibration.checked()
        print(json.dumps(calibration.add_to(asyncio.run(run(args)), cal)))
    except ImpossibleFigures as err:
        return report_and_exit_code(err)
    return 0


if __name__ == "__main__":
    sys.exit(main())
