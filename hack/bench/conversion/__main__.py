"""A LIST of graphs in the version they are not stored in: `python -m hack.bench.conversion`.

Puts N DynamoGraphDeployments (the v1beta1 vllm-agg example, renamed) into the local API server
with the DGD CRD stored as `v1beta1` (the original's storage version) and converted by the
operator's conversion webhook: the runtime's `/convert` (`controller.conversion_webhook`) with
`api.conversion.convert`, on 127.0.0.1 with its own CA. It then lists them in `v1alpha1` (one
ConversionReview per object, as kube-apiserver's storage decodes them) and, as the floor in the
same run, in `v1beta1` (no conversion), each `--repeat` times, and reports the medians, the
webhook's time per review (p50/p99, measured around its handler) and the pure conversion's
per object. The goal from issue #26: the v1alpha1 LIST of 1,000 graphs under 1 s. The last line
printed is one JSON object with the figures.

It fails when a figure is impossible: a list that misses graphs or answers another version,
a v1alpha1 list that did not call the webhook once per graph, or a v1beta1 list that called it.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import datetime
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import yaml
from aiohttp import web
from prometheus_client import CollectorRegistry

from api.conversion import convert
from controller.certificates import new_authority, serving_certificate
from controller.client import ClientConfig, KubeClient
from controller.conversion_webhook import ConversionMetrics, ConversionWebhook
from controller.resource import Resource
from controller.webhook import TLSConfig, WebhookMetrics, WebhookServer
from hack.bench.checks import ImpossibleFigures, check, report_and_exit_code
from hack.localcluster.testing import running_cluster

Json = dict[str, Any]
ROOT = Path(__file__).resolve().parents[3]
CRD_FILE = ROOT / "deploy" / "crds" / "nvidia.com_dynamographdeployments.yaml"
EXAMPLE = ROOT / "deploy" / "examples" / "v1beta1" / "vllm-agg.yaml"
CRDS = Resource("apiextensions.k8s.io", "v1", "customresourcedefinitions",
                "CustomResourceDefinition", namespaced=False)
ALPHA = Resource("nvidia.com", "v1alpha1", "dynamographdeployments", "DynamoGraphDeployment")
BETA = Resource("nvidia.com", "v1beta1", "dynamographdeployments", "DynamoGraphDeployment")
NAMESPACE = "default"
GOAL_SECONDS, GOAL_GRAPHS = 1.0, 1000


class TimedWebhook:
    """The operator's conversion webhook, timed per review and per converted object."""

    def __init__(self) -> None:
        ca = new_authority("bench-conversion-ca", datetime.timedelta(days=1))
        cert = serving_certificate(ca, ["localhost"], ["127.0.0.1"])
        self.ca_pem = ca.cert_pem
        self.tls = TLSConfig()
        self.tls.load(cert.cert_pem, cert.key_pem)
        registry = CollectorRegistry()
        self.webhook = ConversionWebhook(ConversionMetrics(registry))
        self.webhook.register("nvidia.com", self._convert)
        self.server = WebhookServer(self.tls, WebhookMetrics(registry), host="127.0.0.1",
                                    port=0)
        self.server.route("/convert", self._timed(self.webhook.handle))
        self.reviews: list[float] = []
        self.conversions: list[float] = []

    def _convert(self, obj: Json, desired: str) -> Json:
        started = time.perf_counter()
        out = convert(obj, desired)
        self.conversions.append(time.perf_counter() - started)
        return out

    def _timed(self, handler: Callable[[web.Request], Awaitable[web.Response]]
               ) -> Callable[[web.Request], Awaitable[web.Response]]:
        async def timed(request: web.Request) -> web.Response:
            started = time.perf_counter()
            try:
                return await handler(request)
            finally:
                self.reviews.append(time.perf_counter() - started)
        return timed

    def client_config(self) -> Json:
        return {"url": f"https://127.0.0.1:{self.server.port}/convert",
                "caBundle": base64.b64encode(self.ca_pem).decode()}


def stored_as_v1beta1(crd: Json, client_config: Json) -> Json:
    """The DGD CRD with v1beta1 as its storage version and conversion by `client_config`."""
    for version in crd["spec"]["versions"]:
        version["storage"] = version["name"] == "v1beta1"
    crd["spec"]["conversion"] = {"strategy": "Webhook", "webhook": {
        "conversionReviewVersions": ["v1"], "clientConfig": client_config}}
    return crd


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else 0.0


async def served(kube: KubeClient) -> None:
    deadline = time.monotonic() + 30
    while True:
        try:
            await kube.list(BETA, NAMESPACE, limit=1)
            return
        except Exception:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.1)


async def timed_list(kube: KubeClient, resource: Resource) -> tuple[float, list[Json]]:
    started = time.perf_counter()
    listing = await kube.list(resource, NAMESPACE)
    return time.perf_counter() - started, listing["items"]


async def run(graphs: int, repeat: int) -> Json:
    hook = TimedWebhook()
    await hook.server.start()
    try:
        with tempfile.TemporaryDirectory(prefix="bench-conversion-") as tmp:
            async with running_cluster(Path(tmp)):
                kube = await KubeClient.connect(Path(tmp) / "kubeconfig",
                                                ClientConfig(qps=None, user_agent="bench"))
                try:
                    return await measure(kube, hook, graphs, repeat)
                finally:
                    await kube.close()
    finally:
        await hook.server.stop()
        hook.tls.close()


async def measure(kube: KubeClient, hook: TimedWebhook, graphs: int, repeat: int) -> Json:
    crd = yaml.safe_load(CRD_FILE.read_text())
    await kube.create(CRDS, stored_as_v1beta1(crd, hook.client_config()))
    await served(kube)
    [template] = [d for d in yaml.safe_load_all(EXAMPLE.read_text()) if d]
    for i in range(graphs):
        obj = {**template, "metadata": {"name": f"g-{i:05d}", "namespace": NAMESPACE}}
        await kube.create(BETA, obj, decode=False)
    problems: list[str | None] = []
    if hook.reviews:
        problems.append(f"{len(hook.reviews)} conversions while storing v1beta1 objects")
    alpha_times, beta_times = [], []
    for _ in range(repeat):
        hook.reviews.clear()
        seconds, items = await timed_list(kube, BETA)
        beta_times.append(seconds)
        problems.append(_wrong(items, graphs, "nvidia.com/v1beta1"))
        if hook.reviews:
            problems.append(f"a v1beta1 list called the webhook {len(hook.reviews)} times")
        hook.reviews.clear()
        hook.conversions.clear()
        seconds, items = await timed_list(kube, ALPHA)
        alpha_times.append(seconds)
        problems.append(_wrong(items, graphs, "nvidia.com/v1alpha1"))
        if len(hook.reviews) != graphs:
            problems.append(f"a v1alpha1 list of {graphs} called the webhook "
                            f"{len(hook.reviews)} times")
    check(problems)
    alpha, beta = statistics.median(alpha_times), statistics.median(beta_times)
    figures = {
        "graphs": graphs, "repeat": repeat,
        "list_v1alpha1_seconds": round(alpha, 4),
        "list_v1beta1_seconds_floor": round(beta, 4),
        "conversion_seconds": round(alpha - beta, 4),
        "webhook_review_ms_p50": round(1000 * percentile(hook.reviews, 0.50), 3),
        "webhook_review_ms_p99": round(1000 * percentile(hook.reviews, 0.99), 3),
        "convert_ms_p50": round(1000 * percentile(hook.conversions, 0.50), 3),
        "convert_ms_p99": round(1000 * percentile(hook.conversions, 0.99), 3),
    }
    if graphs >= GOAL_GRAPHS:
        figures["goal_list_under_1s"] = alpha * GOAL_GRAPHS / graphs < GOAL_SECONDS
    return figures


def _wrong(items: list[Json], graphs: int, version: str) -> str | None:
    if len(items) != graphs:
        return f"a {version} list returned {len(items)} of {graphs} graphs"
    others = {i.get("apiVersion") for i in items} - {version}
    return f"a {version} list answered {sorted(map(str, others))}" if others else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hack.bench.conversion",
                                     description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--graphs", type=int, default=GOAL_GRAPHS)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    try:
        figures = asyncio.run(run(args.graphs, args.repeat))
    except ImpossibleFigures as err:
        return report_and_exit_code(err)
    for key, value in figures.items():
        print(f"{key}: {value}")
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
