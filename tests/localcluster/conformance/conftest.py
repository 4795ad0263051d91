"""Fixtures of the conformance suite: a raw HTTP client and the sample CRD installed."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from conformance_support import Raw, install_crd
from kubernetes_asyncio import client

from hack.localcluster.server import LocalCluster


@pytest.fixture
async def raw(cluster: LocalCluster) -> AsyncIterator[Raw]:
    r = Raw(cluster)
    try:
        yield r
    finally:
        await r.close()


@pytest.fixture
async def widgets(api: client.ApiClient) -> dict[str, Any]:
    """The sample CRD, created and served."""
    return await install_crd(api)


@pytest.fixture
def core(api: client.ApiClient) -> client.CoreV1Api:
    return client.CoreV1Api(api)


@pytest.fixture
def apps(api: client.ApiClient) -> client.AppsV1Api:
    return client.AppsV1Api(api)


@pytest.fixture
def custom(api: client.ApiClient) -> client.CustomObjectsApi:
    return client.CustomObjectsApi(api)
