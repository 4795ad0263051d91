"""Which namespaces a cluster-wide operator leaves alone.

Two kinds, as in the original operator: a namespace whose name contains `ephemeral`, and a
namespace claimed by a namespace-restricted operator, that is one holding a marker Lease
(`namespace_lease.LEASE_NAME`) whose renewTime + leaseDurationSeconds is still ahead. Expiry
is checked on every lookup, so a crashed restricted operator's marker stops counting once
it runs out, without any event.

`admits` is the manager's request filter: every controller drops keys of such namespaces
when a worker takes them (which also catches retries queued before the claim). Where the
original waited for the next event, `watch_releases` hands a namespace back at once when
its marker is deleted or expires, by resyncing that namespace in every controller.

Only the markers are watched (a field selector on the name): a cluster's other Leases, the
nodes' heartbeats among them, never reach the cache.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import structlog

from controller.cache import Cache
from controller.informer import DeletedFinalStateUnknown, EventHandler
from controller.reconcile import Request
from controller.resource import LEASES
from reconcilers.operator.namespace_lease import LEASE_NAME, lease_expiry

Json = dict[str, Any]

#: A namespace whose name contains this is never reconciled by a cluster-wide operator.
EPHEMERAL = "ephemeral"

log = structlog.get_logger("reconcilers.operator.namespace_scope")


class NamespaceClaims:
    """The live marker Leases of every namespace, read from the manager's cache."""

    def __init__(self, cache: Cache, clock: Callable[[], float] = time.time) -> None:
        self.informer = cache.informer(LEASES, field_selector=f"metadata.name={LEASE_NAME}")
        self._clock = clock

    def claims(self) -> dict[str, float]:
        """Claimed namespace -> when its claim expires (epoch seconds)."""
        now = self._clock()
        held = {}
        for lease in self.informer.store.list():
            expiry = lease_expiry(lease)
            if expiry is not None and expiry > now:
                held[lease["metadata"]["namespace"]] = expiry
        return held

    def claimed(self, namespace: str) -> bool:
        lease = self.informer.store.get(namespace, LEASE_NAME)
        expiry = lease_expiry(lease) if lease is not None else None
        return expiry is not None and expiry > self._clock()

    async def admits(self, request: Request) -> bool:
        """False for a key of an ephemeral or claimed namespace (waits for the first list)."""
        if EPHEMERAL in request.namespace:
            return False
        if not self.informer.has_synced:
            await self.informer.wait_for_sync()
        if self.claimed(request.namespace):
            log.debug("skipping request, namespace claimed by a namespace-restricted operator",
                      namespace=request.namespace, name=request.name)
            return False
        return True

    async def watch_releases(self, on_release: Callable[[str], None]) -> None:
        """Call `on_release(namespace)` whenever a claim ends (marker deleted or expired);
        runs until cancelled."""
        changed = asyncio.Event()

        def touch(*_: Json | DeletedFinalStateUnknown) -> None:
            changed.set()

        self.informer.add_handler(EventHandler(on_add=touch, on_update=touch, on_delete=touch))
        await self.informer.wait_for_sync()
        held: dict[str, float] = {}
        while True:
            changed.clear()
            now_held = self.claims()
            for namespace in sorted(now_held.keys() - held.keys()):
                log.info("excluding namespace, claimed by a namespace-restricted operator",
                         namespace=namespace)
            for namespace in sorted(held.keys() - now_held.keys()):
                log.info("resuming namespace, its namespace-restricted operator is gone",
                         namespace=namespace)
                on_release(namespace)
            held = now_held
            wait = min(held.values(), default=None)
            try:
                async with asyncio.timeout(None if wait is None
                                           else max(0.0, wait - self._clock()) + 0.01):
                    await changed.wait()
            except TimeoutError:
                pass
