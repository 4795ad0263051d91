"""Shared fixtures: a local API server per test, clients for it, and the real kubectl."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from kubernetes_asyncio import client

from hack.localcluster.server import LocalCluster
from hack.localcluster.testing import Kubectl, api_client, running_cluster


@pytest.fixture
async def cluster(tmp_path: Path) -> AsyncIterator[LocalCluster]:
    async with running_cluster(tmp_path, bookmark_interval=0.2) as c:
        yield c


@pytest.fixture
def kubeconfig(cluster: LocalCluster, tmp_path: Path) -> Path:
    return tmp_path / "kubeconfig"


@pytest.fixture
async def api(kubeconfig: Path) -> AsyncIterator[client.ApiClient]:
    c = await api_client(kubeconfig)
    try:
        yield c
    finally:
        await c.close()


@pytest.fixture
def kubectl(kubeconfig: Path, tmp_path: Path) -> Kubectl:
    return Kubectl(kubeconfig, tmp_path / "kubectl-cache")
