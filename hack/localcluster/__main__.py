"""Run the local cluster: `python -m hack.localcluster --port 0 --kubeconfig PATH`.

Prints one line `ready <url>` on stdout once it serves, then runs until SIGTERM or SIGINT.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from pathlib import Path

from .server import ClusterConfig, LocalCluster
from .simulation import PARTS, Delays, SimulationConfig, load_nodes


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m hack.localcluster",
                                     description="A local Kubernetes API server for tests.")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", type=int, default=6443, help="port (0 picks a free one)")
    parser.add_argument("--kubeconfig", type=Path, required=True,
                        help="where to write a kubeconfig for this server")
    parser.add_argument("--data-dir", type=Path, default=None,
                        help="keep state (and certificates) here across restarts")
    parser.add_argument("--token", default=None, help="bearer token (default: random)")
    parser.add_argument("--no-simulation", action="store_true",
                        help="serve the bare API server, without simulated nodes and workloads")
    parser.add_argument("--nodes", type=Path, default=None, metavar="FILE",
                        help="YAML file listing the simulated nodes (default: 4 nodes with 8"
                             " GPUs each)")
    parser.add_argument("--disable", default="", metavar="PART[,PART...]",
                        help="simulation parts to switch off: " + ", ".join(sorted(PARTS)))
    parser.add_argument("--time-scale", type=float, default=1.0,
                        help="multiply every simulated delay (pod start, readiness, ...)")
    parser.add_argument("--bookmark-interval", type=float, default=60.0,
                        help="seconds between watch bookmarks")
    parser.add_argument("--authorization-mode", choices=("AlwaysAllow", "RBAC"),
                        default="AlwaysAllow",
                        help="AlwaysAllow (default) or RBAC: authorize every request against"
                             " Roles, ClusterRoles and their bindings, as kube-apiserver does")
    parser.add_argument("--enable-admission-plugins", default="", metavar="PLUGIN[,PLUGIN...]",
                        help="admission plugins that are off by default:"
                             " OwnerReferencesPermissionEnforcement (needs RBAC)")
    return parser.parse_args(argv)


def simulation_config(args: argparse.Namespace) -> SimulationConfig | None:
    """The simulation the flags ask for (on unless --no-simulation)."""
    if args.no_simulation:
        return None
    disabled = {p.strip() for p in args.disable.split(",") if p.strip()}
    unknown = disabled - PARTS
    if unknown:
        raise SystemExit(f"--disable: unknown parts {sorted(unknown)}; known: {sorted(PARTS)}")
    config = SimulationConfig(parts=PARTS - disabled, delays=Delays().scaled(args.time_scale))
    if args.nodes is not None:
        config.nodes = load_nodes(args.nodes)
    return config


async def serve(args: argparse.Namespace) -> None:
    config = ClusterConfig(host=args.host, port=args.port, data_dir=args.data_dir,
                           bookmark_interval=args.bookmark_interval,
                           simulation=simulation_config(args),
                           authorization_mode=args.authorization_mode,
                           enable_admission_plugins=tuple(
                               p for p in args.enable_admission_plugins.split(",") if p))
    if args.token:
        config.token = args.token
    elif args.data_dir is not None:
        token_file = args.data_dir / "token"
        if token_file.exists():
            config.token = token_file.read_text().strip()
        else:
            args.data_dir.mkdir(parents=True, exist_ok=True)
            token_file.write_text(config.token)
    cluster = LocalCluster(config)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await cluster.start()
    try:
        cluster.write_kubeconfig(args.kubeconfig)
        print(f"ready {cluster.url}", flush=True)
        await stop.wait()
    finally:
        await cluster.stop()


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    asyncio.run(serve(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
