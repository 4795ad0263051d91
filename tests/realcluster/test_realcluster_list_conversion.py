"""A LIST converted by webhook: the local API server reviews the objects as a real Kubernetes
1.20 does, one ConversionReview per object and one after the other, stopping at the first
object the webhook refuses.

kube-apiserver decodes the items of a LIST read from etcd in a loop (etcd3 store `List`,
`appendListItem`), each decode converting through the webhook before the next begins. The toy
Widget webhook here holds every review for a moment, so that reviews sent side by side would
overlap; both servers must show at most one in flight.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from controller.client import ClientConfig, KubeClient
from controller.errors import ApiError
from controller.metrics import Metrics
from controller.resource import Resource
from hack.localcluster.conversion.toy_webhook import (
    CRD_NAME,
    V2,
    WIDGETS_V1,
    WIDGETS_V2,
    ToyConversionWebhook,
    widget,
    widget_crd,
)
from hack.localcluster.server import LocalCluster
from hack.localcluster.testing import eventually

pytestmark = pytest.mark.timeout(120, func_only=True)

Json = dict[str, Any]
CRDS = Resource("apiextensions.k8s.io", "v1", "customresourcedefinitions",
                "CustomResourceDefinition", namespaced=False)
WIDGETS = 6
HOLD = 0.02


class HeldReviews:
    """The toy webhook's handler, each review held `HOLD` seconds; counts reviews in flight."""

    def __init__(self, toy: ToyConversionWebhook) -> None:
        self.handler: Callable[[web.Request], Awaitable[web.Response]] = toy.webhook.handle
        self.in_flight = 0
        self.most = 0
        toy.server.route("/held", self.handle)

    async def handle(self, request: web.Request) -> web.Response:
        self.in_flight += 1
        self.most = max(self.most, self.in_flight)
        try:
            await asyncio.sleep(HOLD)
            return await self.handler(request)
        finally:
            self.in_flight -= 1


async def _settled(toy: ToyConversionWebhook) -> None:
    """Until no review came for a while (a real server's watch cache converts new objects in
    the background, and retries one it cannot convert every second)."""
    seen = -1
    for _ in range(10):
        if seen == len(toy.converted):
            return
        seen = len(toy.converted)
        await asyncio.sleep(1.0)


async def _scenario(kubeconfig: Path) -> Json:
    client = await KubeClient.connect(kubeconfig, ClientConfig(qps=None), Metrics())
    toy = ToyConversionWebhook()
    held = HeldReviews(toy)
    await toy.start()
    seen: Json = {}
    try:
        config = toy.client_config()
        config["url"] = config["url"].replace("/convert", "/held")
        await client.create(CRDS, widget_crd(config))

        async def served() -> bool:
            try:
                await client.list(WIDGETS_V1, "default")
                await client.list(WIDGETS_V2, "default")
            except ApiError:
                return False
            return True

        await eventually(served, within=30, interval=0.2, what="widgets served")
        for i in range(WIDGETS):
            await client.create(WIDGETS_V2, widget(f"w{i}", V2, dimension=i))
        await _settled(toy)
        toy.converted.clear()
        held.most = 0
        items = (await client.list(WIDGETS_V1, "default"))["items"]
        seen["listed"] = [(o["apiVersion"], o["spec"]) for o in items]
        seen["reviews"] = toy.converted[:]
        seen["most in flight"] = held.most

        # "a-broken" is the first key: the LIST stops at it.
        await client.create(WIDGETS_V2, widget("a-broken", V2, broken=True))
        await _settled(toy)
        toy.converted.clear()
        try:
            await client.list(WIDGETS_V1, "default")
            seen["refused list"] = "no error"
        except ApiError as err:
            seen["refused list"] = (err.code, err.message.split(":")[0])
        # A real server's watch cache may retry the refused object meanwhile: names only.
        seen["refused reviews"] = sorted({name for _, name in toy.converted})
        await client.delete(CRDS, None, CRD_NAME)
    finally:
        await toy.stop()
        toy.tls.close()
        await client.close()
    return seen


async def test_list_reviews_one_object_at_a_time_as_kubernetes_1_20(
        real_kubeconfig: Path, cluster: LocalCluster, kubeconfig: Path) -> None:
    real = await _scenario(real_kubeconfig)
    local = await _scenario(kubeconfig)
    assert real["most in flight"] == 1 and len(real["reviews"]) == WIDGETS, real
    assert local == real
