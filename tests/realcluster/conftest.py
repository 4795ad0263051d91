"""Fixtures of the real control plane's tests: one control plane for the whole session.

The first test builds the binaries (about 6 minutes on 2 cores) or finds them cached; only
with DYNAMO_REALCLUSTER_BUILD=0 and nothing cached are the tests skipped. pytest-timeout's
limit covers the test functions alone (`func_only`), since the build has its own timeouts.
"""

from __future__ import annotations

import signal
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path

import pytest

from e2e.e2e_support import Env, OperatorProcess
from hack.localcluster.testing import Kubectl, eventually
from hack.realcluster.control_plane import ControlPlane
from hack.realcluster.inputs import CachedBuild
from hack.realcluster.testing import (
    NotBuilt,
    binaries,
    install_our_crds,
    running_control_plane,
)


@pytest.fixture(scope="session")
def real_binaries() -> CachedBuild:
    """The built binaries: built now unless cached; the tests skip only with building off."""
    try:
        return binaries()
    except NotBuilt as reason:
        pytest.skip(reason=f"real cluster not built and building is off: {reason}")


@pytest.fixture(scope="session")
def control_plane(real_binaries: CachedBuild, tmp_path_factory: pytest.TempPathFactory
                  ) -> Iterator[ControlPlane]:
    with running_control_plane(tmp_path_factory.mktemp("realcluster"),
                               build=real_binaries) as plane:
        yield plane


@pytest.fixture(scope="session")
def real_kubeconfig(control_plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory
                    ) -> Path:
    return control_plane.write_kubeconfig(
        tmp_path_factory.mktemp("realcluster-admin") / "kubeconfig")


@pytest.fixture
def kubectl(real_kubeconfig: Path, tmp_path: Path) -> Kubectl:
    """kubectl as the admin (group system:masters) of the real control plane."""
    return Kubectl(real_kubeconfig, tmp_path / "kubectl-cache")


@pytest.fixture
async def crds(kubectl: Kubectl) -> None:
    """Our CRDs on the session's control plane (`install_our_crds`)."""
    await install_our_crds(kubectl)


@pytest.fixture
async def env(kubectl: Kubectl, real_kubeconfig: Path, tmp_path: Path, crds: None
              ) -> AsyncIterator[Env]:
    """A namespace of its own (with its default ServiceAccount) and our CRDs."""
    ns = f"op-{uuid.uuid4().hex[:6]}"
    await kubectl("create", "namespace", ns)
    await eventually(lambda: _has_default_account(kubectl, ns), within=30, interval=0.2,
                     what="the default ServiceAccount")
    yield Env(kubectl, ns, real_kubeconfig, None, tmp_path)
    await kubectl.run("delete", "namespace", ns, "--wait=false")


async def _has_default_account(kubectl: Kubectl, ns: str) -> bool:
    return (await kubectl.run("-n", ns, "get", "serviceaccount", "default")).code == 0


@pytest.fixture
async def operators(env: Env) -> AsyncIterator[Callable[..., Awaitable[OperatorProcess]]]:
    """Started `dynamo-operator` processes (as the admin) in the test's namespace; stopped
    and their logs' tails printed at the end."""
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
            print(f"--- {op.name} log (tail) ---\n{op.tail(1500)}")
