"""The client sends a request again when the API server asks it to come back later (429, or a
5xx with Retry-After), as client-go's rest client does; anything else reaches the caller."""

from __future__ import annotations

from pathlib import Path

import pytest
from harness import widget

from controller.client import ClientConfig, KubeClient
from controller.errors import ApiError
from controller.metrics import Metrics
from controller.resource import Resource
from hack.localcluster.server import LocalCluster


async def _client(kubeconfig: Path, **config: int) -> tuple[KubeClient, Metrics]:
    metrics = Metrics()
    return await KubeClient.connect(kubeconfig, ClientConfig(qps=None, **config),
                                    metrics), metrics


def _retries(metrics: Metrics, code: str) -> float:
    return sum(s.value for m in metrics.registry.collect() for s in m.samples
               if s.name == "rest_client_request_retries_total" and s.labels["code"] == code)


async def test_throttled_and_unavailable_writes_go_through_after_retry_after(
        kubeconfig: Path, cluster: LocalCluster, widgets: Resource) -> None:
    client, metrics = await _client(kubeconfig)
    try:
        throttled = cluster.faults.error(429, verbs=("create",), resources=("widgets",),
                                         retry_after=0, times=2)
        created = await client.create(widgets, widget("a"))
        assert created["metadata"]["name"] == "a"
        assert throttled.hits == 2
        unavailable = cluster.faults.error(503, verbs=("create",), resources=("widgets",),
                                           retry_after=0, times=1)
        await client.create(widgets, widget("b"))
        assert unavailable.hits == 1
        assert _retries(metrics, "429") == 2
        assert _retries(metrics, "503") == 1
    finally:
        await client.close()


async def test_retries_are_bounded_and_errors_without_retry_after_are_not_retried(
        kubeconfig: Path, cluster: LocalCluster, widgets: Resource) -> None:
    client, _ = await _client(kubeconfig, max_retries=2)
    try:
        throttled = cluster.faults.error(429, verbs=("create",), resources=("widgets",),
                                         retry_after=0)
        with pytest.raises(ApiError) as caught:
            await client.create(widgets, widget("a"))
        assert caught.value.code == 429
        assert throttled.hits == 3  # the first try and two retries
        cluster.faults.remove(throttled)
        failing = cluster.faults.error(500, verbs=("create",), resources=("widgets",), times=1)
        with pytest.raises(ApiError) as caught:
            await client.create(widgets, widget("a"))
        assert caught.value.code == 500
        assert failing.hits == 1
    finally:
        await client.close()
