"""`python -m hack.nodesim --kubeconfig F [--nodes N --gpus G | --node-file FILE]`: run
simulated nodes and kubelets against that cluster until SIGTERM or Ctrl-C; prints
`ready <n> nodes` once they are registered and the pod watch has synced."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
from dataclasses import replace
from pathlib import Path

from controller.log_config import FORMATS, LEVELS, configure_logging
from hack.localcluster.simulation.config import load_nodes

from .config import NodeSimConfig, PodDelays, nodes
from .simulator import NodeSim


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m hack.nodesim", description=__doc__)
    p.add_argument("--kubeconfig", type=Path, required=True)
    p.add_argument("--nodes", type=int, default=2, help="how many nodes (default 2)")
    p.add_argument("--gpus", type=int, default=8, help="nvidia.com/gpu per node (default 8)")
    p.add_argument("--name-prefix", default="nodesim", help="nodes are <prefix>-0, -1, ...")
    p.add_argument("--node-file", type=Path, default=None, metavar="FILE",
                   help="the nodes from a YAML file, as the local cluster's --nodes reads it "
                        "(names, GPUs, topology; replaces --nodes, --gpus, --name-prefix)")
    p.add_argument("--pod-start", type=float, default=PodDelays.pod_start,
                   help="seconds from binding to running")
    p.add_argument("--ready-delay", type=float, default=None,
                   help="seconds from running to ready for a pod with a readiness probe"
                        " (default: the probe's initialDelaySeconds); a pod's"
                        " localcluster.dev/ready-after annotation comes first")
    p.add_argument("--stop-delay", type=float, default=PodDelays.container_stop,
                   help="seconds a container takes to exit on SIGTERM, at most the grace"
                        " period; a pod's localcluster.dev/stop-after annotation comes first")
    p.add_argument("--keep-nodes", action="store_true", help="leave the nodes on exit")
    p.add_argument("--log-level", choices=LEVELS, default="info")
    p.add_argument("--log-format", choices=FORMATS, default="console")
    return p


async def _main(args: argparse.Namespace) -> None:
    config = NodeSimConfig(
        nodes=load_nodes(args.node_file) if args.node_file else nodes(
            args.nodes, args.gpus, args.name_prefix),
        delays=replace(PodDelays(), pod_start=args.pod_start, ready_delay=args.ready_delay,
                       container_stop=args.stop_delay),
        delete_nodes_on_exit=not args.keep_nodes)
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    async with NodeSim(args.kubeconfig, config) as sim:
        print(f"ready {len(sim.node_names)} nodes", flush=True)
        running = asyncio.create_task(sim.wait())
        stopping = asyncio.create_task(stop.wait())
        await asyncio.wait([running, stopping], return_when=asyncio.FIRST_COMPLETED)
        for task in (running, stopping):
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await running


def main() -> None:
    args = _parser().parse_args()
    configure_logging(args.log_level, args.log_format)  # stderr: stdout carries `ready`
    asyncio.run(_main(args))


if __name__ == "__main__":
    main()
