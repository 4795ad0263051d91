"""Run a real control plane: `python -m hack.realcluster --port 0 --kubeconfig PATH`.

The same contract as `python -m hack.localcluster`: prints one line `ready <url>` on stdout once
kube-apiserver's /readyz (and the controller-manager's and scheduler's /healthz) answer ok,
then runs until SIGTERM or SIGINT and stops every child. Builds the binaries first when they
are not cached (unless DYNAMO_REALCLUSTER_BUILD=0).
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path

from .build import ensure_built
from .control_plane import DEFAULT_ADMISSION_PLUGINS, DEFAULT_AUTHORIZATION_MODE, ControlPlane

AUTHORIZERS = ("AlwaysAllow", "AlwaysDeny", "Node", "RBAC")


def authorization_mode(value: str) -> str:
    modes = [m.strip() for m in value.split(",") if m.strip()]
    unknown = [m for m in modes if m not in AUTHORIZERS]
    if not modes or unknown:
        raise argparse.ArgumentTypeError(f"modes are a comma list of {', '.join(AUTHORIZERS)}")
    return ",".join(modes)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m hack.realcluster",
                                     description="A real Kubernetes control plane (v1.20.2)"
                                                 " on loopback, for tests.")
    parser.add_argument("--port", type=int, default=6443, help="port (0 picks a free one)")
    parser.add_argument("--kubeconfig", type=Path, required=True,
                        help="where to write an admin kubeconfig (group system:masters)")
    parser.add_argument("--data-dir", type=Path, default=None,
                        help="keep etcd's data and the certificates here across restarts"
                             " (default: a temporary directory, removed on exit)")
    parser.add_argument("--authorization-mode", type=authorization_mode,
                        default=DEFAULT_AUTHORIZATION_MODE,
                        help=f"kube-apiserver's authorizers (default {DEFAULT_AUTHORIZATION_MODE}"
                             ", as real clusters; RBAC or AlwaysAllow also work)")
    parser.add_argument("--enable-admission-plugins", default=",".join(DEFAULT_ADMISSION_PLUGINS),
                        metavar="PLUGIN[,PLUGIN...]",
                        help="admission plugins on top of kube-apiserver's defaults"
                             " (default: NodeRestriction, as kubeadm)")
    parser.add_argument("--audit", action="store_true",
                        help="write kube-apiserver's audit log (hack/realcluster/audit.py's"
                             " policy) to <data dir>/logs/audit.log")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    binaries = ensure_built(echo=True)
    if binaries is None:
        print("the real control plane is not built and DYNAMO_REALCLUSTER_BUILD=0;"
              " run `python -m hack.realcluster.build`", file=sys.stderr)
        return 2
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    plane = ControlPlane(binaries, data_dir=args.data_dir, port=args.port,
                         authorization_mode=args.authorization_mode, audit=args.audit,
                         admission_plugins=tuple(
                             p for p in args.enable_admission_plugins.split(",") if p))
    try:
        plane.start()
        plane.write_kubeconfig(args.kubeconfig)
        print(f"ready {plane.url}", flush=True)
        waits = ", ".join(f"{name} {seconds} s" for name, seconds in plane.phases.items())
        print(f"started in {plane.startup_seconds:.1f} s (healthy after: {waits})",
              file=sys.stderr, flush=True)
        if args.audit:
            print(f"audit log: {plane.layout.audit_log}", file=sys.stderr, flush=True)
        while not stop.wait(1.0):
            if exited := plane.exited():
                print(f"exited: {', '.join(exited)}", file=sys.stderr)
                return 1
    finally:
        plane.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
