"""Fixtures of the controller runtime tests: a setup client, the Widget CRD, a fault proxy."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from harness import CRDS, WIDGETS, TcpProxy, proxied_kubeconfig, setup_client, widget_crd

from controller.client import KubeClient
from controller.resource import Resource
from hack.localcluster.server import LocalCluster


@pytest.fixture
async def client(kubeconfig: Path) -> AsyncIterator[KubeClient]:
    c = await setup_client(kubeconfig)
    try:
        yield c
    finally:
        await c.close()


@pytest.fixture
async def widgets(client: KubeClient) -> Resource:
    await client.create(CRDS, widget_crd())
    return WIDGETS


@pytest.fixture
async def proxy(cluster: LocalCluster) -> AsyncIterator[TcpProxy]:
    p = TcpProxy(cluster.port)
    await p.start()
    try:
        yield p
    finally:
        await p.stop()


@pytest.fixture
def proxied(cluster: LocalCluster, proxy: TcpProxy, tmp_path: Path) -> Path:
    """A kubeconfig whose traffic goes through `proxy`."""
    return proxied_kubeconfig(cluster, proxy, tmp_path / "kubeconfig-proxied")
