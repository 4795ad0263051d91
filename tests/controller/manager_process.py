"""A manager as its own process, for the SIGTERM test: prints `leading <port>` once it holds
the lease, runs until a signal, then prints `stopped` and exits 0."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from controller.client import ClientConfig
from controller.informer import WatchSettings
from controller.leader_election import LeaderElectionConfig
from controller.manager import Manager, ManagerConfig
from controller.reconcile import Request
from controller.resource import CONFIG_MAPS
from controller.signals import stop_on_signals


async def main(kubeconfig: Path, identity: str) -> None:
    mgr = await Manager.create(ManagerConfig(
        kubeconfig=kubeconfig, client=ClientConfig(qps=None),
        watch=WatchSettings(bookmark_interval=0.5, min_watch_timeout=30.0),
        status_host="127.0.0.1", status_port=0, graceful_shutdown_timeout=2.0,
        leader_election=LeaderElectionConfig(name="sigterm-lock", namespace="default",
                                             identity=identity, lease_duration=15.0,
                                             renew_deadline=10.0, retry_period=0.2)))

    async def reconcile(request: Request) -> None:
        await asyncio.sleep(0.5)  # a slow reconcile is still in flight at SIGTERM

    mgr.add_controller("configmaps", reconcile, for_=CONFIG_MAPS, max_concurrent_reconciles=2)
    stop_on_signals(mgr.stop)
    task = asyncio.create_task(mgr.run())
    while True:
        if mgr.elector is not None and mgr.elector.is_leader:
            break
        await asyncio.sleep(0.02)
    print(f"leading {mgr.status_port}", flush=True)
    await task
    print("stopped", flush=True)


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]), sys.argv[2]))
