"""The fuzzer in CI: hypothesis-drawn objects of the five kinds, valid and mutated, created
against the simulated cluster with the operator process and its webhooks running
(`hack/fuzz`). Every object is refused naming a field, or settles; the operator logs no error,
never exits, and stays within its write bounds.

FUZZ_EXAMPLES sets the number of examples (default 80, about half a minute); FUZZ_SEED draws a
different set (default: the same derandomized set every run). `python -m hack.fuzz` is the
long run.
"""

from __future__ import annotations

import os
from pathlib import Path

from hack.fuzz.run import FuzzSettings
from hack.fuzz.session import fuzz_session
from hack.localcluster.server import LocalCluster


async def test_fuzzed_objects_are_refused_or_settle(sim_cluster: LocalCluster,
                                                    tmp_path: Path) -> None:
    examples = int(os.environ.get("FUZZ_EXAMPLES", "80"))
    seed = os.environ.get("FUZZ_SEED")
    report = await fuzz_session(sim_cluster, tmp_path / "sim" / "kubeconfig", tmp_path,
                                examples, seed=int(seed) if seed else None,
                                fuzz_settings=FuzzSettings(settle_timeout=10.0))
    figures = report.figures()
    print(figures)
    assert figures["examples"] == examples
    assert not report.violations, "\n".join(report.violations)
