"""One run of the rollout benchmark: a fresh local cluster, N graphs, an operator process (ours
or the peer's tree), every graph Ready, then every worker image changed at once and sampled
until each graph is done (`sampler.WatchSampler`, fed by watch streams)."""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from controller.client import ClientConfig, KubeClient
from hack.bench.graphs.__main__ import CRDS, NAMESPACES
from hack.bench.server_gc import held_full_collections
from hack.localcluster.request_stats import WRITE_VERBS
from hack.localcluster.server import ClusterConfig, LocalCluster
from hack.localcluster.simulation.config import SimulationConfig
from hack.our_crds import our_crds
from hack.processes import cpu_seconds, free_port

from .graphs import DGDS, NEW_IMAGE, graph, image_patch, nodes_for
from .sampler import WatchSampler, list_tick

NAMESPACE = "bench-rollout"
SETUP_AGENT = "bench-setup"
#: Writes that are not the rollout's: the leader-election lease's renewals.
LEASES = "leases.coordination.k8s.io"


@dataclass
class Options:
    graphs: int
    ready_after: float
    stop_after: float
    timeout: float
    workdir: Path
    #: `--max-concurrent-reconciles` of the operator (both ours and the peer's take it), or
    #: None for its default (one worker per controller, as controller-runtime's).
    workers: int | None = None
    #: The peer's tree (run with PYTHONPATH set to it), or None for this checkout's operator.
    tree: Path | None = None
    #: The in-process server's full collections while the operator runs
    #: (`hack.bench.server_gc`: "freeze" or "default").
    server_gc: str = "default"


@dataclass
class Outcome:
    """What one run measured."""

    sampler: WatchSampler
    #: graph -> seconds (sampler clock) its patch was answered.
    patched_at: dict[str, float]
    #: The operator's writes from the first patch until every graph was done, by
    #: "verb resource" (lease renewals left out).
    writes: Counter[str]
    seconds_to_ready: float
    operator_cpu_seconds: float
    #: Median wall seconds, at rest after the rollouts, of one polling tick (a LIST of the
    #: pods and one of the graphs: what the sampler before the watches did every 100 ms).
    list_tick_seconds: float = 0.0
    names: list[str] = field(default_factory=list)


def _writes(cluster: LocalCluster, pod: str) -> Counter[str]:
    counts: Counter[str] = Counter()
    for row in cluster.stats.snapshot():
        if str(row["userAgent"]).endswith(f"({pod})") and row["verb"] in WRITE_VERBS \
                and row["resource"] != LEASES:
            counts[f"{row['verb']} {row['resource']}"] += int(str(row["count"]))
    return counts


def _ready(cluster: LocalCluster) -> int:
    rt = cluster.registry.get(DGDS.group, DGDS.version, DGDS.plural)
    assert rt is not None
    return sum(1 for obj in cluster.ops.list_objects(rt, NAMESPACE).items
               if (obj.get("status") or {}).get("state") == "successful")


async def _seed(kube: KubeClient, opts: Options, names: list[str]) -> None:
    for crd in our_crds():
        await kube.create(CRDS, crd)
    await kube.create(NAMESPACES, {"metadata": {"name": NAMESPACE}})
    await asyncio.sleep(0.2)  # the CRDs become Established
    for name in names:
        await kube.create(DGDS, graph(name, NAMESPACE, opts.ready_after, opts.stop_after))


def _command(kubeconfig: Path, workers: int | None) -> list[str]:
    extra = ["--max-concurrent-reconciles", str(workers)] if workers is not None else []
    return [sys.executable, "-m", "reconcilers.operator", "--kubeconfig", str(kubeconfig),
            "--leader-election-namespace", NAMESPACE, "--log-format", "json",
            "--log-level", "warning",
            "--health-probe-bind-address", f"127.0.0.1:{free_port()}",
            "--metrics-bind-address", "0", "--kube-api-qps", "0", *extra]


async def _until(what: str, deadline: float, proc: asyncio.subprocess.Process, log: Path,
                 check: Callable[[], bool]) -> None:
    """Poll `check` until true; RuntimeError if the operator exits, TimeoutError at the
    deadline."""
    while not check():
        if proc.returncode is not None:
            tail = await asyncio.to_thread(log.read_text, errors="replace")
            raise RuntimeError(f"the operator exited with {proc.returncode} waiting for "
                               f"{what}:\n{tail[-3000:]}")
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not within the timeout")
        await asyncio.sleep(0.2)


async def run(opts: Options) -> Outcome:
    """One run (see the module); TimeoutError when graphs are not Ready or done in time."""
    names = [f"g{i:04d}" for i in range(opts.graphs)]
    pod = f"bench-rollout-{uuid.uuid4().hex[:8]}"
    cluster = LocalCluster(ClusterConfig(
        simulation=SimulationConfig(nodes=nodes_for(opts.graphs)), bookmark_interval=5.0))
    await cluster.start()
    tag = "peer" if opts.tree else "ours"
    kubeconfig = cluster.write_kubeconfig(opts.workdir / f"kubeconfig-{tag}")
    kube = await KubeClient.connect(kubeconfig, ClientConfig(qps=None, user_agent=SETUP_AGENT))
    log = opts.workdir / f"operator-{tag}.log"
    env = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "POD_NAMESPACE")}
    env.update(POD_NAME=pod, PYTHONUNBUFFERED="1")
    if opts.tree is not None:
        env["PYTHONPATH"] = str(opts.tree)
    try:
        await _seed(kube, opts, names)
        with held_full_collections(opts.server_gc):
            return await _measure(opts, cluster, kube, kubeconfig, env, log, names, pod)
    finally:
        await kube.close()
        await cluster.stop()


async def _measure(opts: Options, cluster: LocalCluster, kube: KubeClient, kubeconfig: Path,
                   env: dict[str, str], log: Path, names: list[str], pod: str) -> Outcome:
    proc: asyncio.subprocess.Process | None = None
    try:
        started = time.monotonic()
        with log.open("wb") as out:
            proc = await asyncio.create_subprocess_exec(
                *_command(kubeconfig, opts.workers), stdout=out,
                stderr=asyncio.subprocess.STDOUT, env=env,
                cwd=str(opts.tree) if opts.tree else None)
        await _until("every graph Ready", started + opts.timeout, proc, log,
                     lambda: _ready(cluster) == opts.graphs)
        seconds_to_ready = time.monotonic() - started
        sampler = WatchSampler(kube, NAMESPACE, names, NEW_IMAGE,
                               phase=None if opts.tree else "Completed")
        await sampler.begin()
        before = _writes(cluster, pod)
        patched: dict[str, float] = {}
        await asyncio.sleep(0.5)  # a few samples before the change
        live = await kube.get(DGDS, NAMESPACE, names[0])
        patch = image_patch(live, NEW_IMAGE)

        async def change(name: str) -> None:
            await kube.patch(DGDS, NAMESPACE, name, patch, patch_type="json")
            patched[name] = sampler.now()
        async with asyncio.TaskGroup() as group:
            for name in names:
                group.create_task(change(name))
        await _until("every rollout done", time.monotonic() + opts.timeout, proc, log,
                     lambda: len(sampler.done_at) == opts.graphs)
        writes = _writes(cluster, pod)
        writes.subtract(before)
        await sampler.stop()
        cpu = cpu_seconds(proc.pid)
        ticks = [await list_tick(kube, NAMESPACE) for _ in range(3)]
        return Outcome(sampler, patched, +writes, seconds_to_ready, cpu,
                       statistics.median(ticks), names)
    finally:
        if proc is not None and proc.returncode is None:
            proc.terminate()
            try:
                await asyncio.wait_for(proc.wait(), 30)
            except TimeoutError:
                proc.kill()
                await proc.wait()


__all__ = ["NAMESPACE", "Options", "Outcome", "run"]
