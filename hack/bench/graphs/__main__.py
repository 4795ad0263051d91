"""Drive the graph benchmark: `python -m hack.bench.graphs [--sizes 100,300,1000] [--repeat 1]`.

For each N a fresh local cluster (simulation on, short delays, nodes with room for every pod)
runs in this process, N three-service DGDs are created, and then the `dynamo-operator`
process is started against it. Figures per N: seconds from the operator's start until every
DGD is Ready; writes per graph the operator made (by its user agent) until then, against the
minimum (one create per child object plus one status write per DGD and DCD), with a
breakdown by verb and resource and the status writes per object of each kind; events per graph
against the issue's bound (one per child created plus one per state transition of the DGD:
pending, then successful); writes per minute while idle after that; the operator's peak
RSS (VmHWM); the watch events the operator was sent per graph, with their bytes, by
resource (what it had to decode); and its reconciles per graph, by controller (its /metrics).
Beside them, per N, the floor (`hack.bench.graphs.floor`, planned by
`hack.bench.graphs.recording`): on a second fresh cluster with the same N graphs, a client with
no reconcile logic, cache or validation makes the same lists and watches (decoded as the
operator decodes them) and the same successful writes, with the bodies the operator sent, as
the local server recorded them in the operator's run. Its CPU until every graph is Ready (its
plan's loading left out) is `floor_cpu_seconds`, and the operator's CPU over it
`operator_cpu_over_floor`; the run fails when the floor's writes differ from the operator's
in count, kind or success, or it watched other resources. The machine's speed is measured in
the same run (`hack.bench.calibration`), and CPU per graph is also given in multiples of it.
The last line printed is one JSON object with the figures.

With `--v1alpha1-watcher` (`hack.bench.graphs.v1alpha1_watcher`), each run's operator is also
the conversion webhook of our CRDs, and each size runs twice per repeat, in alternating order:
with no other reader, and with a user holding a v1alpha1 LIST and WATCH of all graphs; the
figures are the operator's CPU per graph in each, the share the user adds, and the conversion
reviews the operator served (no floor in this mode).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import aiohttp
from prometheus_client.parser import text_string_to_metric_families

from controller.client import ClientConfig, KubeClient
from controller.resource import Resource
from hack.bench import calibration
from hack.bench.checks import ImpossibleFigures, at_least, check, report_and_exit_code
from hack.bench.server_gc import MODES, held_full_collections
from hack.localcluster.request_stats import WRITE_VERBS
from hack.localcluster.server import ClusterConfig, LocalCluster
from hack.localcluster.simulation.config import SimulationConfig
from hack.our_crds import our_crds
from hack.processes import cpu_seconds, free_port, peak_rss_mib

from .graph import DCDS_PLURAL, DGDS, GROUP, NOT_CHILDREN, VERSION, graph, minimum_writes, nodes_for
from .recording import Recorder, plan
from .status_watch import StatusWatch
from .v1alpha1_watcher import OperatorWebhook, V1alpha1Watcher, compared, conversion_reviews

ROOT = Path(__file__).resolve().parents[3]
CRDS = Resource("apiextensions.k8s.io", "v1", "customresourcedefinitions",
                "CustomResourceDefinition", namespaced=False)
NAMESPACES = Resource("", "v1", "namespaces", "Namespace", namespaced=False)
DCDS = Resource(GROUP, VERSION, DCDS_PLURAL, "DynamoComponentDeployment")
NAMESPACE = "bench-graphs"
#: The operator's pod name for this run: its user agent ends in "(<pod>)", and only requests
#: carrying it are counted, so a renamed product cannot make its writes vanish from the count.
RUN_POD = f"bench-graphs-{uuid.uuid4().hex[:8]}"
SETUP_AGENT = "bench-setup"
#: The floor's pod name, for its user agent, as RUN_POD for the operator's.
FLOOR_POD = f"bench-floor-{uuid.uuid4().hex[:8]}"


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m hack.bench.graphs")
    parser.add_argument("--sizes", default="100,300,1000",
                        help="comma-separated graph counts, one run each")
    parser.add_argument("--steady", type=float, default=30.0,
                        help="seconds over which idle writes are counted after all are Ready")
    parser.add_argument("--settle", type=float, default=2.0,
                        help="seconds after all are Ready still counted as convergence")
    parser.add_argument("--workers", type=int, default=4,
                        help="--max-concurrent-reconciles of the operator")
    parser.add_argument("--qps", type=float, default=0.0,
                        help="--kube-api-qps of the operator (0: no limit)")
    parser.add_argument("--timeout", type=float, default=480.0,
                        help="stop waiting for one size after this many seconds and report"
                             " how many graphs were Ready by then")
    parser.add_argument("--repeat", type=int, default=1,
                        help="runs per size, each on a fresh cluster; the figures of time,"
                             " CPU and memory are their medians")
    parser.add_argument("--no-floor", dest="floor", action="store_false",
                        help="skip the floor (no floor_* figures)")
    parser.add_argument("--v1alpha1-watcher", action="store_true",
                        help="the operator serves the CRDs' conversion webhook; per size and"
                             " repeat, one run with no other reader and one with a user's"
                             " v1alpha1 LIST + WATCH of all graphs, in alternating order;"
                             " reports the CPU the user adds (no floor)")
    parser.add_argument("--server-gc", choices=MODES, default="default",
                        help="freeze: while the operator (or the floor) runs, the local "
                             "server in this process makes no full garbage collection, which "
                             "at 10,000 graphs stops it for seconds (hack.bench.server_gc); "
                             "default: the collector as it is")
    parser.add_argument("--profile", type=Path, default=None,
                        help="run the operator under cProfile, writing DIR/graphs-N.prof")
    args = parser.parse_args(argv)
    args.size_list = [int(s) for s in args.sizes.split(",") if s.strip()]
    return args




def log_tail(path: Path) -> str:
    return path.read_text(errors="replace")[-3000:]



def _ours(row: dict[str, Any], pod: str = RUN_POD) -> bool:
    return str(row["userAgent"]).endswith(f"({pod})")


def operator_writes(cluster: LocalCluster, pod: str = RUN_POD,
                    succeeded: bool = False) -> Counter[str]:
    """The operator's (or the floor's) writes so far, by "verb resource" (`succeeded`: only
    those answered 2xx)."""
    counts: Counter[str] = Counter()
    for row in cluster.stats.snapshot():
        if _ours(row, pod) and row["verb"] in WRITE_VERBS and (
                not succeeded or int(str(row["code"])) < 300):
            counts[f"{row['verb']} {row['resource']}"] += int(str(row["count"]))
    return counts


def created_resources(cluster: LocalCluster) -> set[str]:
    """Resources (plural[.group]) the operator created at least one object of."""
    return {str(row["resource"]) for row in cluster.stats.snapshot()
            if _ours(row) and row["verb"] == "create"
            and row["code"] == 201 and row["resource"] not in NOT_CHILDREN}


def live_count(cluster: LocalCluster, resource: str, owned: bool = False) -> int:
    """Objects of the resource in the namespace (owned: only those with an owner, which
    leaves out e.g. the namespace's default ServiceAccount)."""
    plural, _, group = resource.partition(".")
    for rt in cluster.registry:
        if rt.plural == plural and rt.group == group:
            return sum(1 for obj in cluster.ops.list_objects(rt, NAMESPACE).items
                       if not owned or obj["metadata"].get("ownerReferences"))
    return 0


def ready_count(cluster: LocalCluster) -> int:
    rt = cluster.registry.get(GROUP, VERSION, DGDS.plural)
    assert rt is not None
    return sum(1 for obj in cluster.ops.list_objects(rt, NAMESPACE).items
               if (obj.get("status") or {}).get("state") == "successful")


def event_writes(counts: Counter[str]) -> int:
    """Event writes (core and events.k8s.io, created or patched into a series)."""
    return sum(n for key, n in counts.items()
               if key.split(" ", 1)[1] in ("events", "events.events.k8s.io"))


def status_writes_per_object(counts: Counter[str], objects: dict[str, int]) -> dict[str, float]:
    """Status writes per object of each kind that reports a status (resource -> count)."""
    per: dict[str, float] = {}
    for resource, count in sorted(objects.items()):
        writes = sum(n for key, n in counts.items()
                     if key.split(" ", 1)[1] == f"{resource}/status")
        per[resource] = round(writes / count, 3) if count else 0.0
    return per


def writes_only(counts: Counter[str], keep: bool) -> int:
    """Writes to children and status (keep=True) or to events and leases (keep=False)."""
    return sum(n for key, n in counts.items()
               if (key.split(" ", 1)[1] not in NOT_CHILDREN) == keep)


async def seed(kubeconfig: Path, count: int, crds: list[dict[str, Any]] | None = None) -> None:
    client = await KubeClient.connect(kubeconfig, ClientConfig(qps=None, user_agent=SETUP_AGENT))
    try:
        for crd in our_crds() if crds is None else crds:
            await client.create(CRDS, crd)
        await client.create(NAMESPACES, {"metadata": {"name": NAMESPACE}})
        await asyncio.sleep(0.2)  # CRDs become Established
        sem = asyncio.Semaphore(16)

        async def one(i: int) -> None:
            async with sem:
                await client.create(DGDS, graph(f"g{i:05d}", NAMESPACE))

        async with asyncio.TaskGroup() as tg:
            for i in range(count):
                tg.create_task(one(i))
    finally:
        await client.close()


async def reconciles(metrics_port: int) -> dict[str, float]:
    """Reconciles so far by controller, from the operator's /metrics."""
    async with aiohttp.ClientSession() as session, session.get(
            f"http://127.0.0.1:{metrics_port}/metrics",
            timeout=aiohttp.ClientTimeout(total=10)) as response:
        text = await response.text()
    counts: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        if family.name == "controller_runtime_reconcile":
            for sample in family.samples:
                if sample.name.endswith("_total"):
                    name = sample.labels["controller"]
                    counts[name] = counts.get(name, 0.0) + sample.value
    return counts


def operator_command(args: argparse.Namespace, kubeconfig: Path, size: int,
                     metrics_port: int | None = None,
                     webhook: OperatorWebhook | None = None) -> list[str]:
    python = [sys.executable]
    if args.profile is not None:
        args.profile.mkdir(parents=True, exist_ok=True)
        python += ["-m", "cProfile", "-o", str(args.profile / f"graphs-{size}.prof")]
    return [*python, "-m", "reconcilers.operator", "--kubeconfig", str(kubeconfig),
            "--leader-election-namespace", NAMESPACE, "--log-format", "json",
            "--log-level", "warning",
            "--health-probe-bind-address", f"127.0.0.1:{free_port()}",
            "--metrics-bind-address", f"127.0.0.1:{metrics_port or free_port()}",
            "--metrics-secure=false",
            "--max-concurrent-reconciles", str(args.workers),
            "--kube-api-qps", str(args.qps), *(webhook.flags() if webhook else [])]


def fresh_cluster(size: int) -> LocalCluster:
    sim = SimulationConfig(nodes=nodes_for(size))
    return LocalCluster(ClusterConfig(simulation=sim, bookmark_interval=5.0))


def uids_of(cluster: LocalCluster, resources: set[str]) -> dict[str, tuple[str, str]]:
    """uid -> (kind, name) of the namespace's objects of some resources (plural[.group])."""
    out: dict[str, tuple[str, str]] = {}
    for rt in cluster.registry:
        if f"{rt.plural}.{rt.group}".rstrip(".") in resources:
            for obj in cluster.ops.list_objects(rt, NAMESPACE).items:
                out[obj["metadata"]["uid"]] = (rt.kind, obj["metadata"]["name"])
    return out


async def run_size(args: argparse.Namespace, size: int, workdir: Path,
                   webhook: OperatorWebhook | None = None,
                   v1alpha1_watcher: bool = False) -> tuple[dict[str, Any], dict[str, Any]]:
    """The operator's figures for one size, and the floor's plan made from its requests.
    With `webhook`, the operator is also our CRDs' conversion webhook; with
    `v1alpha1_watcher`, a user lists and watches the graphs in v1alpha1 meanwhile."""
    cluster = fresh_cluster(size)
    recorder = Recorder(cluster, f"({RUN_POD})")
    await cluster.start()
    try:
        kubeconfig = cluster.write_kubeconfig(workdir / f"kubeconfig-{size}")
        await seed(kubeconfig, size, webhook.crds() if webhook else None)
        watcher = await KubeClient.connect(kubeconfig,
                                           ClientConfig(qps=None, user_agent=SETUP_AGENT))
        statuses = StatusWatch(watcher, NAMESPACE, [DGDS, DCDS])
        await statuses.start()
        env = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "POD_NAMESPACE")}
        env["POD_NAME"] = RUN_POD
        log_path = workdir / f"operator-{size}.log"
        metrics_port = free_port()
        started = time.monotonic()
        server_cpu_before = cpu_seconds(os.getpid())
        with log_path.open("wb") as log:
            proc = await asyncio.create_subprocess_exec(
                *operator_command(args, kubeconfig, size, metrics_port, webhook), stdout=log,
                stderr=asyncio.subprocess.STDOUT, env={**env, "PYTHONUNBUFFERED": "1"})
        user = V1alpha1Watcher(watcher, NAMESPACE) if v1alpha1_watcher else None

        async def at_ready() -> dict[str, Any]:
            """The conversion figures when every graph is Ready (with a webhook)."""
            if webhook is None:
                return {}
            if user is not None and user.failure() is not None:
                raise RuntimeError(f"the v1alpha1 watcher failed: {user.failure()!r}")
            reviews = await conversion_reviews(metrics_port)
            return {"v1alpha1_watcher": user is not None,
                    "conversion_reviews": reviews["success"],
                    "conversion_review_failures": reviews["failure"],
                    "watcher_listed": user.listed if user else 0,
                    "watcher_relists": user.relists if user else 0,
                    "watcher_relisted": user.relisted if user else 0,
                    "watcher_events": user.events if user else 0,
                    "watcher_other_versions": user.other_versions if user else 0,
                    "watcher_list_seconds": user.list_seconds if user else 0.0}
        try:
            if user is not None:
                await user.start()
            with held_full_collections(args.server_gc) as full:
                result = await measure(args, cluster, proc, size, started, log_path,
                                       server_cpu_before, statuses, metrics_port, recorder,
                                       at_ready)
            result.update(server_gc=args.server_gc, **full.figures())
            written = created_resources(cluster) | {f"{DGDS.plural}.{GROUP}"}
            graphs = [f"g{i:05d}" for i in range(size)]
            return result, plan(recorder.records, graphs, uids_of(cluster, written),
                                json.loads)
        finally:
            if user is not None:
                await user.stop()
            await statuses.stop()
            await watcher.close()
            if proc.returncode is None:
                proc.terminate()
                try:
                    await asyncio.wait_for(proc.wait(), 30)
                except TimeoutError:
                    proc.kill()
                    await proc.wait()
    finally:
        await cluster.stop()


async def measure(args: argparse.Namespace, cluster: LocalCluster,
                  proc: asyncio.subprocess.Process, size: int, started: float,
                  log_path: Path, server_cpu_before: float,
                  statuses: StatusWatch, metrics_port: int,
                  recorder: Recorder,
                  at_ready: Callable[[], Awaitable[dict[str, Any]]] | None = None
                  ) -> dict[str, Any]:
    ready = 0
    while ready < size:
        if proc.returncode is not None:
            tail = log_tail(log_path)
            raise RuntimeError(f"the operator exited with {proc.returncode}:\n{tail}")
        if time.monotonic() - started > args.timeout:
            break  # a finding, not a failure: the figures say how far it got
        await asyncio.sleep(0.5)
        ready = ready_count(cluster)
    seconds = time.monotonic() - started
    operator_cpu = cpu_seconds(proc.pid)
    server_cpu = cpu_seconds(os.getpid()) - server_cpu_before
    extra = await at_ready() if at_ready is not None else {}
    recorder.stop()  # the floor's plan: what the operator did for that CPU
    watched_to_ready = cluster.stats.watch_sent(user_agent=f"({RUN_POD})")
    await asyncio.sleep(args.settle)
    converge = operator_writes(cluster)
    reconciled = await reconciles(metrics_port)
    children = Counter({r: live_count(cluster, r, owned=True) for r in created_resources(cluster)})
    reporting = {r: live_count(cluster, r)
                 for r in (f"{DGDS.plural}.{GROUP}", f"{DCDS_PLURAL}.{GROUP}")}
    status_objects = sum(reporting.values())
    minimum = minimum_writes(children, status_objects, size)
    # The bound on events: one per child created, one per DGD state transition
    # (none -> pending -> successful).
    events_bound = minimum["creates"] + 2
    per_object = statuses.figures()
    await asyncio.sleep(args.steady)
    steady = operator_writes(cluster)
    steady.subtract(converge)
    steady_total = sum(steady.values())
    rss = peak_rss_mib(proc.pid)
    watched = cluster.stats.watch_sent(user_agent=f"({RUN_POD})")
    result = {
        "graphs": size, "ready": ready,
        "seconds_to_ready": round(seconds, 2) if ready == size else None,
        "graphs_per_second": round(ready / seconds, 2),
        "writes_per_graph": round(writes_only(converge, True) / size, 3),
        "event_and_lease_writes_per_graph": round(writes_only(converge, False) / size, 3),
        "events_per_graph": round(event_writes(converge) / size, 3),
        "events_bound_per_graph": round(events_bound, 3),
        "status_writes_per_object": status_writes_per_object(converge, reporting),
        "status_writes_by_object": per_object,
        "minimum_writes_per_graph": minimum["total"], "minimum": minimum,
        "steady_writes_per_minute": round(steady_total * 60 / args.steady, 1),
        "steady_child_writes_per_minute": round(writes_only(steady, True) * 60 / args.steady, 1),
        "operator_peak_rss_mib": round(rss, 1),
        "operator_cpu_seconds_to_ready": round(operator_cpu, 2),
        "server_cpu_seconds_to_ready": round(server_cpu, 1),
        "server_process_peak_rss_mib": round(peak_rss_mib(os.getpid()), 1),
        "writes_breakdown_per_graph": {k: round(v / size, 3) for k, v in sorted(converge.items())},
        "reconciles_per_graph": round(sum(reconciled.values()) / size, 2),
        "reconciles_by_controller_per_graph": {c: round(n / size, 2)
                                               for c, n in sorted(reconciled.items()) if n},
        # What the operator had to decode, until the end of the steady window.
        "watch_events_per_graph": round(sum(w.events for w in watched.values()) / size, 2),
        "watch_kib_per_graph": round(sum(w.bytes for w in watched.values()) / 1024 / size, 1),
        "watch_events_to_ready_per_graph": round(
            sum(w.events for w in watched_to_ready.values()) / size, 2),
        "watch_events_by_resource_per_graph": {
            r: [round(w.events / size, 2), round(w.bytes / 1024 / size, 1)]
            for r, w in sorted(watched.items()) if w.events},
        "steady_breakdown": {k: v for k, v in sorted(steady.items()) if v},
        **extra,
    }
    print(f"N={size}: {json.dumps(result)}", file=sys.stderr)
    # Every Ready graph was built by writes we must have counted.
    check([at_least("graphs Ready", ready, 1),
           at_least("watch events per graph", result["watch_events_per_graph"],
                    1.0 if ready else 0.0),
           at_least("reconciles per graph", result["reconciles_per_graph"],
                    1.0 if ready else 0.0),
           at_least("writes per graph", result["writes_per_graph"],
                    minimum["total"] * ready / size)])
    return result


async def run_floor(args: argparse.Namespace, size: int, workdir: Path,
                    floor_plan: dict[str, Any]) -> dict[str, Any]:
    """The floor for one size: a fresh cluster with the same graphs, the floor process
    replaying the plan, its CPU until every graph is Ready."""
    plan_path = workdir / f"floor-plan-{size}.json"
    plan_path.write_text(json.dumps(floor_plan, separators=(",", ":")))
    cluster = fresh_cluster(size)
    await cluster.start()
    try:
        kubeconfig = cluster.write_kubeconfig(workdir / f"kubeconfig-floor-{size}")
        await seed(kubeconfig, size)
        out_path, log_path = workdir / f"floor-{size}.out", workdir / f"floor-{size}.log"
        env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
        started = time.monotonic()
        with out_path.open("wb") as out, log_path.open("wb") as log:
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "hack.bench.graphs.floor", "--plan", str(plan_path),
                "--kubeconfig", str(kubeconfig), "--user-agent", f"bench-floor ({FLOOR_POD})",
                "--concurrency", str(2 * args.workers), stdout=out, stderr=log,
                env={**env, "PYTHONUNBUFFERED": "1"})
        try:
            ready = 0
            with held_full_collections(args.server_gc):
                while ready < size and time.monotonic() - started < args.timeout:
                    if proc.returncode is not None:
                        raise RuntimeError(f"the floor exited with {proc.returncode}:\n"
                                           f"{log_tail(log_path)}")
                    await asyncio.sleep(0.5)
                    ready = ready_count(cluster)
            seconds = time.monotonic() - started
            cpu = cpu_seconds(proc.pid)
            watched = cluster.stats.watch_sent(user_agent=f"({FLOOR_POD})")
            # Its writes once the plan is through (an Event may follow the last status).
            await asyncio.sleep(args.settle)
            writes = operator_writes(cluster, FLOOR_POD, succeeded=True)
        finally:
            if proc.returncode is None:
                proc.terminate()
                try:
                    await asyncio.wait_for(proc.wait(), 30)
                except TimeoutError:
                    proc.kill()
                    await proc.wait()
        lines = out_path.read_text().splitlines()
        setup = next(float(line.split()[1]) for line in lines
                     if line.startswith("setup_cpu_seconds "))
        summary = json.loads(lines[-1]) if lines and lines[-1].startswith("{") else {}
    finally:
        await cluster.stop()
    return {"ready": ready, "seconds_to_ready": round(seconds, 2) if ready == size else None,
            "cpu_seconds": cpu - setup, "setup_cpu_seconds": round(setup, 3),
            "writes": writes, "summary": summary,
            "watch_events_per_graph": round(sum(w.events for w in watched.values()) / size, 2),
            "watch_kib_per_graph": round(sum(w.bytes for w in watched.values()) / 1024 / size,
                                         1),
            "watched": {r for r, w in watched.items() if w.events}}


def with_floor(result: dict[str, Any], floor: dict[str, Any], floor_plan: dict[str, Any],
               cal: dict[str, Any]) -> dict[str, Any]:
    """The size's figures with the floor's beside them; fails on a floor that did not do
    the operator's work (or did more of it)."""
    size = result["graphs"]
    operator_cpu = float(result["operator_cpu_seconds_to_ready"])
    planned: dict[str, int] = floor_plan["writes"]
    done = {key: floor["writes"].get(key, 0) for key in planned}
    extra = {key: n for key, n in floor["writes"].items()
             if key not in planned and key.split(" ", 1)[1] not in NOT_CHILDREN}
    operator_watched = {w["resource"] for w in floor_plan["watches"] if w["watch_query"]}
    result = {**result,
              "floor_cpu_seconds": round(floor["cpu_seconds"], 2),
              "operator_cpu_over_floor": round(operator_cpu / floor["cpu_seconds"], 2)
              if floor["cpu_seconds"] > 0 else None,
              "floor_seconds_to_ready": floor["seconds_to_ready"],
              "floor_setup_cpu_seconds": floor["setup_cpu_seconds"],
              "floor_writes_per_graph": round(sum(done.values()) / size, 3),
              "floor_writes_breakdown_per_graph": {k: round(v / size, 3)
                                                   for k, v in sorted(floor["writes"].items())},
              "operator_writes_to_ready_per_graph": round(sum(planned.values()) / size, 3),
              "operator_writes_to_ready_breakdown_per_graph": {
                  k: round(v / size, 3) for k, v in sorted(planned.items())},
              "floor_watch_events_per_graph": floor["watch_events_per_graph"],
              "floor_watch_kib_per_graph": floor["watch_kib_per_graph"],
              "floor_failed_requests": floor["summary"].get("failed"),
              "floor_unresolved_uids": floor["summary"].get("unresolved_uids"),
              "operator_cpu_per_graph_in_calibrations": calibration.in_calibrations(
                  operator_cpu / size, cal),
              "floor_cpu_per_graph_in_calibrations": calibration.in_calibrations(
                  floor["cpu_seconds"] / size, cal)}
    print(f"N={size} floor: {json.dumps({k: v for k, v in result.items() if 'floor' in k})}",
          file=sys.stderr)
    check([at_least("floor graphs Ready", floor["ready"], result["ready"]),
           at_least("floor CPU seconds", floor["cpu_seconds"], 1e-3),
           None if done == planned else
           f"the floor's successful writes {done} are not the operator's {planned}",
           None if not extra else f"the floor wrote what the operator did not: {extra}",
           None if not floor["summary"].get("failed") else
           f"the floor's requests failed: {floor['summary'].get('failures')}",
           None if not floor["summary"].get("unresolved_uids") else
           f"the floor sent {floor['summary']['unresolved_uids']} uids of the old cluster",
           None if floor["watched"] <= operator_watched else
           f"the floor watched {sorted(floor['watched'] - operator_watched)}, the operator not",
           at_least("floor watch events per graph", floor["watch_events_per_graph"],
                    1.0 if result["ready"] else 0.0)])
    return result


def table(results: list[dict[str, Any]]) -> str:
    rows = [("graphs", "graphs"), ("seconds until all Ready", "seconds_to_ready"),
            ("graphs Ready (per second)", "rate"),
            ("operator writes per graph (children + status)", "writes_per_graph"),
            ("minimum writes per graph", "minimum_writes_per_graph"),
            ("event + lease writes per graph", "event_and_lease_writes_per_graph"),
            ("events per graph (bound: creates + 2 transitions)", "events"),
            ("idle writes per minute (all / children + status)", "steady"),
            ("operator peak RSS, MiB", "operator_peak_rss_mib"),
            ("operator CPU seconds until all Ready", "operator_cpu_seconds_to_ready"),
            ("floor CPU seconds until all Ready (same writes and watches)", "floor_cpu_seconds"),
            ("operator CPU over the floor's", "operator_cpu_over_floor"),
            ("operator CPU per graph in calibrations", "operator_cpu_per_graph_in_calibrations"),
            ("watch events (KiB) the operator decoded per graph", "watched"),
            ("reconciles per graph", "reconciles_per_graph"),
            ("server + simulation CPU seconds until then", "server_cpu_seconds_to_ready")]
    lines = ["| figure | " + " | ".join(f"N={r['graphs']}" for r in results) + " |",
             "|---|" + "---|" * len(results)]
    for label, key in rows[1:]:
        if key == "rate":
            cells = [f"{r['ready']} ({r['graphs_per_second']})" for r in results]
        elif key == "events":
            cells = [f"{r['events_per_graph']} ({r['events_bound_per_graph']})"
                     for r in results]
        elif key == "watched":
            cells = [f"{r['watch_events_per_graph']} ({r['watch_kib_per_graph']})"
                     for r in results]
        elif key == "steady":
            cells = [f"{r['steady_writes_per_minute']} / {r['steady_child_writes_per_minute']}"
                     for r in results]
        else:
            cells = [str(r.get(key)) for r in results]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    kinds = sorted({k for r in results for k in r["writes_breakdown_per_graph"]})
    lines += ["", "| writes per graph, by verb and resource | "
              + " | ".join(f"N={r['graphs']}" for r in results) + " |",
              "|---|" + "---|" * len(results)]
    for kind in kinds:
        cells = [str(r["writes_breakdown_per_graph"].get(kind, 0)) for r in results]
        lines.append(f"| {kind} | " + " | ".join(cells) + " |")
    watched = [r["watch_events_by_resource_per_graph"] for r in results]
    for resource in sorted({k for w in watched for k in w}):
        cells = ["{} ({} KiB)".format(*w.get(resource, [0, 0])) for w in watched]
        lines.append(f"| watch events of {resource} per graph | " + " | ".join(cells) + " |")
    for resource in sorted({k for r in results for k in r["status_writes_per_object"]}):
        cells = [str(r["status_writes_per_object"].get(resource, 0)) for r in results]
        lines.append(f"| status writes per {resource} object | " + " | ".join(cells) + " |")
    for kind in sorted({k for r in results for k in r["status_writes_by_object"]}):
        cells = [json.dumps(r["status_writes_by_object"].get(kind, {})) for r in results]
        lines.append(f"| {kind}: objects by status writes, >1 intermediate | "
                     + " | ".join(cells) + " |")
    return "\n".join(lines)


#: Figures the machine's speed moves from run to run: with --repeat, their medians.
VARYING = ("seconds_to_ready", "graphs_per_second", "operator_peak_rss_mib",
           "operator_cpu_seconds_to_ready", "server_cpu_seconds_to_ready",
           "floor_cpu_seconds", "operator_cpu_over_floor", "floor_seconds_to_ready",
           "operator_cpu_per_graph_in_calibrations", "floor_cpu_per_graph_in_calibrations")


def median_of(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """One size's result from several runs: the run of median CPU, with the median of each
    varying figure, and every run's varying figures under "runs"."""
    ordered = sorted(runs, key=lambda r: float(r["operator_cpu_seconds_to_ready"]))
    result = dict(ordered[len(ordered) // 2])
    for key in VARYING:
        if key not in result:
            continue
        values = [r.get(key) for r in runs]
        result[key] = None if None in values else statistics.median(
            float(v) for v in values if v is not None)
    if len(runs) > 1:
        result["runs"] = [{key: r[key] for key in VARYING if key in r} for r in runs]
    return result


async def watcher_pairs(args: argparse.Namespace, size: int, workdir: Path,
                        cal: dict[str, Any]) -> dict[str, Any]:
    """One size with and without a v1alpha1 watcher, `--repeat` times each, alternating which
    runs first, the operator being the conversion webhook in both."""
    alone: list[dict[str, Any]] = []
    watched: list[dict[str, Any]] = []
    order = 0
    for repeat in range(max(1, args.repeat)):
        for with_watcher in ((False, True) if repeat % 2 == 0 else (True, False)):
            webhook = OperatorWebhook(workdir / f"webhook-certs-{size}-{order}")
            result, _ = await run_size(args, size, workdir, webhook, with_watcher)
            result["order"] = order
            order += 1
            (watched if with_watcher else alone).append(result)
    return compared(size, alone, watched, cal)


async def bench(args: argparse.Namespace) -> dict[str, Any]:
    cal = calibration.measure()
    check(calibration.problems(cal))
    workdir = Path(tempfile.mkdtemp(prefix="bench-graphs-"))
    if args.v1alpha1_watcher:
        pairs = [await watcher_pairs(args, size, workdir, cal) for size in args.size_list]
        for pair in pairs:
            print(f"N={pair['graphs']} v1alpha1 watcher: {json.dumps(pair)}", file=sys.stderr)
        return {"workers": args.workers, "qps": args.qps or None,
                "mode": "v1alpha1-watcher", **cal, "results": pairs}
    results = []
    for size in args.size_list:
        runs = []
        for _ in range(max(1, args.repeat)):
            result, floor_plan = await run_size(args, size, workdir)
            if args.floor:
                floor = await run_floor(args, size, workdir, floor_plan)
                result = with_floor(result, floor, floor_plan, cal)
            else:
                result["operator_cpu_per_graph_in_calibrations"] = calibration.in_calibrations(
                    float(result["operator_cpu_seconds_to_ready"]) / size, cal)
            runs.append(result)
        results.append(median_of(runs))
    print(table(results))
    return {"workers": args.workers, "qps": args.qps or None, "steady_seconds": args.steady,
            "peer": "floor" if args.floor else None, **cal, "results": results}


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        print(json.dumps(asyncio.run(bench(args))))
    except ImpossibleFigures as err:
        return report_and_exit_code(err)
    return 0


if __name__ == "__main__":
    sys.exit(main())
