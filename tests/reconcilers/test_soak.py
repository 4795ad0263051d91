"""The soak in CI: `hack.soak` for under a minute with every fault kind (5% 503/429, dropped
watches, compaction, an API-server restart, leader kills, pod kills, a node NotReady),
asserting its invariants. SOAK_MINUTES and SOAK_GRAPHS make it longer or bigger."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hack.localcluster.server import LocalCluster
from hack.soak.growth import Growth, Sample
from hack.soak.run import Soak, SoakConfig, broken


# 45 s of faults, then convergence from the last of them: 70 s on a quiet machine, over the
# suite's 120 s under CI's load (2026-11-28).
@pytest.mark.timeout(300)
async def test_short_soak_keeps_every_invariant(sim_cluster: LocalCluster,
                                                tmp_path: Path) -> None:
    config = SoakConfig(minutes=float(os.environ.get("SOAK_MINUTES", "0.75")),
                        graphs=int(os.environ.get("SOAK_GRAPHS", "6")),
                        watch_drop_every=8, compact_every=12, restart_every=20,
                        kill_every=20, pod_kill_every=8, node_down_every=18)
    figures = await Soak(sim_cluster, tmp_path / "sim" / "kubeconfig", tmp_path, config).run()
    print(figures)
    assert figures["injectedKills"] >= 1 and figures["graphs"] >= 1
    assert not broken(figures), figures


def test_growth_is_fitted_per_leadership_term_after_its_warm_up() -> None:
    growth = Growth(warmup=10.0, min_samples=3)
    mib = 2**20
    # A standby (never leader), then a term whose warm-up climbs steeply and then grows
    # 1 MiB a minute, then a new replica's term that is too short to fit.
    for t in range(0, 40, 2):
        growth.add("op-0", Sample(float(t), 50 * mib, leader=False))
    for t in range(0, 60, 2):
        rss = (60 + 10 * t) * mib if t < 10 else 160 * mib + int(mib * t / 60)
        growth.add("op-1", Sample(float(t), rss, leader=True, queue_depth=5 if t < 10 else 0))
    growth.add("op-1", Sample(61.0, 0, leader=False))
    for t in range(62, 70, 2):
        growth.add("op-2", Sample(float(t), 300 * mib, leader=True, queue_depth=900))
    figures = growth.figures()
    assert figures["steadyLeaderTerms"] == 1
    assert figures["rssSlopeMiBPerMin"] == 1.0
    assert figures["queueSlopePerMin"] == 0.0
    assert figures["queueDepthMax"] == 900
    assert figures["rssPeakMiB"] == 300.0
