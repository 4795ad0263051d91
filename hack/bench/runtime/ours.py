"""The benchmark operator on this project's runtime: one ConfigMap per Widget.

Run as `python -m hack.bench.runtime.ours KUBECONFIG NAMESPACE WORKERS QPS USER_AGENT [BURST
[PROFILE]]` (QPS 0: no client-side limit; BURST 0: 1.5 x QPS); the driver counts the requests
sent with USER_AGENT. With PROFILE, the whole run is profiled (cProfile) into that file.
"""

from __future__ import annotations

import asyncio
import contextlib
import cProfile
import sys
from pathlib import Path

from controller import lean_imports

# As the operator's entry point does (`reconcilers.operator.cli`): kubernetes_asyncio's
# transport without its generated client, installed before anything imports the package.
lean_imports.install()

from controller.client import ClientConfig  # noqa: E402
from controller.errors import Conflict, NotFound  # noqa: E402
from controller.handlers import CREATE_IGNORED  # noqa: E402
from controller.manager import Manager, ManagerConfig  # noqa: E402
from controller.reconcile import Request  # noqa: E402
from controller.resource import CONFIG_MAPS, Resource  # noqa: E402
from controller.signals import stop_on_signals  # noqa: E402

from .common import GROUP, KIND, PLURAL, VERSION, child_config_map  # noqa: E402

WIDGETS = Resource(GROUP, VERSION, PLURAL, KIND)


async def main(kubeconfig: Path, namespace: str, workers: int, qps: float,
               user_agent: str, burst: int = 0) -> None:
    mgr = await Manager.create(ManagerConfig(
        kubeconfig=kubeconfig, namespace=namespace, status_host="127.0.0.1", status_port=0,
        client=ClientConfig(qps=qps or None, burst=burst or max(1, int(qps * 1.5)),
                            user_agent=user_agent)))

    async def reconcile(request: Request) -> None:
        try:
            owner = await mgr.cache.get(WIDGETS, request.namespace, request.name)
        except NotFound:
            return
        if owner["metadata"].get("deletionTimestamp"):
            return
        want = child_config_map(owner)
        try:
            have = await mgr.cache.get(CONFIG_MAPS, request.namespace,
                                       want["metadata"]["name"])
        except NotFound:
            # A Conflict means it was created meanwhile; its watch event brings us back.
            with contextlib.suppress(Conflict):
                await mgr.client.create(CONFIG_MAPS, want)
            return
        if have.get("data") != want["data"]:
            await mgr.client.patch(CONFIG_MAPS, request.namespace, want["metadata"]["name"],
                                   {"data": want["data"]})

    # As the operator's controllers: the creation of a child it made itself wakes nothing (its
    # updates and deletes do, so drift is still repaired).
    mgr.add_controller("widget", reconcile, for_=WIDGETS, owns=[CONFIG_MAPS],
                       owns_predicate=CREATE_IGNORED, max_concurrent_reconciles=workers)
    stop_on_signals(mgr.stop)
    await mgr.run()


def run(argv: list[str]) -> None:
    burst = int(argv[5]) if len(argv) > 5 else 0
    profile = cProfile.Profile() if len(argv) > 6 else None
    if profile is not None:
        profile.enable()
    try:
        asyncio.run(main(Path(argv[0]), argv[1], int(argv[2]), float(argv[3]), argv[4], burst))
    finally:
        if profile is not None:
            profile.disable()
            profile.dump_stats(argv[6])


if __name__ == "__main__":
    run(sys.argv[1:])
