"""What the operator's cache holds per object, by kind: `python -m hack.bench.graphs.cache_sizes
[--graphs 300]`.

Runs the graph benchmark's setup (N graphs made Ready by the `dynamo-operator` process), then
passes every object of each kind the operator caches through the cache's transform for it
(`reconcilers.operator.registry.cache_transforms`, else the default) and sums Python object
sizes (`sys.getsizeof` over dicts, lists and strings; strings shared between objects, as
compacted keys are, counted once). Beside it, the same with only `managedFields` stripped,
each object decoded on its own as a watch event is. Then what the reconcilers keep beside the
cache, per graph and per DCD, for each generation of it (`reconcilers.machinery.spec_views`:
the validation's outcome, the hub models and render inputs), measured by `tracemalloc` while
every object's values are held. The last line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from api.v1alpha1 import DynamoComponentDeployment, DynamoGraphDeployment
from controller.informer import compact_object, strip_managed_fields
from hack.bench import calibration
from hack.bench.checks import ImpossibleFigures, at_least, check, report_and_exit_code
from hack.localcluster.server import ClusterConfig, LocalCluster
from hack.localcluster.simulation.config import SimulationConfig
from hack.processes import peak_rss_mib
from reconcilers.machinery import spec_views
from reconcilers.operator.registry import cache_transforms

from . import __main__ as graphs
from .graph import nodes_for

#: The kinds the operator caches that a graph makes (plural, group).
CACHED = [("dynamographdeployments", "nvidia.com"), ("dynamocomponentdeployments", "nvidia.com"),
          ("deployments", "apps"), ("pods", ""), ("endpointslices", "discovery.k8s.io"),
          ("services", ""), ("roles", "rbac.authorization.k8s.io"),
          ("rolebindings", "rbac.authorization.k8s.io"), ("serviceaccounts", ""),
          ("controllerrevisions", "apps")]
#: What the reconcilers derive from a graph and from a DCD and keep per generation.
DERIVED: dict[str, Any] = {
    "dynamographdeployments.nvidia.com": {
        "validated": lambda o: spec_views.validated(DynamoGraphDeployment, o),
        "graph_of": spec_views.graph_of, "inputs_of": spec_views.inputs_of},
    "dynamocomponentdeployments.nvidia.com": {
        "validated": lambda o: spec_views.validated(DynamoComponentDeployment, o),
        "component_of": spec_views.component_of},
}


def deep_size(obj: Any, seen: set[int]) -> int:
    if id(obj) in seen:
        return 0
    seen.add(id(obj))
    size = sys.getsizeof(obj)
    if isinstance(obj, dict):
        size += sum(deep_size(k, seen) + deep_size(v, seen) for k, v in obj.items())
    elif isinstance(obj, list):
        size += sum(deep_size(v, seen) for v in obj)
    return size


def sizes(cluster: LocalCluster) -> dict[str, Any]:
    transforms = {(r.group, r.plural): t for r, t in cache_transforms().items()}
    rows: dict[str, Any] = {}
    for rt in cluster.registry:
        if (rt.plural, rt.group) not in CACHED:
            continue
        if rt.custom and rt.version != (rt.storage_version or rt.version):
            # The operator watches the hub, the storage version; the other is a view.
            continue
        items = cluster.ops.list_objects(rt, graphs.NAMESPACE).items
        if not items:
            continue
        transform = transforms.get((rt.group, rt.plural), compact_object)
        before = sum(deep_size(strip_managed_fields(json.loads(json.dumps(o))), set())
                     for o in items)
        held = [transform(json.loads(json.dumps(o))) for o in items]
        shared: set[int] = set()
        after = sum(deep_size(o, shared) for o in held)
        rows[f"{rt.plural}.{rt.group}" if rt.group else rt.plural] = {
            "objects": len(items), "kib_per_object_stripped": round(before / len(items) / 1024, 2),
            "kib_per_object_cached": round(after / len(items) / 1024, 2),
            "transform": getattr(transform, "__name__", str(transform))}
        if rows and (kind := list(rows)[-1]) in DERIVED:
            rows[kind]["kib_per_object_derived"] = derived_kib(held, DERIVED[kind])
    return rows


def derived_kib(objects: list[Any], makers: dict[str, Any]) -> dict[str, float]:
    """KiB per object that each value the reconcilers derive and keep takes, all values of
    every object held at once (as the memo holds them), in the order a reconcile makes them."""
    out: dict[str, float] = {}
    kept: list[Any] = []
    for name, make in makers.items():
        # The first call of each also makes what every later one shares (cattrs' generated
        # functions, compiled rules): made here, on a copy under another uid, it is not
        # counted per object.
        spare = json.loads(json.dumps(objects[0]))
        spare["metadata"]["uid"] = "cache-sizes-warm-up"
        make(spare)
        tracemalloc.start()
        try:
            kept.append([make(o) for o in objects])
            out[name] = round(tracemalloc.get_traced_memory()[0] / len(objects) / 1024, 2)
        finally:
            tracemalloc.stop()
    return out


async def run(count: int) -> dict[str, Any]:
    args = graphs.parse_args(["--sizes", str(count)])
    workdir = Path(tempfile.mkdtemp(prefix="bench-cache-"))
    cluster = LocalCluster(ClusterConfig(simulation=SimulationConfig(nodes=nodes_for(count)),
                                         bookmark_interval=5.0))
    await cluster.start()
    try:
        kubeconfig = cluster.write_kubeconfig(workdir / "kubeconfig")
        await graphs.seed(kubeconfig, count)
        env = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "POD_NAMESPACE")}
        env["POD_NAME"] = graphs.RUN_POD
        with (workdir / "operator.log").open("wb") as log:
            proc = await asyncio.create_subprocess_exec(
                *graphs.operator_command(args, kubeconfig, count), stdout=log,
                stderr=asyncio.subprocess.STDOUT, env=env)
        try:
            deadline = time.monotonic() + 600
            while time.monotonic() < deadline:
                if graphs.ready_count(cluster) >= count:
                    break
                await asyncio.sleep(0.5)
            await asyncio.sleep(1.0)
            ready = graphs.ready_count(cluster)
            # Read before measuring: the measure holds this process's event loop (the API
            # server's) long enough at large N for the operator to lose its lease and exit.
            rss = round(peak_rss_mib(proc.pid), 1)
            rows = sizes(cluster)
            result = {"graphs": count, "ready": ready, "operator_peak_rss_mib": rss,
                      "kinds": rows}
        finally:
            proc.terminate()
            await proc.wait()
    finally:
        await cluster.stop()
    check([at_least("graphs Ready", ready, count),
           at_least("kinds measured", len(rows), 5)])
    return result


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hack.bench.graphs.cache_sizes")
    parser.add_argument("--graphs", type=int, default=300)
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    try:
        cal = calibration.checked()
        result = calibration.add_to(asyncio.run(run(args.graphs)), cal)
    except ImpossibleFigures as err:
        return report_and_exit_code(err)
    for kind, row in result["kinds"].items():
        print(f"{kind:45} {row['objects']:6d} {row['kib_per_object_stripped']:8.2f} KiB"
              f" -> {row['kib_per_object_cached']:6.2f} KiB  {row['transform']}"
              + "".join(f"; {name} {kib:.2f} KiB"
                        for name, kib in row.get("kib_per_object_derived", {}).items()))
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
