"""Differential conformance: every case of `hack.realcluster.differential.cases` runs against
the real Kubernetes 1.20 control plane and against the local server (RBAC on, as the real one),
and their normalized outcomes are compared. A difference must be explained by Kubernetes'
history (`explained.EXPLAINED`); any other difference is a deviation of the local server and
fails the test. An explained case that answers alike again is printed, so that its entry can
go. The report line says how many of each there were."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from hack.localcluster.conversion.toy_webhook import ToyConversionWebhook
from hack.localcluster.testing import running_cluster
from hack.realcluster.control_plane import ControlPlane
from hack.realcluster.differential import runner
from hack.realcluster.differential.cases import ALL, conversion, managed_versions, setup
from hack.realcluster.differential.explained import EXPLAINED
from hack.realcluster.differential.target import Target

pytestmark = pytest.mark.timeout(300, func_only=True)


@pytest.fixture
async def targets(control_plane: ControlPlane, tmp_path: Path
                  ) -> AsyncIterator[tuple[Target, Target]]:
    toy = await ToyConversionWebhook().start()
    try:
        async with running_cluster(tmp_path / "local", authorization_mode="RBAC"):
            real = Target.from_kubeconfig("real", control_plane.write_kubeconfig(
                tmp_path / "real" / "kubeconfig"))
            local = Target.from_kubeconfig("local", tmp_path / "local" / "kubeconfig")
            try:
                await asyncio.gather(setup(real, toy.client_config()),
                                     setup(local, toy.client_config()))
                yield real, local
            finally:
                # The conversion CRDs go while their webhooks still answer (see cases/conversion).
                await asyncio.gather(conversion.remove(real), conversion.remove(local),
                                     managed_versions.remove(real),
                                     managed_versions.remove(local))
                await asyncio.gather(real.close(), local.close())
    finally:
        await toy.stop()
        toy.tls.close()


async def test_both_servers_answer_alike(targets: tuple[Target, Target],
                                         capsys: pytest.CaptureFixture[str]) -> None:
    real, local = targets
    report = await runner.differential(real, local, ALL, EXPLAINED)
    with capsys.disabled():  # the report line shows in every run, not only with -s
        print(f"\n{report.line()}")
        if report.stale:
            print(f"recorded but now the same: {', '.join(report.stale)}")
    assert len(ALL) >= 200
    assert not report.unexplained, f"{report.line()}\n{report.details()}"


def test_tables_name_cases_that_exist() -> None:
    ids = {c.id for c in ALL}
    assert not set(EXPLAINED) - ids
