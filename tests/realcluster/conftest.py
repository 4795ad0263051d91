"""Fixtures of the real control plane's tests: one control plane for the whole session.

The first test builds the binaries (about 6 minutes on 2 cores) or finds them cached; only
with DYNAMO_REALCLUSTER_BUILD=0 and nothing cached are the tests skipped. pytest-timeout's
limit covers the test functions alone (`func_only`), since the build has its own timeouts.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from hack.localcluster.testing import Kubectl
from hack.realcluster.control_plane import ControlPlane
from hack.realcluster.inputs import CachedBuild
from hack.realcluster.testing import NotBuilt, binaries, running_control_plane


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
