"""Drive the runtime benchmark: `python -m hack.bench.runtime [--sizes 1000,5000]`.

The API server runs in this process (so its per-user-agent request counts can be read);
each operator runs in its own subprocess against its own namespace holding the same N
Widgets. Each size gets a fresh API server; with `--repeat R` each pair runs R times (a
fresh server each time, the order of the two operators alternating) and the medians are
reported. For each operator: seconds from spawn until all N ConfigMaps exist, requests per
object (everything the operator sent until then plus a settle period), CPU seconds until
then, and peak RSS (VmHWM). One table row per size, then, last, one JSON object with the
figures (`rows`: one per size; the first size's figures are also at the top level).
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
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from controller.client import ClientConfig, KubeClient
from controller.resource import Resource
from hack.bench import calibration
from hack.bench.checks import ImpossibleFigures, at_least, check, report_and_exit_code
from hack.localcluster.server import ClusterConfig, LocalCluster
from hack.processes import cpu_seconds, peak_rss_mib

from .common import (
    GROUP,
    KIND,
    KOPF_AGENTS,
    KOPF_NAMESPACE,
    OURS_NAMESPACE,
    PLURAL,
    VERSION,
    crd,
    ours_agent,
)

CRDS = Resource("apiextensions.k8s.io", "v1", "customresourcedefinitions",
                "CustomResourceDefinition", namespaced=False)
NAMESPACES = Resource("", "v1", "namespaces", "Namespace", namespaced=False)
WIDGETS = Resource(GROUP, VERSION, PLURAL, KIND)
FIGURES = ("seconds", "requests_per_object", "cpu_seconds", "server_cpu_seconds",
           "peak_rss_mib")


def _sizes(text: str) -> list[int]:
    sizes = [int(part) for part in text.split(",") if part.strip()]
    if not sizes or min(sizes) < 1:
        raise argparse.ArgumentTypeError(f"sizes must be positive integers, not {text!r}")
    return sizes


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m hack.bench.runtime")
    parser.add_argument("--sizes", type=_sizes, default=[1000, 5000],
                        help="Widgets per operator, comma-separated; one row each")
    parser.add_argument("--objects", "-n", type=int, default=None,
                        help="one size only (the same as --sizes N)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="runs of each size; the medians are reported")
    parser.add_argument("--workers", type=int, default=8,
                        help="max concurrent reconciles of our operator")
    parser.add_argument("--qps", type=float, default=0.0,
                        help="our client-side QPS limit (0: none, as kopf has none)")
    parser.add_argument("--burst", type=int, default=0,
                        help="our client-side burst (0: 1.5 x QPS)")
    parser.add_argument("--settle", type=float, default=2.0,
                        help="seconds to keep counting requests after convergence")
    parser.add_argument("--timeout", type=float, default=600.0,
                        help="give up on an operator after this many seconds")
    parser.add_argument("--skip-kopf", action="store_true", help="run only our operator")
    parser.add_argument("--profile", type=Path, default=None,
                        help="directory for a cProfile of our operator per run"
                             " (ours-N-R.prof; slows it down)")
    args = parser.parse_args(argv)
    if args.objects is not None:
        args.sizes = [args.objects]
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    return args


def children_created(cluster: LocalCluster, namespace: str) -> int:
    """ConfigMaps successfully created in the namespace, from the server's request counts
    (polling them costs the server nothing it would count; nobody else creates there)."""
    return sum(int(str(row["count"])) for row in cluster.stats.snapshot()
               if row["verb"] == "create" and row["resource"] == "configmaps"
               and row["namespace"] == namespace and row["code"] == 201)


async def seed(client: KubeClient, namespace: str, count: int) -> None:
    await client.create(NAMESPACES, {"metadata": {"name": namespace}})
    sem = asyncio.Semaphore(32)

    async def one(i: int) -> None:
        async with sem:
            await client.create(WIDGETS, {
                "apiVersion": f"{GROUP}/{VERSION}", "kind": KIND,
                "metadata": {"name": f"w{i:05d}", "namespace": namespace},
                "spec": {"size": i}})

    async with asyncio.TaskGroup() as tg:
        for i in range(count):
            tg.create_task(one(i))


async def run_operator(cluster: LocalCluster, name: str, command: list[str], namespace: str,
                       agents: tuple[str, ...], count: int,
                       args: argparse.Namespace) -> dict[str, Any]:
    """Spawn one operator, wait until it converged and settled, measure, stop it."""
    before = {agent: cluster.stats.count(user_agent=agent) for agent in agents}
    seen_before = {f"{r['verb']} {r['resource']}": int(str(r["count"]))
                   for r in cluster.stats.snapshot() if str(r["userAgent"]).startswith(agents)}
    log_path = args.workdir / f"{name}-{count}.log"
    started = time.monotonic()
    server_started = time.process_time()
    with log_path.open("wb") as log:
        proc = await asyncio.create_subprocess_exec(
            *command, stdout=log, stderr=asyncio.subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        while children_created(cluster, namespace) < count:
            if proc.returncode is not None:
                tail = log_path.read_text(errors="replace")[-3000:]
                raise RuntimeError(f"{name} exited with {proc.returncode}:\n{tail}")
            if time.monotonic() - started > args.timeout:
                raise TimeoutError(f"{name} did not converge in {args.timeout}s")
            await asyncio.sleep(0.02)
        seconds = time.monotonic() - started
        # This process is the API server: its CPU until convergence is what serving the
        # operator cost (plus a little polling), the bound when the operator is not busy.
        server_cpu = time.process_time() - server_started
        cpu = cpu_seconds(proc.pid)
        await asyncio.sleep(args.settle)
        requests = sum(cluster.stats.count(user_agent=a) - before[a] for a in agents)
        rss = peak_rss_mib(proc.pid)
        breakdown: Counter[str] = Counter()
        for row in cluster.stats.snapshot():
            if str(row["userAgent"]).startswith(agents):
                breakdown[f"{row['verb']} {row['resource']}"] += int(str(row["count"]))
        breakdown.subtract(seen_before)
    finally:
        if proc.returncode is None:
            proc.terminate()
            try:
                await asyncio.wait_for(proc.wait(), 30)
            except TimeoutError:
                proc.kill()
                await proc.wait()
    print(f"{name}: {count} objects in {seconds:.2f}s ({cpu:.2f} CPU s, server"
          f" {server_cpu:.2f} CPU s),"
          f" {requests / count:.2f} requests/object, peak RSS {rss:.1f} MiB;"
          f" {dict(+breakdown)}", file=sys.stderr)
    # Each object needs its child created: fewer requests than objects means the requests
    # were not counted, whatever the timing says; no time or no CPU means nothing ran.
    check([at_least(f"{name} requests", requests, count),
           at_least(f"{name} children created", children_created(cluster, namespace), count),
           at_least(f"{name} seconds", seconds, 1e-3),
           at_least(f"{name} CPU seconds", cpu, 1e-3),
           at_least(f"{name} peak RSS MiB", rss, 1)])
    return {"seconds": seconds, "requests_per_object": requests / count,
            "cpu_seconds": cpu, "server_cpu_seconds": server_cpu, "peak_rss_mib": rss}


async def one_run(args: argparse.Namespace, count: int, run: int) -> dict[str, dict[str, Any]]:
    """Both operators against one fresh API server holding `count` Widgets for each."""
    cluster = LocalCluster(ClusterConfig(bookmark_interval=5.0,
                                         history_limit=max(20_000, 6 * count)))
    await cluster.start()
    try:
        kubeconfig = cluster.write_kubeconfig(args.workdir / f"kubeconfig-{count}-{run}")
        setup = await KubeClient.connect(kubeconfig, ClientConfig(qps=None,
                                                                  user_agent="bench-setup"))
        try:
            await setup.create(CRDS, crd())
            await seed(setup, OURS_NAMESPACE, count)
            if not args.skip_kopf:
                await seed(setup, KOPF_NAMESPACE, count)
        finally:
            await setup.close()
        python = sys.executable
        agent = ours_agent(uuid.uuid4().hex[:8])
        profile = ([str(args.profile / f"ours-{count}-{run}.prof")]
                   if args.profile is not None else [])
        burst = args.burst or max(1, int(args.qps * 1.5))
        ours_cmd = [python, "-m", "hack.bench.runtime.ours", str(kubeconfig), OURS_NAMESPACE,
                    str(args.workers), str(args.qps), agent, str(burst), *profile]
        kopf_cmd = [python, "-m", "hack.bench.runtime.kopf_operator", str(kubeconfig),
                    KOPF_NAMESPACE]
        results: dict[str, dict[str, Any]] = {}
        order = ["ours", "kopf"] if run % 2 == 0 else ["kopf", "ours"]
        for name in order:
            if name == "ours":
                results[name] = await run_operator(cluster, "ours", ours_cmd, OURS_NAMESPACE,
                                                   (agent,), count, args)
            elif not args.skip_kopf:
                results[name] = await run_operator(cluster, "kopf", kopf_cmd, KOPF_NAMESPACE,
                                                   KOPF_AGENTS, count, args)
        return results
    finally:
        await cluster.stop()


def _median(runs: list[dict[str, dict[str, Any]]], side: str, figure: str) -> float | None:
    values = [r[side][figure] for r in runs if side in r]
    return statistics.median(values) if values else None


def _rounded(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


async def bench(args: argparse.Namespace) -> list[dict[str, Any]]:
    args.workdir = Path(tempfile.mkdtemp(prefix="bench-runtime-"))
    if args.profile is not None:
        args.profile.mkdir(parents=True, exist_ok=True)
    rows = []
    for count in args.sizes:
        runs = [await one_run(args, count, run) for run in range(args.repeat)]
        row: dict[str, Any] = {"objects": count, "runs": args.repeat,
                               "ours_workers": args.workers, "ours_qps": args.qps or None}
        for figure in FIGURES:
            for side in ("ours", "kopf"):
                row[f"{side}_{figure}"] = _rounded(_median(runs, side, figure), 3)
        ours, kopf = row["ours_seconds"], row["kopf_seconds"]
        row["speedup"] = round(kopf / ours, 2) if ours and kopf else None
        rows.append(row)
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    def cell(value: Any, fmt: str) -> str:
        return "-" if value is None else format(value, fmt)

    lines = [f"{'N':>6} {'ours s':>8} {'kopf s':>8} {'speedup':>8} {'ours req/obj':>13}"
             f" {'kopf req/obj':>13} {'ours CPU s':>11} {'kopf CPU s':>11}"
             f" {'ours srv CPU':>13} {'kopf srv CPU':>13}"
             f" {'ours RSS MiB':>13} {'kopf RSS MiB':>13}"]
    for r in rows:
        lines.append(
            f"{r['objects']:>6} {cell(r['ours_seconds'], '.2f'):>8}"
            f" {cell(r['kopf_seconds'], '.2f'):>8} {cell(r['speedup'], '.2f'):>8}"
            f" {cell(r['ours_requests_per_object'], '.3f'):>13}"
            f" {cell(r['kopf_requests_per_object'], '.3f'):>13}"
            f" {cell(r['ours_cpu_seconds'], '.2f'):>11} {cell(r['kopf_cpu_seconds'], '.2f'):>11}"
            f" {cell(r['ours_server_cpu_seconds'], '.2f'):>13}"
            f" {cell(r['kopf_server_cpu_seconds'], '.2f'):>13}"
            f" {cell(r['ours_peak_rss_mib'], '.1f'):>13}"
            f" {cell(r['kopf_peak_rss_mib'], '.1f'):>13}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        cal = calibration.checked()
        rows = [calibration.add_to(row, cal, ("ours_cpu_seconds", "kopf_cpu_seconds"))
                for row in asyncio.run(bench(args))]
    except ImpossibleFigures as err:
        return report_and_exit_code(err)
    print(table(rows))
    print(json.dumps({**rows[0], "rows": rows}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
