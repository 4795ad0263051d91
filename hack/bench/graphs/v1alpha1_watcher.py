"""The graph benchmark's conversion mode (`--v1alpha1-watcher`): what a user reading graphs in
`v1alpha1` costs the operator, which reads them in the hub, `v1beta1`, as they are stored.

Each run's operator is the conversion webhook of the local API server for our CRDs, as
deployed (`--enable-webhooks --webhook-url`, a certificate mounted in `--webhook-cert-dir`,
made by `hack.bench.conversion.webhook_operator.write_certificates`): the CRDs are seeded
converting through its URL with its CA, so its own keeper finds nothing to change. Per size,
two runs on fresh clusters, in alternating order per repeat so that the machine's noise falls
on both: (a) no other reader; (b) a user (`V1alpha1Watcher`, in the benchmark's process) that
LISTs all graphs in `v1alpha1` once the operator's webhook answers and WATCHes them from that
list on, so that every graph listed and every change of one the user is sent costs a
ConversionReview to the operator. The added share is the operator's CPU until every graph is
Ready in (b) over (a), minus one (issue #30's goal: at most 0.20). The reviews are the
operator's own count (`conversion_webhook_requests_total` on its /metrics), at Ready.

The local API server converts a watch event once for all watchers of a version, as
kube-apiserver's per-version watch cache does; unlike kube-apiserver, it converts nothing
for a version no one reads (kube-apiserver's cache of every served version converts each
write whether read or not: kubernetes/kubernetes#129979), so (b) less (a) is also what
serving `v1alpha1` at all costs the operator on kube-apiserver.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import statistics
import time
from pathlib import Path
from typing import Any

import yaml

from controller.client import KubeClient
from controller.errors import ApiError
from controller.resource import Resource
from hack.bench import calibration
from hack.bench.checks import at_least, check
from hack.bench.conversion.webhook_operator import Scrape, write_certificates
from hack.our_crds import CRD_DIR, with_conversion
from hack.processes import free_port
from reconcilers.operator.conversion_setup import CONVERSION_PATH

from .graph import DGDS, GROUP

Json = dict[str, Any]

__all__ = ["ALPHA_DGDS", "GOAL_ADDED_SHARE", "OperatorWebhook", "V1alpha1Watcher",
           "compared", "conversion_reviews"]

ALPHA_DGDS = Resource(GROUP, "v1alpha1", DGDS.plural, DGDS.kind)
#: Issue #30, item 7: a v1alpha1 reader adds at most this share to the operator's CPU.
GOAL_ADDED_SHARE = 0.20
REVIEWS = "conversion_webhook_requests"
_SERVED_TIMEOUT = 60.0
_LIST_TIMEOUT = 600.0
RUN_KEYS = ("order", "v1alpha1_watcher", "operator_cpu_seconds_to_ready", "seconds_to_ready",
            "conversion_reviews", "watcher_events")


class OperatorWebhook:
    """The webhook server of one run's operator: its certificate, port and URL, and our CRDs
    converting through it."""

    def __init__(self, cert_dir: Path) -> None:
        self.cert_dir = cert_dir
        self.ca_pem = write_certificates(cert_dir)
        self.port = free_port()

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    def flags(self) -> list[str]:
        return ["--enable-webhooks", "--webhook-port", str(self.port),
                "--webhook-url", self.url, "--webhook-cert-dir", str(self.cert_dir)]

    def crds(self) -> list[Json]:
        """Our CRDs, each converted by this operator (the clientConfig its keeper keeps)."""
        config = {"url": self.url + CONVERSION_PATH,
                  "caBundle": base64.b64encode(self.ca_pem).decode()}
        # Read from the files: `our_crds` would start the in-process webhook it points at.
        return [with_conversion(yaml.safe_load(path.read_text()), dict(config))
                for path in sorted(CRD_DIR.glob("*.yaml"))]


class V1alpha1Watcher:
    """A user holding a LIST and WATCH of a namespace's graphs in `v1alpha1`, decoding each
    event as a client does; counts what it got and anything not in `v1alpha1`."""

    def __init__(self, client: KubeClient, namespace: str) -> None:
        self.client, self.namespace = client, namespace
        self.listed = 0
        #: LISTs again after a 410 Gone (the watch fell behind the server's history), and the
        #: objects they returned: each one a review too.
        self.relists = 0
        self.relisted = 0
        self.events = 0
        self.other_versions = 0
        self.list_seconds = 0.0
        self.waited_seconds = 0.0
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Wait until `v1alpha1` is served through the operator (its webhook answers), then
        LIST and start the WATCH from that list's resourceVersion."""
        started = time.monotonic()
        while True:
            try:
                await self.client.list(ALPHA_DGDS, self.namespace, limit=1)
                break
            except (ApiError, OSError, TimeoutError):
                if time.monotonic() - started > _SERVED_TIMEOUT:
                    raise
                await asyncio.sleep(0.1)
        self.waited_seconds = time.monotonic() - started
        listed_at = time.monotonic()
        items, version = await self._list()
        self.list_seconds = time.monotonic() - listed_at
        self.listed = items
        self._task = asyncio.create_task(self._watch(version))

    async def _list(self) -> tuple[int, str]:
        """One LIST: the objects it returned and its resourceVersion. Each review waits on an
        operator busy reconciling, so a LIST of many graphs may take longer than the client's
        usual timeout; a user's kubectl would wait."""
        listing = await self.client.request("GET", ALPHA_DGDS.path(self.namespace),
                                            request_timeout=_LIST_TIMEOUT)
        self.other_versions += sum(1 for item in listing["items"]
                                   if item.get("apiVersion") != ALPHA_DGDS.api_version)
        return len(listing["items"]), str(listing["metadata"]["resourceVersion"])

    async def _watch(self, version: str) -> None:
        while True:
            async with self.client.watch(ALPHA_DGDS, self.namespace, resource_version=version,
                                         timeout_seconds=3600,
                                         read_timeout=3600.0) as events:
                async for event in events:
                    obj = event.get("object") or {}
                    if event.get("type") == "ERROR" and obj.get("code") == 410:
                        # Fell behind the history: LIST again, as a reflector does.
                        self.relists += 1
                        items, version = await self._list()
                        self.relisted += items
                        break
                    if event.get("type") == "ERROR":
                        raise RuntimeError(f"the v1alpha1 watch ended: {obj}")
                    version = str((obj.get("metadata") or {}).get("resourceVersion")
                                  or version)
                    if event.get("type") == "BOOKMARK":
                        continue
                    self.events += 1
                    if obj.get("apiVersion") != ALPHA_DGDS.api_version:
                        self.other_versions += 1

    def failure(self) -> BaseException | None:
        """Why the watch ended, if it did (it should run until stopped)."""
        if self._task is None or not self._task.done() or self._task.cancelled():
            return None
        return self._task.exception() or RuntimeError("the v1alpha1 watch ended")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task


async def conversion_reviews(metrics_port: int) -> dict[str, float]:
    """The conversion reviews the operator handled so far, by result (its /metrics)."""
    scrape = await Scrape.of(f"http://127.0.0.1:{metrics_port}/metrics")
    return {result: scrape.total(REVIEWS, result=result) for result in ("success", "failure")}


def _median(runs: list[dict[str, Any]], key: str) -> float:
    return float(statistics.median(float(r[key]) for r in runs))


def compared(size: int, alone: list[dict[str, Any]], watched: list[dict[str, Any]],
             cal: dict[str, Any]) -> dict[str, Any]:
    """One size's figures: the operator's CPU per graph with no other reader (a) and with the
    v1alpha1 watcher (b), medians over the repeats, the added share, the reviews; fails on
    figures that cannot come from a correct run."""
    check([None if run["ready"] == size else f"{run['ready']} of {size} graphs Ready"
           for run in alone + watched])
    cpu_a = _median(alone, "operator_cpu_seconds_to_ready")
    cpu_b = _median(watched, "operator_cpu_seconds_to_ready")
    share = cpu_b / cpu_a - 1 if cpu_a > 0 else None
    reviews_b = _median(watched, "conversion_reviews")
    problems: list[str | None] = [at_least("operator CPU seconds without a reader", cpu_a, 1e-3)]
    for run in watched:
        problems += [
            at_least("graphs the v1alpha1 watcher listed", run["watcher_listed"], size),
            at_least("watch events the v1alpha1 watcher got", run["watcher_events"], 1),
            # Each graph listed and each event sent in v1alpha1 was converted by a review.
            at_least("conversion reviews the operator served", run["conversion_reviews"],
                     max(1, run["watcher_listed"] + run["watcher_relisted"]
                         + run["watcher_events"])),
            None if not run["watcher_other_versions"] else
            f"the v1alpha1 watcher got {run['watcher_other_versions']} objects of another "
            "version",
            None if not run["conversion_review_failures"] else
            f"{run['conversion_review_failures']:.0f} conversion reviews failed"]
    check(problems)
    per_graph_a, per_graph_b = cpu_a / size, cpu_b / size
    return {
        "graphs": size, "repeat": len(alone),
        "operator_cpu_seconds_to_ready": round(cpu_a, 2),
        "operator_cpu_seconds_to_ready_v1alpha1_watcher": round(cpu_b, 2),
        "operator_cpu_ms_per_graph": round(1000 * per_graph_a, 2),
        "operator_cpu_ms_per_graph_v1alpha1_watcher": round(1000 * per_graph_b, 2),
        "v1alpha1_watcher_added_share": round(share, 3) if share is not None else None,
        "goal_added_share": GOAL_ADDED_SHARE,
        "goal_added_share_met": share is not None and share <= GOAL_ADDED_SHARE,
        "conversion_reviews_per_graph": round(reviews_b / size, 2),
        "conversion_reviews_per_graph_without_reader": round(
            _median(alone, "conversion_reviews") / size, 2),
        "watcher_events_per_graph": round(_median(watched, "watcher_events") / size, 2),
        "watcher_list_seconds": round(_median(watched, "watcher_list_seconds"), 3),
        "watcher_relists": max(int(r["watcher_relists"]) for r in watched),
        "seconds_to_ready": round(_median(alone, "seconds_to_ready"), 2),
        "seconds_to_ready_v1alpha1_watcher": round(_median(watched, "seconds_to_ready"), 2),
        "operator_cpu_per_graph_in_calibrations": calibration.in_calibrations(per_graph_a, cal),
        "operator_cpu_per_graph_in_calibrations_v1alpha1_watcher":
            calibration.in_calibrations(per_graph_b, cal),
        # Every run in the order it ran, to see the noise the medians smooth.
        "runs": [{k: r[k] for k in RUN_KEYS}
                 for r in sorted(alone + watched, key=lambda r: int(r["order"]))],
    }
