"""Fixtures of the end-to-end tests: a cluster per test and started `dynamo-operator`s.

The cluster is the in-process local cluster with its simulation (4 nodes x 8 GPUs, scheduler,
kubelets, Deployment/ReplicaSet/EndpointSlice/LWS controllers); or, when `E2E_KUBECONFIG`
names a kubeconfig, that cluster (each test then works in a fresh namespace, and tests that
need the local cluster's request statistics are skipped).
"""

from __future__ import annotations

import os
import signal
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
from e2e_support import Env, OperatorProcess, install_crds

from controller.client import ClientConfig, KubeClient
from hack.localcluster.server import LocalCluster
from hack.localcluster.simulation import SimulationConfig
from hack.localcluster.testing import Kubectl, running_cluster


@pytest.fixture
def sim_config() -> SimulationConfig:
    return SimulationConfig()


@pytest.fixture
async def env(tmp_path: Path, sim_config: SimulationConfig) -> AsyncIterator[Env]:
    external = os.environ.get("E2E_KUBECONFIG")
    cache = tmp_path / "kubectl-cache"
    if external:
        kubectl = Kubectl(Path(external), cache)
        ns = f"e2e-{uuid.uuid4().hex[:8]}"
        await kubectl.run("create", "namespace", ns)
        e = Env(kubectl, ns, Path(external), None, tmp_path)
        try:
            await install_crds(e)
            yield e
        finally:
            await kubectl.run("delete", "namespace", ns, "--wait=false")
        return
    async with running_cluster(tmp_path, bookmark_interval=0.5, simulation=sim_config) as c:
        e = Env(Kubectl(tmp_path / "kubeconfig", cache), "default", tmp_path / "kubeconfig",
                c, tmp_path)
        await install_crds(e)
        yield e


@pytest.fixture
def needs_local(env: Env) -> LocalCluster:
    """The local cluster's internals (request statistics); skipped on a real cluster only."""
    if env.local is None:
        pytest.skip(reason="E2E_KUBECONFIG names a real cluster: no local request statistics")
    return env.local


@pytest.fixture
async def operators(env: Env) -> AsyncIterator[Callable[..., Awaitable[OperatorProcess]]]:
    """A factory of started operator processes; all are stopped when the test ends."""
    started: list[OperatorProcess] = []

    async def start(name: str = "op", *extra: str) -> OperatorProcess:
        op = OperatorProcess(env.kubeconfig, env.namespace, env.tmp / f"{name}.log", name,
                             list(extra))
        await op.start()
        started.append(op)
        return op

    try:
        yield start
    finally:
        for op in started:
            await op.kill(signal.SIGTERM)
        for op in started:
            print(f"--- {op.name} log (tail) ---\n{op.tail()}")


@pytest.fixture
async def operator(operators: Callable[..., Awaitable[OperatorProcess]]) -> OperatorProcess:
    """One operator process, started."""
    return await operators("op")


@pytest.fixture
async def kube(env: Env) -> AsyncIterator[KubeClient]:
    """A client of the test's cluster (the operator's own client, unthrottled)."""
    client = await KubeClient.connect(env.kubeconfig, ClientConfig(qps=None))
    try:
        yield client
    finally:
        await client.close()
