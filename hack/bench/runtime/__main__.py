"""Drive the runtime benchmark: `python -m hack.bench.runtime [--objects N]`.

The API server runs in this process (so its per-user-agent request counts can be read);
each operator runs in its own subprocess against its own namespace holding the same N
Widgets. For each: seconds from spawn until all N ConfigMaps exist, requests per object
(everything the operator sent until then plus a settle period), and peak RSS (VmHWM).
The last line printed is one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
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
from hack.bench.checks import ImpossibleFigures, at_least, check, report_and_exit_code
from hack.localcluster.server import ClusterConfig, LocalCluster
from hack.processes import peak_rss_mib

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


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m hack.bench.runtime")
    parser.add_argument("--objects", "-n", type=int, default=1000, help="Widgets per operator")
    parser.add_argument("--workers", type=int, default=8,
                        help="max concurrent reconciles of our operator")
    parser.add_argument("--qps", type=float, default=0.0,
                        help="our client-side QPS limit (0: none, as kopf has none)")
    parser.add_argument("--settle", type=float, default=2.0,
                        help="seconds to keep counting requests after convergence")
    parser.add_argument("--timeout", type=float, default=600.0,
                        help="give up on an operator after this many seconds")
    parser.add_argument("--skip-kopf", action="store_true", help="run only our operator")
    return parser.parse_args(argv)



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
                       agents: tuple[str, ...], args: argparse.Namespace) -> dict[str, Any]:
    """Spawn one operator, wait until it converged and settled, measure, stop it."""
    count = args.objects
    before = {agent: cluster.stats.count(user_agent=agent) for agent in agents}
    seen_before = {f"{r['verb']} {r['resource']}": int(str(r["count"]))
                   for r in cluster.stats.snapshot() if str(r["userAgent"]).startswith(agents)}
    log_path = args.workdir / f"{name}.log"
    started = time.monotonic()
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
            await asyncio.sleep(0.05)
        seconds = time.monotonic() - started
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
                await asyncio.wait_for(proc.wait(), 15)
            except TimeoutError:
                proc.kill()
                await proc.wait()
    print(f"{name}: {count} objects in {seconds:.2f}s, {requests / count:.2f} requests/object,"
          f" peak RSS {rss:.1f} MiB; {dict(breakdown)}", file=sys.stderr)
    # Each object needs its child created: fewer requests than objects means the requests
    # were not counted, whatever the timing says.
    check([at_least(f"{name} requests", requests, count),
           at_least(f"{name} children created", children_created(cluster, namespace), count),
           at_least(f"{name} peak RSS MiB", rss, 1)])
    return {"seconds": round(seconds, 3), "requests_per_object": round(requests / count, 3),
            "peak_rss_mib": round(rss, 1)}


async def bench(args: argparse.Namespace) -> dict[str, Any]:
    workdir = args.workdir = Path(tempfile.mkdtemp(prefix="bench-runtime-"))
    cluster = LocalCluster(ClusterConfig(bookmark_interval=5.0))
    await cluster.start()
    try:
        kubeconfig = cluster.write_kubeconfig(workdir / "kubeconfig")
        setup = await KubeClient.connect(kubeconfig, ClientConfig(qps=None,
                                                                  user_agent="bench-setup"))
        try:
            await setup.create(CRDS, crd())
            await seed(setup, OURS_NAMESPACE, args.objects)
            if not args.skip_kopf:
                await seed(setup, KOPF_NAMESPACE, args.objects)
        finally:
            await setup.close()
        python = sys.executable
        agent = ours_agent(uuid.uuid4().hex[:8])
        ours = await run_operator(
            cluster, "ours", [python, "-m", "hack.bench.runtime.ours", str(kubeconfig),
                              OURS_NAMESPACE, str(args.workers), str(args.qps), agent],
            OURS_NAMESPACE, (agent,), args)
        kopf: dict[str, Any] = {"seconds": None, "requests_per_object": None,
                                "peak_rss_mib": None}
        if not args.skip_kopf:
            kopf = await run_operator(
                cluster, "kopf", [python, "-m", "hack.bench.runtime.kopf_operator",
                                  str(kubeconfig), KOPF_NAMESPACE],
                KOPF_NAMESPACE, KOPF_AGENTS, args)
    finally:
        await cluster.stop()
    return {"objects": args.objects, "ours_workers": args.workers,
            "ours_qps": args.qps or None,
            "ours_seconds": ours["seconds"], "kopf_seconds": kopf["seconds"],
            "ours_requests_per_object": ours["requests_per_object"],
            "kopf_requests_per_object": kopf["requests_per_object"],
            "ours_peak_rss_mib": ours["peak_rss_mib"], "kopf_peak_rss_mib": kopf["peak_rss_mib"]}


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        result = asyncio.run(bench(args))
    except ImpossibleFigures as err:
        return report_and_exit_code(err)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
