"""Fixtures of the nodesim tests: a local API server whose own nodes and kubelets are off (so
nodesim's play them), kubectl against it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from hack.localcluster.server import LocalCluster
from hack.localcluster.simulation import PARTS, SimulationConfig
from hack.localcluster.testing import Kubectl, running_cluster


@pytest.fixture
async def cluster(tmp_path: Path) -> AsyncIterator[LocalCluster]:
    config = SimulationConfig(parts=PARTS - {"nodes", "kubelet"}, nodes=[])
    async with running_cluster(tmp_path, simulation=config) as running:
        yield running


@pytest.fixture
def kubectl(cluster: LocalCluster, tmp_path: Path) -> Kubectl:
    return Kubectl(tmp_path / "kubeconfig", tmp_path / "kubectl-cache")
