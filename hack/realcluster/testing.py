"""Test helpers shipped with the real control plane, analogous to hack/localcluster/testing.

`running_control_plane` is synchronous (the children are plain processes): call it from the
main thread, e.g. in a session-scoped fixture. The kubectl runner and `eventually` of the local
cluster's helpers work against it unchanged.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import yaml

from ..localcluster.testing import Kubectl, eventually
from ..our_crds import our_crds
from .build import BUILD_ENV, ensure_built
from .control_plane import ControlPlane
from .inputs import CachedBuild


class NotBuilt(RuntimeError):
    """The binaries are not cached and building is switched off."""


def binaries(*, allow_build: bool | None = None) -> CachedBuild:
    """The cached binaries, built first unless DYNAMO_REALCLUSTER_BUILD=0 (then NotBuilt)."""
    entry = ensure_built(allow_build=allow_build, echo=True)
    if entry is None:
        raise NotBuilt(f"the real control plane is not built and {BUILD_ENV}=0:"
                       " run `python -m hack.realcluster.build` first")
    return entry


@contextmanager
def running_control_plane(tmp_dir: Path, *, build: CachedBuild | None = None,
                          **settings: object) -> Iterator[ControlPlane]:
    """A started control plane with an admin kubeconfig at `tmp_dir/kubeconfig`; stopped on
    exit. `settings` are ControlPlane's fields (port, data_dir, authorization_mode, ...)."""
    plane = ControlPlane(build or binaries(), **settings)  # type: ignore[arg-type]
    plane.start()
    try:
        plane.write_kubeconfig(tmp_dir / "kubeconfig")
        yield plane
    finally:
        plane.stop()


async def install_our_crds(kubectl: Kubectl) -> None:
    """Our CRDs as the test bed converts them (`hack.our_crds`), applied client-side without
    kubectl's schema check: 1.20's typed schema of CRDs lacks `x-kubernetes-validations`
    (a server-side apply is refused too, "field not declared in schema"), and the server
    drops those rules. Returns once they are Established and discovery serves them."""
    docs = our_crds()
    await kubectl("apply", "--validate=false", "-f", "-", stdin=yaml.safe_dump_all(docs))
    await kubectl("wait", "--for=condition=Established", "--timeout=30s",
                  *[f"crd/{d['metadata']['name']}" for d in docs])

    async def served() -> bool:
        return (await kubectl.run("get", "dynamographdeployments.v1alpha1.nvidia.com",
                                  "-A")).code == 0
    # The API server's discovery lags the Established condition a little.
    await eventually(served, within=30, interval=0.5, what="our kinds served")
