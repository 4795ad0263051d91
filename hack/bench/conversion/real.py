"""The conversion benchmark against a real kube-apiserver: `python -m hack.bench.conversion
--cluster real`.

The same run as on the local API server, against the v1.20.2 control plane of
`hack.realcluster` (etcd, kube-apiserver, kube-controller-manager, kube-scheduler as processes of
their own, started as its tests start them: `running_control_plane`, the binaries built first
unless cached): our CRDs created with their conversion webhook at a `dynamo-operator` process's
`/convert` (`webhook_operator`), N graphs created as `v1beta1`, then, `--repeat` times, the
`v1beta1` LIST (the floor: no conversion), the `v1alpha1` LIST through the operator and, with the
CRD pointed at it, the same LIST through the floor webhook (`floor_webhook`, with its metrics
served to count its reviews). After each re-pointing the run waits (a GET in `v1alpha1` at a
time) until kube-apiserver has built the CRD's storage anew and its `v1alpha1` watch cache has
converted every graph through the webhook now named, one review each, in the background: then
only the timed LIST reviews.

What is measured differs from the local run where the real server is not ours to instrument:
the reviews a LIST makes are counted by the webhooks' own metrics
(`conversion_webhook_requests_total`, `conversion_webhook_objects_total`) and by
kube-apiserver's `apiserver_crd_webhook_conversion_duration_seconds`, whose buckets also give
the round trip as the API server sees it (p50/p99 interpolated in buckets of 1, 2, 4 ... ms;
its mean is exact); the server's CPU is kube-apiserver's process (etcd's and this listing
process's beside it); a Go server has no full collections to hold off.

It fails when a figure is impossible: a list that misses graphs or answers another version, a
`v1alpha1` item through the operator that is not what `api.conversion` makes of the stored one,
a `v1beta1` list that called a webhook, a `v1alpha1` list of N graphs that did not make N
reviews of one object each (1.20 reviews a LIST read from etcd one object at a time) or whose
reviews kube-apiserver counted otherwise, or a webhook called by a list that was not its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import statistics
import tempfile
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from api.conversion import convert
from controller.client import ClientConfig, KubeClient
from controller.errors import ApiError
from hack.bench.checks import check
from hack.bench.conversion.listing import (
    ALPHA,
    BETA,
    CRD_NAME,
    CRDS,
    GOAL_GRAPHS,
    GOAL_SECONDS,
    NAMESPACE,
    percentile,
    point_at,
    pure_conversions,
    seed,
    served,
    timed_list,
    wrong,
)
from hack.bench.conversion.webhook_operator import (
    HISTOGRAM,
    FloorWebhook,
    HandlerTimes,
    Scrape,
    WebhookOperator,
)
from hack.processes import cpu_seconds
from hack.realcluster.control_plane import ControlPlane
from hack.realcluster.inputs import CachedBuild
from hack.realcluster.testing import binaries, running_control_plane

Json = dict[str, Any]
CLUSTER = "real-1.20"
REQUESTS = "conversion_webhook_requests"
OBJECTS = "conversion_webhook_objects"
APISERVER_HISTOGRAM = "apiserver_crd_webhook_conversion_duration_seconds"
_REPOINT_TIMEOUT = 60.0
_QUIET = 1.0


def run(graphs: int, repeat: int, build: CachedBuild | None = None) -> Json:
    """Start the control plane, run the benchmark against it, stop it; the figures."""
    build = build or binaries()
    with tempfile.TemporaryDirectory(prefix="bench-conversion-real-") as tmp:
        workdir = Path(tmp)
        with running_control_plane(workdir, build=build) as plane:
            return asyncio.run(_run(plane, workdir, graphs, repeat))


@dataclass
class Webhook:
    """One webhook process as a LIST's target: how to count its reviews and its CPU."""

    name: str
    port: int
    scrape: Callable[[], Coroutine[Any, Any, Scrape]]
    cpu_of: Callable[[], float]


@dataclass
class Lists:
    """The v1alpha1 lists through one webhook: seconds, the reviews and objects each made by
    the webhook's count and by kube-apiserver's, CPU seconds of each process, the histograms."""

    webhook: Webhook
    seconds: list[float] = field(default_factory=list)
    reviews: list[int] = field(default_factory=list)
    objects: list[int] = field(default_factory=list)
    apiserver_reviews: list[int] = field(default_factory=list)
    apiserver_cpu: list[float] = field(default_factory=list)
    etcd_cpu: list[float] = field(default_factory=list)
    client_cpu: list[float] = field(default_factory=list)
    webhook_cpu: list[float] = field(default_factory=list)
    round_trips: HandlerTimes = field(default_factory=lambda: HandlerTimes({}, 0.0, 0.0))
    handler: HandlerTimes = field(default_factory=lambda: HandlerTimes({}, 0.0, 0.0))
    #: Reviews made while the CRD was pointed at the webhook and its cache filled.
    refill_reviews: list[int] = field(default_factory=list)


class Bench:
    def __init__(self, plane: ControlPlane, kube: KubeClient, graphs: int) -> None:
        self.plane = plane
        self.kube = kube
        self.graphs = graphs
        self.problems: list[str | None] = []

    async def apiserver(self) -> Scrape:
        return await Scrape.of(f"{self.plane.url}/metrics", self.plane.client_context())

    def cpu(self, component: str) -> float:
        return cpu_seconds(self.plane.pid(component))

    async def aim(self, webhook: Webhook) -> int:
        """The DGD CRD's webhook at `webhook`, and back once kube-apiserver calls it and has
        done so since: the reviews it made meanwhile. A change of the CRD makes kube-apiserver
        build the CRD's storage anew, and the new `v1alpha1` watch cache fills itself from
        etcd, converting every graph, one review each, in the background: a list timed
        during that would count those."""
        start = (await webhook.scrape()).total(REQUESTS)
        crd = await self.kube.get(CRDS, None, CRD_NAME)
        url = crd["spec"]["conversion"]["webhook"]["clientConfig"]["url"]
        # Unchanged, the CRD keeps its storage: nothing to wait for but quiet.
        refill = 0 if url.endswith(f":{webhook.port}/convert") else self.graphs
        await point_at(self.kube, webhook.port)
        deadline = time.monotonic() + _REPOINT_TIMEOUT
        seen, quiet_since = start, time.monotonic()
        while True:
            # One review of its own; the old storage going away may answer an error.
            with contextlib.suppress(ApiError):
                await self.kube.get(ALPHA, NAMESPACE, "g-00000")
            now = (await webhook.scrape()).total(REQUESTS)
            if now != seen + 1:  # more than the GET's own review
                quiet_since = time.monotonic()
            seen = now
            if now - start > refill and time.monotonic() - quiet_since > _QUIET:
                return round(now - start)
            if time.monotonic() > deadline:
                raise RuntimeError(f"kube-apiserver called the {webhook.name} {now - start:.0f}"
                                   f" times in {_REPOINT_TIMEOUT:.0f} s and did not settle")
            await asyncio.sleep(0.2)

    async def converted_list(self, lists: Lists, others: list[Webhook],
                             expected: dict[str, Json] | None) -> None:
        """One v1alpha1 LIST through `lists.webhook`; `others` must not be called by it."""
        hook = lists.webhook
        theirs = [(await w.scrape()).total(REQUESTS) for w in others]
        before, server_before = await hook.scrape(), await self.apiserver()
        cpu = (self.cpu("kube-apiserver"), self.cpu("etcd"), time.process_time(),
               hook.cpu_of())
        seconds, items = await timed_list(self.kube, ALPHA)
        lists.apiserver_cpu.append(self.cpu("kube-apiserver") - cpu[0])
        lists.etcd_cpu.append(self.cpu("etcd") - cpu[1])
        lists.client_cpu.append(time.process_time() - cpu[2])
        lists.webhook_cpu.append(hook.cpu_of() - cpu[3])
        after, server_after = await hook.scrape(), await self.apiserver()
        lists.seconds.append(seconds)
        reviews = round(after.total(REQUESTS) - before.total(REQUESTS))
        objects = round(after.total(OBJECTS) - before.total(OBJECTS))
        round_trips = server_after.histogram(APISERVER_HISTOGRAM).since(
            server_before.histogram(APISERVER_HISTOGRAM))
        lists.reviews.append(reviews)
        lists.objects.append(objects)
        lists.apiserver_reviews.append(round(round_trips.count))
        lists.round_trips = _plus(lists.round_trips, round_trips)
        lists.handler = _plus(lists.handler, after.histogram(HISTOGRAM).since(
            before.histogram(HISTOGRAM)))
        self.problems.append(wrong(items, self.graphs, ALPHA.api_version))
        if objects != self.graphs or reviews != self.graphs:
            self.problems.append(f"a v1alpha1 list of {self.graphs} through the {hook.name} "
                                 f"converted {objects} objects in {reviews} reviews")
        if round(round_trips.count) != reviews:
            self.problems.append(f"kube-apiserver counted {round_trips.count:.0f} reviews, "
                                 f"the {hook.name} {reviews}")
        for other, count in zip(others, theirs, strict=True):
            if (await other.scrape()).total(REQUESTS) != count:
                self.problems.append(f"a list through the {hook.name} called the {other.name}")
        if expected is not None:
            unlike = [i["metadata"]["name"] for i in items
                      if i.get("spec") != expected.get(i["metadata"]["name"], {}).get("spec")]
            if unlike:
                self.problems.append(f"{len(unlike)} v1alpha1 items through the {hook.name} are "
                                     f"not api.conversion's, e.g. {unlike[0]}")


def _plus(a: HandlerTimes, b: HandlerTimes) -> HandlerTimes:
    return HandlerTimes({le: a.buckets.get(le, 0.0) + n for le, n in b.buckets.items()},
                        a.total + b.total, a.count + b.count)


async def _run(plane: ControlPlane, workdir: Path, graphs: int, repeat: int) -> Json:
    kubeconfig = workdir / "kubeconfig"
    operator = WebhookOperator(workdir)
    kube = await KubeClient.connect(kubeconfig, ClientConfig(qps=None, user_agent="bench"))
    try:
        await seed(kube, operator, graphs)
        await operator.start(kubeconfig)
        try:
            await point_at(kube, operator.port)  # its port, if it had to take another
            await served(kube, ALPHA)
            floor = await FloorWebhook.start(operator.cert_dir, metrics=True)
            try:
                return await _measure(Bench(plane, kube, graphs), operator, floor, repeat)
            finally:
                await floor.stop()
        finally:
            await operator.stop()
    finally:
        await kube.close()


async def _measure(bench: Bench, operator: WebhookOperator, floor: FloorWebhook,
                   repeat: int) -> Json:
    graphs, kube = bench.graphs, bench.kube
    ours = Lists(Webhook("operator", operator.port, operator.scrape, operator.cpu_seconds))
    bare = Lists(Webhook("floor webhook", floor.port, floor.scrape, floor.cpu_seconds))
    hooks = [ours.webhook, bare.webhook]
    beta_times: list[float] = []
    beta_cpu: list[float] = []
    load = os.getloadavg()[0]
    for _ in range(repeat):
        ours.refill_reviews.append(await bench.aim(ours.webhook))
        counts = [(await w.scrape()).total(REQUESTS) for w in hooks]
        cpu = bench.cpu("kube-apiserver")
        seconds, items = await timed_list(kube, BETA)
        beta_cpu.append(bench.cpu("kube-apiserver") - cpu)
        beta_times.append(seconds)
        bench.problems.append(wrong(items, graphs, BETA.api_version))
        if [(await w.scrape()).total(REQUESTS) for w in hooks] != counts:
            bench.problems.append("a v1beta1 list called a webhook")
        expected = {i["metadata"]["name"]: convert(i, ALPHA.api_version) for i in items}
        await bench.converted_list(ours, [bare.webhook], expected)
        bare.refill_reviews.append(await bench.aim(bare.webhook))
        await bench.converted_list(bare, [ours.webhook], None)
    await bench.aim(ours.webhook)
    converts = await pure_conversions(kube)
    check(bench.problems)
    alpha, beta = statistics.median(ours.seconds), statistics.median(beta_times)
    trips, bare_trips, handler = ours.round_trips, bare.round_trips, ours.handler
    figures: Json = {
        "cluster": CLUSTER,
        "graphs": graphs, "repeat": repeat,
        "list_v1alpha1_seconds": round(alpha, 4),
        "list_v1beta1_seconds_floor": round(beta, 4),
        "list_v1alpha1_seconds_floor_webhook": round(statistics.median(bare.seconds), 4),
        "conversion_seconds": round(alpha - beta, 4),
        # kube-apiserver's histogram: quantiles interpolated within its buckets.
        "webhook_review_ms_p50": round(1000 * trips.quantile(0.50), 3),
        "webhook_review_ms_p99": round(1000 * trips.quantile(0.99), 3),
        "webhook_review_ms_mean": _mean_ms(trips),
        "floor_webhook_review_ms_p50": round(1000 * bare_trips.quantile(0.50), 3),
        "floor_webhook_review_ms_p99": round(1000 * bare_trips.quantile(0.99), 3),
        "floor_webhook_review_ms_mean": _mean_ms(bare_trips),
        "handler_ms_mean": _mean_ms(handler),
        "handler_ms_p50": round(1000 * handler.quantile(0.50), 3),
        "handler_ms_p99": round(1000 * handler.quantile(0.99), 3),
        "convert_ms_p50": round(1000 * percentile(converts, 0.50), 3),
        "convert_ms_p99": round(1000 * percentile(converts, 0.99), 3),
        # Each list's reviews: by the webhook's count, the objects they held, and by
        # kube-apiserver's count.
        "reviews_per_list_v1alpha1": ours.reviews,
        "objects_per_list_v1alpha1": ours.objects,
        "apiserver_reviews_per_list_v1alpha1": ours.apiserver_reviews,
        "reviews_per_list_floor_webhook": bare.reviews,
        "apiserver_reviews_per_list_floor_webhook": bare.apiserver_reviews,
        # Reviews while kube-apiserver, given the CRD's new webhook, built the CRD's storage
        # anew (its v1alpha1 watch cache converts every graph) and the GETs waiting for it.
        "refill_reviews_operator": ours.refill_reviews,
        "refill_reviews_floor_webhook": bare.refill_reviews,
        # CPU seconds of each list (medians): kube-apiserver's process (the "server"), etcd's,
        # this process (the listing client) and the webhook's.
        "server_cpu_seconds_v1alpha1": _median(ours.apiserver_cpu),
        "server_cpu_seconds_v1beta1_floor": _median(beta_cpu),
        "etcd_cpu_seconds_v1alpha1": _median(ours.etcd_cpu),
        "client_cpu_seconds_v1alpha1": _median(ours.client_cpu),
        "operator_cpu_seconds_v1alpha1": _median(ours.webhook_cpu),
        "server_cpu_seconds_floor_webhook": _median(bare.apiserver_cpu),
        "floor_webhook_cpu_seconds": _median(bare.webhook_cpu),
        "load_average_1m_start": round(load, 2),
        "load_average_1m_end": round(os.getloadavg()[0], 2),
        # kube-apiserver is Go: no full collections of a Python server to hold off.
        "server_gc": "go", "server_full_gcs": None, "server_full_gc_seconds": None,
    }
    if graphs >= GOAL_GRAPHS:
        figures["goal_list_under_1s"] = alpha * GOAL_GRAPHS / graphs < GOAL_SECONDS
    return figures


def _mean_ms(times: HandlerTimes) -> float:
    return round(1000 * times.total / times.count, 3) if times.count else 0.0


def _median(values: list[float]) -> float:
    return round(statistics.median(values), 3)
