"""The soak in CI: `hack.soak` for under a minute with every fault kind (5% 503/429, dropped
watches, compaction, an API-server restart, leader kills, pod kills, a node NotReady),
asserting its invariants. SOAK_MINUTES and SOAK_GRAPHS make it longer or bigger."""

from __future__ import annotations

import os
from pathlib import Path

from hack.localcluster.server import LocalCluster
from hack.soak.run import Soak, SoakConfig, broken


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
