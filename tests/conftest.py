"""Shared fixtures: a local API server per test, clients for it, and the real kubectl."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from kubernetes_asyncio import client

from hack.localcluster.server import LocalCluster
from hack.localcluster.simulation import SimulationConfig
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


# --- the simulated cluster (nodes, scheduler, kubelets, controllers); opt-in ---------------


@pytest.fixture
def sim_config() -> SimulationConfig:
    """The simulation `sim_cluster` runs; override this fixture to change nodes or parts."""
    return SimulationConfig()


@pytest.fixture
async def sim_cluster(tmp_path: Path, sim_config: SimulationConfig
                      ) -> AsyncIterator[LocalCluster]:
    """A local cluster with the simulation on; its kubeconfig is `tmp_path/sim/kubeconfig`."""
    async with running_cluster(tmp_path / "sim", bookmark_interval=0.2,
                               simulation=sim_config) as c:
        yield c


@pytest.fixture
async def sim_api(sim_cluster: LocalCluster, tmp_path: Path) -> AsyncIterator[client.ApiClient]:
    c = await api_client(tmp_path / "sim" / "kubeconfig")
    try:
        yield c
    finally:
        await c.close()


@pytest.fixture
def sim_kubectl(sim_cluster: LocalCluster, tmp_path: Path) -> Kubectl:
    return Kubectl(tmp_path / "sim" / "kubeconfig", tmp_path / "sim-kubectl-cache")
