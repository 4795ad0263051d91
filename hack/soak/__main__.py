"""`python -m hack.soak [--minutes M] [--graphs N] ...`: a soak against a local cluster of its
own (simulation on); a table of figures, then one JSON object on the last line. Exit 1 when an
invariant is broken."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from dataclasses import fields
from pathlib import Path
from typing import Any

from hack.localcluster.simulation import SimulationConfig
from hack.localcluster.simulation.config import NodeSpec
from hack.localcluster.testing import running_cluster
from hack.soak.run import Soak, SoakConfig, broken


def nodes_for(graphs: int) -> list[NodeSpec]:
    """Room for every pod the churn can ask for (a graph's frontend and up to two decode
    replicas, a profiling Job, a model's pods), twice over: a graph left pending because
    the simulated nodes are full would measure the test bed, not the operator."""
    count = max(4, -(-graphs * 8 // 110))
    return [NodeSpec(name=f"soak-node-{i}", cpu="10000", memory="100Ti", pods=110, gpus=64,
                     zone=f"zone-{'ab'[i % 2]}") for i in range(count)]


async def soak(config: SoakConfig, work: Path) -> dict[str, Any]:
    simulation = SimulationConfig(nodes=nodes_for(config.graphs))
    async with running_cluster(work, bookmark_interval=0.2, simulation=simulation) as cluster:
        return await Soak(cluster, work / "kubeconfig", work, config).run()


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m hack.soak")
    for f in fields(SoakConfig):
        parser.add_argument("--" + f.name.replace("_", "-"), type=type(f.default),
                            default=f.default)
    parser.add_argument("--work-dir", type=Path, default=None)
    args = parser.parse_args()
    config = SoakConfig(**{f.name: getattr(args, f.name) for f in fields(SoakConfig)})
    with tempfile.TemporaryDirectory(prefix="soak-") as tmp:
        work = args.work_dir or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        figures = asyncio.run(soak(config, work))
    for key, value in figures.items():
        if not isinstance(value, dict):
            print(f"{key:<24} {value}")
    problems = broken(figures)
    for problem in problems:
        print("BROKEN", problem)
    print(json.dumps(figures))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
