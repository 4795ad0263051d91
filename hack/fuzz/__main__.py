"""`python -m hack.fuzz [--examples N] [--seed S] [--no-webhooks]`: a fuzz session against a
local cluster of its own (simulation on); a table of outcomes, the violations, and one JSON
object of figures on the last line. Exit 1 when any violation was found."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

from hack.fuzz.session import fuzz_session
from hack.localcluster.simulation import SimulationConfig
from hack.localcluster.testing import running_cluster


async def main_async(examples: int, seed: int | None, webhooks: bool,
                     keep: Path | None = None) -> int:
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="fuzz-") as tmp:
        work = keep or Path(tmp)
        async with running_cluster(work, bookmark_interval=0.2,
                                   simulation=SimulationConfig()) as cluster:
            report = await fuzz_session(cluster, work / "kubeconfig", work, examples,
                                        seed=seed, webhooks=webhooks)
    figures = report.figures()
    figures["seconds"] = round(time.monotonic() - started, 1)
    for key in ("results", "kinds", "mutations"):
        print(f"{key}:")
        for name, count in figures[key].items():
            print(f"  {name:<40} {count:>6}")
    for violation in report.violations:
        print("VIOLATION", violation)
    print(json.dumps(figures))
    return 1 if report.violations else 0


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m hack.fuzz")
    parser.add_argument("--examples", type=int, default=200)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--no-webhooks", action="store_true")
    parser.add_argument("--work-dir", type=Path, default=None,
                        help="keep the operator's log and the kubeconfig here")
    args = parser.parse_args()
    if args.work_dir is not None:
        args.work_dir.mkdir(parents=True, exist_ok=True)
    return asyncio.run(main_async(args.examples, args.seed, not args.no_webhooks,
                                  args.work_dir))


if __name__ == "__main__":
    sys.exit(main())
