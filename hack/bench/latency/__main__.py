"""Drive the latency benchmark: `python -m hack.bench.latency [--graphs 1000] [--samples 100]`.

N three-service graphs (those of `hack.bench.graphs`, the decode worker with a scaling adapter)
are made Ready by the `dynamo-operator` process on the in-process local cluster. Then, one
change at a time, it measures the time from a write until a watch on Deployments sees its
effect:

- scale: a DGDSA `/scale` write (replicas + 1) until the decode Deployment's `spec.replicas`;
- image: a DGD image change of the decode worker until the Deployment's pod template has it;
- their floors, in the same run and interleaved with them: the same change written by a raw
  client straight onto a Deployment nobody owns (its copy in another namespace), so the
  operator's share is the difference.

p50 and p99 per path, in milliseconds. The last line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from controller.client import ClientConfig, KubeClient
from controller.resource import Resource
from hack.bench.checks import ImpossibleFigures, at_least, check, report_and_exit_code
from hack.bench.graphs import __main__ as graphs
from hack.bench.graphs.graph import DGDS, IMAGE, graph, nodes_for
from hack.localcluster.request_stats import WRITE_VERBS
from hack.localcluster.server import ClusterConfig, LocalCluster
from hack.localcluster.simulation.config import SimulationConfig

NAMESPACE = graphs.NAMESPACE
FLOOR_NAMESPACE = "bench-latency-floor"
SERVICE = "VllmDecodeWorker"
DEPLOYMENTS = Resource("apps", "v1", "deployments", "Deployment")
ADAPTERS = Resource("nvidia.com", "v1alpha1", "dynamographdeploymentscalingadapters",
                    "DynamoGraphDeploymentScalingAdapter")
FLOOR_AGENT = "bench-latency-floor"
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
    args = parser.parse_args(argv)
    args.samples = min(args.samples, args.graphs)
    return args


def scaled_graph(name: str) -> Json:
    """The graph benchmark's graph, its decode worker scaled through an adapter."""
    obj = graph(name, NAMESPACE)
    obj["spec"]["services"][SERVICE]["scalingAdapter"] = {"enabled": True}
    return obj


def workload(name: str) -> str:
    return f"{name}-{SERVICE.lower()}"


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of non-empty `values`."""
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * q // 100))
    return ordered[int(rank) - 1]


class DeploymentWatch:
    """One cluster-wide watch on Deployments; `arrival` waits until a Deployment matches."""

    def __init__(self, client: KubeClient) -> None:
        self.client = client
        self.waiters: dict[tuple[str, str], tuple[Predicate, asyncio.Future[float]]] = {}

    async def run(self, resource_version: str) -> None:
        async with self.client.watch(DEPLOYMENTS, None, resource_version=resource_version,
                                     timeout_seconds=3600, read_timeout=60) as events:
            async for event in events:
                obj = event.get("object") or {}
                meta = obj.get("metadata") or {}
                key = (str(meta.get("namespace")), str(meta.get("name")))
                waiter = self.waiters.get(key)
                if waiter is not None and waiter[0](obj) and not waiter[1].done():
                    waiter[1].set_result(time.monotonic())

    def expect(self, namespace: str, name: str, predicate: Predicate) -> asyncio.Future[float]:
        future: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        self.waiters[(namespace, name)] = (predicate, future)
        return future


def replicas_are(n: int) -> Predicate:
    return lambda obj: (obj.get("spec") or {}).get("replicas") == n


def image_is(image: str) -> Predicate:
    def match(obj: Json) -> bool:
        pod = ((obj.get("spec") or {}).get("template") or {}).get("spec") or {}
        return any(c.get("image") == image for c in pod.get("containers") or [])
    return match


async def timed(watch: DeploymentWatch, namespace: str, name: str, predicate: Predicate,
                write: Awaitable[Any], limit: float) -> float | None:
    """Milliseconds from just before `write` runs until the watch sees `predicate` hold."""
    arrived = watch.expect(namespace, name, predicate)
    started = time.monotonic()
    await write
    try:
        return (await asyncio.wait_for(arrived, limit) - started) * 1000
    except TimeoutError:
        return None
    finally:
        watch.waiters.pop((namespace, name), None)


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
        live = await client.get(DEPLOYMENTS, NAMESPACE, workload(f"g{i:05d}"))
        meta = {"name": live["metadata"]["name"], "namespace": FLOOR_NAMESPACE,
                "labels": live["metadata"].get("labels") or {}}
        await client.create(DEPLOYMENTS, {"apiVersion": "apps/v1", "kind": "Deployment",
                                          "metadata": meta, "spec": live["spec"]})


async def measure(args: argparse.Namespace, client: KubeClient, floor: KubeClient,
                  watch: DeploymentWatch) -> dict[str, list[float | None]]:
    samples: dict[str, list[float | None]] = {"scale": [], "scale_floor": [], "image": [],
                                              "image_floor": []}
    for i in range(args.samples):
        name = f"g{i:05d}"
        dep = workload(name)
        image = f"{IMAGE}-latency{i}"
        samples["scale"].append(await timed(
            watch, NAMESPACE, dep, replicas_are(2),
            client.patch(ADAPTERS, NAMESPACE, dep, {"spec": {"replicas": 2}},
                                 subresource="scale"), args.sample_timeout))
        samples["scale_floor"].append(await timed(
            watch, FLOOR_NAMESPACE, dep, replicas_are(2),
            floor.patch(DEPLOYMENTS, FLOOR_NAMESPACE, dep, {"spec": {"replicas": 2}},
                                subresource="scale"), args.sample_timeout))
        change = {"spec": {"services": {SERVICE: {"extraPodSpec": {
            "mainContainer": {"image": image}}}}}}
        samples["image"].append(await timed(
            watch, NAMESPACE, dep, image_is(image),
            client.patch(DGDS, NAMESPACE, name, change), args.sample_timeout))
        ops = [{"op": "replace", "path": "/spec/template/spec/containers/0/image",
                "value": image}]
        samples["image_floor"].append(await timed(
            watch, FLOOR_NAMESPACE, dep, image_is(image),
            floor.patch(DEPLOYMENTS, FLOOR_NAMESPACE, dep, ops, patch_type="json"),
            args.sample_timeout))
    return samples


def figures(samples: dict[str, list[float | None]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for path, values in samples.items():
        seen = [v for v in values if v is not None]
        result[f"{path}_samples"] = len(seen)
        result[f"{path}_timeouts"] = len(values) - len(seen)
        for q in (50, 99):
            result[f"{path}_p{q}_ms"] = round(percentile(seen, q), 1) if seen else None
    for path in ("scale", "image"):
        for q in (50, 99):
            ours, base = result[f"{path}_p{q}_ms"], result[f"{path}_floor_p{q}_ms"]
            result[f"{path}_operator_share_p{q}_ms"] = (
                round(ours - base, 1) if ours is not None and base is not None else None)
    return result


def writes_by(cluster: LocalCluster, agent_suffix: str, resource: str) -> int:
    return sum(int(str(row["count"])) for row in cluster.stats.snapshot()
               if str(row["userAgent"]).endswith(agent_suffix) and row["verb"] in WRITE_VERBS
               and str(row["resource"]).split("/")[0] == resource)  # with /scale


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
        log_path = workdir / "operator.log"
        started = time.monotonic()
        with log_path.open("wb") as log:
            proc = await asyncio.create_subprocess_exec(
                *graphs.operator_command(graph_args, kubeconfig, args.graphs), stdout=log,
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


async def measure_ready(args: argparse.Namespace, cluster: LocalCluster, kubeconfig: Path,
                        ready_seconds: float) -> dict[str, Any]:
    client = await KubeClient.connect(kubeconfig, ClientConfig(qps=None, user_agent="bench-user"))
    floor = await KubeClient.connect(kubeconfig, ClientConfig(qps=None, user_agent=FLOOR_AGENT))
    try:
        await floor_copies(client, args.samples)
        watch = DeploymentWatch(client)
        version = (await client.list(DEPLOYMENTS, None, limit=1))["metadata"]["resourceVersion"]
        async with asyncio.TaskGroup() as tg:
            watcher = tg.create_task(watch.run(version))
            await asyncio.sleep(0.2)
            samples = await measure(args, client, floor, watch)
            watcher.cancel()
    finally:
        await client.close()
        await floor.close()
    result = {"graphs": args.graphs, "samples": args.samples, "workers": args.workers,
              "seconds_to_ready": round(ready_seconds, 1), **figures(samples)}
    ours = writes_by(cluster, f"({graphs.RUN_POD})", "deployments.apps")
    floors = writes_by(cluster, FLOOR_AGENT, "deployments.apps")
    result["operator_deployment_writes"] = ours
    result["floor_deployment_writes"] = floors
    print(f"latency: {json.dumps(result)}", file=sys.stderr)
    n = args.samples
    check([at_least(f"{path} changes seen", result[f"{path}_samples"], n) for path in samples]
          + [at_least("operator Deployment writes (creates + changes)", ours,
                      args.graphs * 3 + 2 * n),
             at_least("floor Deployment writes", floors, 2 * n),
             *(at_least(f"{path} p50 ms", result[f"{path}_p50_ms"], 0.001) for path in samples)])
    return result


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        print(json.dumps(asyncio.run(run(args))))
    except ImpossibleFigures as err:
        return report_and_exit_code(err)
    return 0


if __name__ == "__main__":
    sys.exit(main())
