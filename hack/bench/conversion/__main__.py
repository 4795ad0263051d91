"""A LIST of graphs in the version they are not stored in: `python -m hack.bench.conversion`.

Puts N DynamoGraphDeployments (the v1beta1 vllm-agg example, renamed) into the local API server
(in this process) with our CRDs as generated (the DGD stored as `v1beta1`, the original's
storage version) and converted by the operator's conversion webhook, served by a
`dynamo-operator` process of its own (`webhook_operator`: `--enable-webhooks`, restricted to an
empty namespace so that it reconciles nothing). It then lists them in `v1alpha1` (one
ConversionReview per object, one after the other, as kube-apiserver 1.20 decodes a LIST read
from etcd) and, as the floor in the same run, in `v1beta1` (no conversion), each `--repeat`
times. A second floor, in the same run and interleaved: the same v1alpha1 list through a
webhook process that converts nothing (`floor_webhook`: the operator's server and handler, a
converter that only rewrites apiVersion), which the CRD is pointed at for it and back. It
reports the medians and, per review: its round trip as the API server sees it
(p50/p99), the operator's handler time (mean, and p50/p99 from its
`conversion_webhook_duration_seconds` histogram), and `api.conversion.convert` alone on the
same objects in this process (p50/p99). This process, the API server, holds every graph: a
full garbage collection of it costs a LIST a tenth of a second or more, so by default what it
holds is frozen out of the collector's reach before the lists and full collections wait until
they end (`--server-gc freeze`, as `hack.bench.latency` does; the full collections during the
lists are counted either way). The goal from issue #26: the v1alpha1 LIST of 1,000 graphs
under 1 s. The last line printed is one JSON object with the figures. With `--cluster real`
the same run goes against the real kube-apiserver 1.20 of `hack.realcluster` instead
(`hack.bench.conversion.real`; its figures carry `"cluster": "real-1.20"`, these `"local"`).

It fails when a figure is impossible: a list that misses graphs or answers another version,
a v1alpha1 list that did not call the webhook once per graph, a v1beta1 list that called it,
or an operator that handled another number of reviews than the lists made.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from controller.client import ClientConfig, KubeClient
from hack.bench import calibration
from hack.bench.checks import ImpossibleFigures, check, report_and_exit_code
from hack.bench.conversion import real
from hack.bench.conversion.listing import (
    ALPHA,
    BETA,
    GOAL_GRAPHS,
    GOAL_SECONDS,
    percentile,
    point_at,
    pure_conversions,
    seed,
    served,
    timed_list,
    wrong,
)
from hack.bench.conversion.webhook_operator import FloorWebhook, WebhookOperator
from hack.bench.server_gc import MODES, held_full_collections
from hack.localcluster.server import LocalCluster
from hack.localcluster.testing import running_cluster

Json = dict[str, Any]


async def run(graphs: int, repeat: int, server_gc: str = "freeze") -> Json:
    with tempfile.TemporaryDirectory(prefix="bench-conversion-") as tmp:
        workdir = Path(tmp)
        operator = WebhookOperator(workdir)
        async with running_cluster(workdir) as cluster:
            kubeconfig = workdir / "kubeconfig"
            kube = await KubeClient.connect(kubeconfig,
                                            ClientConfig(qps=None, user_agent="bench"))
            try:
                await seed(kube, operator, graphs)
                await operator.start(kubeconfig)
                await point_at(kube, operator.port)  # its port, if it had to take another
                try:
                    # Young collections go on (they are short); with "freeze", full ones
                    # wait until the lists end.
                    with held_full_collections(server_gc) as full:
                        figures = await measure(kube, cluster, operator, graphs, repeat)
                    figures["server_gc"] = server_gc
                    figures.update(full.figures())
                    return figures
                finally:
                    await operator.stop()
            finally:
                await kube.close()


class ConvertedLists:
    """The v1alpha1 lists through one webhook process: seconds, review round trips, and CPU
    seconds of this process (the API server) and of the webhook's."""

    def __init__(self, name: str, cpu_of: Callable[[], float]) -> None:
        self.name = name
        self.cpu_of = cpu_of
        self.seconds: list[float] = []
        self.reviews: list[float] = []
        self.server_cpu: list[float] = []
        self.webhook_cpu: list[float] = []

    async def list(self, kube: KubeClient, reviews: list[float], graphs: int) -> list[str | None]:
        """One list; the problems it shows."""
        reviews.clear()
        cpu, theirs = time.process_time(), self.cpu_of()
        seconds, items = await timed_list(kube, ALPHA)
        self.server_cpu.append(time.process_time() - cpu)
        self.webhook_cpu.append(self.cpu_of() - theirs)
        self.seconds.append(seconds)
        self.reviews += reviews
        problems = [wrong(items, graphs, "nvidia.com/v1alpha1")]
        if len(reviews) != graphs:
            problems.append(f"a v1alpha1 list of {graphs} through the {self.name} called the "
                            f"webhook {len(reviews)} times")
        return problems


async def measure(kube: KubeClient, cluster: LocalCluster, operator: WebhookOperator,
                  graphs: int, repeat: int) -> Json:
    await served(kube, ALPHA)  # the operator's webhook answers
    floor = await FloorWebhook.start(operator.cert_dir)
    try:
        return await _measure(kube, cluster, operator, floor, graphs, repeat)
    finally:
        await floor.stop()


async def _measure(kube: KubeClient, cluster: LocalCluster, operator: WebhookOperator,
                   floor: FloorWebhook, graphs: int, repeat: int) -> Json:
    reviews: list[float] = []
    conversions = cluster.api.conversions
    conversions.review_seconds = reviews
    problems: list[str | None] = []
    beta_times: list[float] = []
    beta_cpu: list[float] = []
    ours = ConvertedLists("operator", operator.cpu_seconds)
    bare = ConvertedLists("floor webhook", floor.cpu_seconds)
    handler_before = await operator.handler_times()
    for _ in range(repeat):
        reviews.clear()
        cpu = time.process_time()
        seconds, items = await timed_list(kube, BETA)
        beta_cpu.append(time.process_time() - cpu)
        beta_times.append(seconds)
        problems.append(wrong(items, graphs, "nvidia.com/v1beta1"))
        if reviews:
            problems.append(f"a v1beta1 list called the webhook {len(reviews)} times")
        problems += await ours.list(kube, reviews, graphs)
        await point_at(kube, floor.port)
        problems += await bare.list(kube, reviews, graphs)
        await point_at(kube, operator.port)
    conversions.review_seconds = None
    handler = (await operator.handler_times()).since(handler_before)
    if handler.count != graphs * repeat:
        problems.append(f"the operator handled {handler.count:.0f} reviews, not "
                        f"{graphs * repeat}")
    converts = await pure_conversions(kube)
    check(problems)
    alpha, beta = statistics.median(ours.seconds), statistics.median(beta_times)
    figures = {
        "graphs": graphs, "repeat": repeat,
        "list_v1alpha1_seconds": round(alpha, 4),
        "list_v1beta1_seconds_floor": round(beta, 4),
        "list_v1alpha1_seconds_floor_webhook": round(statistics.median(bare.seconds), 4),
        "conversion_seconds": round(alpha - beta, 4),
        "webhook_review_ms_p50": round(1000 * percentile(ours.reviews, 0.50), 3),
        "webhook_review_ms_p99": round(1000 * percentile(ours.reviews, 0.99), 3),
        "floor_webhook_review_ms_p50": round(1000 * percentile(bare.reviews, 0.50), 3),
        "floor_webhook_review_ms_p99": round(1000 * percentile(bare.reviews, 0.99), 3),
        "handler_ms_mean": round(1000 * handler.total / handler.count, 3)
        if handler.count else 0.0,
        "handler_ms_p50": round(1000 * handler.quantile(0.50), 3),
        "handler_ms_p99": round(1000 * handler.quantile(0.99), 3),
        "convert_ms_p50": round(1000 * percentile(converts, 0.50), 3),
        "convert_ms_p99": round(1000 * percentile(converts, 0.99), 3),
        # CPU seconds of each list (medians): this process (the API server and the listing
        # client) and the webhook's; a LIST that waits on one review at a time takes at
        # least the sum of the two.
        "server_cpu_seconds_v1alpha1": round(statistics.median(ours.server_cpu), 3),
        "server_cpu_seconds_v1beta1_floor": round(statistics.median(beta_cpu), 3),
        "operator_cpu_seconds_v1alpha1": round(statistics.median(ours.webhook_cpu), 3),
        "server_cpu_seconds_floor_webhook": round(statistics.median(bare.server_cpu), 3),
        "floor_webhook_cpu_seconds": round(statistics.median(bare.webhook_cpu), 3),
    }
    if graphs >= GOAL_GRAPHS:
        figures["goal_list_under_1s"] = alpha * GOAL_GRAPHS / graphs < GOAL_SECONDS
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hack.bench.conversion",
                                     description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--graphs", type=int, default=GOAL_GRAPHS)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--server-gc", choices=MODES, default="freeze",
                        help="freeze: during the lists, this process (the API server) makes "
                             "no full garbage collection and what it held before is out of "
                             "the collector's reach (kube-apiserver's concurrent collector "
                             "does not stop a LIST for a collection of the whole heap)")
    parser.add_argument("--cluster", choices=("local", "real"), default="local",
                        help="local: the local API server in this process; real: the real "
                             "kube-apiserver 1.20 of hack.realcluster (built first unless "
                             "cached), see hack.bench.conversion.real")
    args = parser.parse_args(argv)
    try:
        cal = calibration.checked()
        if args.cluster == "real":
            measured = real.run(args.graphs, args.repeat)
        else:
            measured = {"cluster": "local",
                        **asyncio.run(run(args.graphs, args.repeat, args.server_gc))}
        figures = calibration.add_to(measured, cal,
            ("operator_cpu_seconds_v1alpha1", "floor_webhook_cpu_seconds",
             "server_cpu_seconds_v1alpha1"))
    except ImpossibleFigures as err:
        return report_and_exit_code(err)
    for key, value in figures.items():
        print(f"{key}: {value}")
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
