"""Drive the rollout benchmark: `python -m hack.bench.rollout --graphs N [--chart PATH]`.

A fresh local cluster (simulation on, roomy nodes) runs in this process; N disaggregated graphs
(two decode and two prefill workers, ready 2 s after they run, 1 s to stop) are created and
the `dynamo-operator` process makes them Ready; then every graph's worker image changes at
once, and one sampler (`sampler.WatchSampler`: a watch of the pods and one of the graphs,
every change judged) follows each graph until it is done. The same is then run, on a fresh
cluster, by the peer: the operator of before worker generations (`peer`), since ours has no
switch that turns the rollout logic off. The machine's speed is measured in the same run
(`hack.bench.calibration`). The chart of the first graph's rollout is written to --chart. The
last line printed is one JSON object; the run fails (exit 1) on impossible figures, a
broken invariant of ours, or a sampler that lost events. Timeouts grow with N
(`default_timeout`), and the nodes are sized for every graph's surge (`graphs.nodes_for`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hack.bench import calibration
from hack.bench.checks import ImpossibleFigures, report_and_exit_code
from hack.bench.rollout_chart import write_rollout_chart
from hack.bench.server_gc import MODES

from .figures import checked, figures
from .peer import commit_before_generations, peer_tree
from .run import Options, run


def default_timeout(graphs: int) -> float:
    """Seconds to wait for Ready, and again for the rollouts: ten minutes, and 1.5 s more per
    graph (N=1,000 took about 130 s to Ready in the graphs benchmark on a loaded machine)."""
    return 600.0 + 1.5 * graphs


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m hack.bench.rollout")
    parser.add_argument("--graphs", type=int, default=10, help="graphs rolled out at once")
    parser.add_argument("--chart", type=Path, default=None,
                        help="write the PNG chart of the first graph's rollout here")
    parser.add_argument("--ready-after", type=float, default=2.0,
                        help="seconds a worker pod takes to turn ready once running")
    parser.add_argument("--stop-after", type=float, default=1.0,
                        help="seconds a worker pod takes to stop")
    parser.add_argument("--timeout", type=float, default=None,
                        help="seconds to wait for Ready, and again for the rollouts "
                             "(default: 600 + 1.5 per graph)")
    parser.add_argument("--workers", type=int, default=None,
                        help="--max-concurrent-reconciles of both operators (default: theirs, "
                             "one worker per controller)")
    parser.add_argument("--server-gc", choices=MODES, default="default",
                        help="freeze: while each operator runs, the local server in this "
                             "process makes no full garbage collection (hack.bench.server_gc),"
                             " which at 1,000 graphs would stop it for seconds")
    parser.add_argument("--no-peer", dest="peer", action="store_false",
                        help="skip the peer run (its figures are then null)")
    return parser.parse_args(argv)


async def bench(args: argparse.Namespace) -> dict[str, Any]:
    cal = calibration.checked()
    workdir = Path(tempfile.mkdtemp(prefix="bench-rollout-"))
    timeout = args.timeout if args.timeout is not None else default_timeout(args.graphs)
    opts = Options(args.graphs, args.ready_after, args.stop_after, timeout, workdir,
                   workers=args.workers, server_gc=args.server_gc)
    ours = await run(opts)
    result = checked(figures(ours), "ours")
    if args.chart is not None:
        colours = write_rollout_chart(args.chart, ours.sampler.series[ours.names[0]])
        result["chart"] = {"path": str(args.chart), "graph": ours.names[0],
                           "lines": {k: "#{:02x}{:02x}{:02x}".format(*c)
                                     for k, c in colours.items()}}
    print(f"ours: {json.dumps(result)}", file=sys.stderr)
    peer: dict[str, Any] | None = None
    reason = "--no-peer"
    commit = commit_before_generations() if args.peer else None
    if args.peer and commit is None:
        reason = "no commit without worker generations in the last 400"
    if commit is not None:
        tree = peer_tree(workdir / "peer", commit)
        outcome = await run(Options(**{**opts.__dict__, "tree": tree}))
        peer = {"commit": commit[:12], **checked(figures(outcome), "peer")}
        peer.pop("phases_of_first_graph", None)
        print(f"peer: {json.dumps(peer)}", file=sys.stderr)
    return {"graphs": args.graphs, "workers": args.workers, "server_gc": args.server_gc,
            "ready_after": args.ready_after,
            "stop_after": args.stop_after, **result,
            "peer": peer, "peer_reason": None if peer is not None else reason,
            "peer_is": "the operator of the commit before worker generations (no switch turns "
                       "the rollout logic off)", **cal}


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        print(json.dumps(asyncio.run(bench(args))))
    except ImpossibleFigures as err:
        return report_and_exit_code(err)
    return 0


if __name__ == "__main__":
    sys.exit(main())
