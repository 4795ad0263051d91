"""One benchmark, this work tree against an earlier commit, in one run:
`python -m hack.bench.baseline [--base REV] [--rounds 2] [--tolerance 0.15] NAME [-- ARGS]`.

Figures of one machine on two days are not comparable (README, Performance), so "no slower
than before" is measured here: the base commit's tree is exported (`git archive`, nothing in
the repository changes), and `python -m hack.bench.NAME ARGS` runs in it and in this work tree,
alternately, `--rounds` times each, base first. Each side's figures are the medians of its
rounds. The table shows every figure both sides printed; the ones whose better direction is
known (`hack.bench.baseline.figures`) are judged, and the run exits 1 when one is worse than
`1 + tolerance` times the base's, naming it. `--report-only` never fails on figures.
The last line printed is one JSON object: base, head, tolerance, figures, regressions, and
this process's calibration of the machine (`hack.bench.calibration`; each side's own is among
the figures, never judged).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Sequence
from pathlib import Path

from hack.bench import calibration
from hack.bench.baseline.figures import Comparison, compare, regressions
from hack.bench.checks import ImpossibleFigures, report_and_exit_code

ROOT = Path(__file__).resolve().parents[3]


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m hack.bench.baseline")
    parser.add_argument("--base", default="HEAD~1", help="the commit to compare against")
    parser.add_argument("--rounds", type=int, default=2, help="runs per side, alternating")
    parser.add_argument("--tolerance", type=float, default=0.15,
                        help="how much worse a judged figure may be (0.15: 15%%)")
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds per run")
    parser.add_argument("--report-only", action="store_true",
                        help="print the comparison, never fail on figures")
    parser.add_argument("name", help="the benchmark: a package of hack.bench, e.g. apiserver")
    parser.add_argument("bench_args", nargs=argparse.REMAINDER,
                        help="after --: the benchmark's own arguments")
    args = parser.parse_args(argv)
    if args.bench_args[:1] == ["--"]:
        args.bench_args = args.bench_args[1:]
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    return args


def export_tree(rev: str, dest: Path) -> str:
    """Write the tree of `rev` into `dest`; return the full commit id."""
    commit = subprocess.run(["git", "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"],
                            cwd=ROOT, capture_output=True, text=True, check=True,
                            timeout=30).stdout.strip()
    archive = dest.with_suffix(".tar")
    subprocess.run(["git", "archive", "--format=tar", "-o", str(archive), commit], cwd=ROOT,
                   check=True, timeout=120)
    with tarfile.open(archive) as tar:
        tar.extractall(dest, filter="data")
    archive.unlink()
    return commit


def run_once(tree: Path, name: str, bench_args: list[str], timeout: float) -> dict[str, object]:
    """One run of the benchmark with `tree` first on the import path; its last JSON line."""
    done = subprocess.run([sys.executable, "-m", f"hack.bench.{name}", *bench_args],
                          cwd=tree, env=_env_for(tree), capture_output=True, text=True,
                          timeout=timeout, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"hack.bench.{name} in {tree} exited {done.returncode}:\n"
                           f"{done.stderr[-3000:]}")
    lines = done.stdout.strip().splitlines()
    result = json.loads(lines[-1]) if lines else None
    if not isinstance(result, dict):
        raise RuntimeError(f"hack.bench.{name} in {tree} printed no JSON object last")
    return result


def _env_for(tree: Path) -> dict[str, str]:
    env = dict(os.environ)
    # The venv's editable install would resolve the product's packages to this work tree;
    # the exported tree's own copies must win for the base side.
    env["PYTHONPATH"] = str(tree)
    return env


def table(rows: list[Comparison]) -> str:
    lines = [f"{'figure':52} {'base':>12} {'head':>12} {'worse by':>9}"]
    for row in rows:
        worse = "" if row.worse_by is None else f"{row.worse_by:.2f}x"
        lines.append(f"{row.key:52} {row.base:12.4g} {row.head:12.4g} {worse:>9}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        cal = calibration.checked()
    except ImpossibleFigures as err:
        return report_and_exit_code(err)
    with tempfile.TemporaryDirectory(prefix="bench-baseline-") as scratch:
        base_tree = Path(scratch) / "base"
        try:
            commit = export_tree(args.base, base_tree)
        except subprocess.CalledProcessError:
            print(f"cannot export the base {args.base!r}: not a commit of this repository",
                  file=sys.stderr)
            return 2
        base_runs, head_runs = [], []
        for round_no in range(args.rounds):
            print(f"round {round_no + 1}/{args.rounds}: base {commit[:12]}", flush=True)
            base_runs.append(run_once(base_tree, args.name, args.bench_args, args.timeout))
            print(f"round {round_no + 1}/{args.rounds}: head (this work tree)", flush=True)
            head_runs.append(run_once(ROOT, args.name, args.bench_args, args.timeout))
    rows = compare(base_runs, head_runs)
    worse = regressions(rows, args.tolerance)
    print(table(rows))
    if not rows:
        print("the two sides printed no figure in common", file=sys.stderr)
        return 1
    for row in worse:
        print(f"worse than the base: {row.key} {row.base:.4g} -> {row.head:.4g} "
              f"({row.worse_by:.2f}x, tolerance {1 + args.tolerance:.2f}x)", file=sys.stderr)
    print(json.dumps({
        "benchmark": args.name, "base": commit, "head": "work tree", "rounds": args.rounds,
        "tolerance": args.tolerance,
        "figures": {row.key: {"base": row.base, "head": row.head, "worse_by": row.worse_by}
                    for row in rows},
        "regressions": [row.key for row in worse], **cal,
    }))
    return 0 if args.report_only or not worse else 1


if __name__ == "__main__":
    sys.exit(main())
