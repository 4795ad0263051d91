"""Running the manager in its namespace mode, as the original operator does (spec §7.4).

Namespace-restricted (`--restricted-namespace`): the marker Lease is claimed before anything
runs (exit 1 if it cannot be), renewed beside the manager, and deleted after a clean stop,
once the controllers have finished; losing it stops everything at once (exit 1).

Cluster-wide: every controller skips ephemeral namespaces and those a restricted operator
claims, and resyncs a namespace the moment its claim ends (`namespace_claims`). Admission
webhooks should admit objects of a claimed namespace unchecked: `claimed(namespace)`.
"""

from __future__ import annotations

import asyncio

from controller.manager import Manager
from reconcilers.operator.namespace_claims import NamespaceClaims
from reconcilers.operator.namespace_lease import MarkerLease, MarkerLeaseConfig


class NamespaceScope:
    """One manager's namespace mode: restricted when `marker` is given, else cluster-wide.

    Built before the manager runs (the request filter must be in place when its controllers
    start); `run` then runs the manager.
    """

    def __init__(self, manager: Manager, marker: MarkerLeaseConfig | None) -> None:
        self.manager = manager
        self.marker = marker
        self.claims = NamespaceClaims(manager.cache) if marker is None else None
        if self.claims is not None:
            manager.add_request_filter(self.claims.admits)

    def claimed(self, namespace: str) -> bool:
        """True when another (restricted) operator owns `namespace` now; never when we are
        the restricted one."""
        return self.claims is not None and self.claims.claimed(namespace)

    async def run(self) -> None:
        """Run the manager until it stops; raises what stopped it (LeadershipLost,
        NamespaceScopeLost)."""
        try:
            if self.marker is None:
                await self._run_cluster_wide()
            else:
                await self._run_restricted(self.marker)
        except BaseExceptionGroup as group:
            # The first failure is why everything stopped; the others are its echoes.
            raise group.exceptions[0] from None

    async def _run_cluster_wide(self) -> None:
        assert self.claims is not None
        async with asyncio.TaskGroup() as tg:
            releases = tg.create_task(self.claims.watch_releases(self.manager.resync),
                                      name="namespace claims")
            try:
                await self.manager.run()
            finally:
                releases.cancel()

    async def _run_restricted(self, config: MarkerLeaseConfig) -> None:
        manager = self.manager
        lease = MarkerLease(manager.client, config)
        try:
            await lease.claim()
        except BaseException:
            await manager.client.close()
            raise
        async with asyncio.TaskGroup() as tg:
            renewal = tg.create_task(lease.hold(), name="namespace-scope lease")

            async def stop(clean: bool) -> None:
                # Renewals end before the delete, or one could re-create the marker after it.
                renewal.cancel()
                await asyncio.wait([renewal])
                if clean:
                    await lease.release()

            manager.add_stop_hook(stop)
            await manager.run()
