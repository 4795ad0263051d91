"""The namespace-scope marker Lease: how a namespace-restricted operator claims its namespace.

A restricted operator keeps Lease `dynamo-operator-namespace-scope` in its namespace, held by
`namespace-restricted-operator-<version>`, renewed every renew interval (re-created if
someone deleted it). A cluster-wide operator leaves every namespace with a live marker alone
(`namespace_claims`). After `max_failures` renewals in a row fail, the restricted operator
must stop before the marker expires, or both operators would reconcile the same objects:
`hold` then raises `NamespaceScopeLost` and the process exits 1. A clean stop deletes the
marker, so the cluster-wide operator takes the namespace back at once.

These are the original operator's name, holder, defaults (30 s, 10 s) and failure budget.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import aiohttp
import structlog

from controller.client import KubeClient
from controller.errors import ApiError, NotFound
from controller.resource import LEASES

Json = dict[str, Any]

LEASE_NAME = "dynamo-operator-namespace-scope"
HOLDER_PREFIX = "namespace-restricted-operator-"
#: Failures worth a retry; anything else is a bug and propagates.
_TRANSIENT = (ApiError, aiohttp.ClientError, TimeoutError, OSError)

log = structlog.get_logger("reconcilers.operator.namespace_scope")


class NamespaceScopeLost(Exception):
    """The marker could not be created or renewed: the namespace is no longer ours."""


@dataclass(frozen=True)
class MarkerLeaseConfig:
    """Where the marker lives and how fast it is renewed (seconds)."""

    namespace: str
    operator_version: str
    duration: float = 30.0
    renew_interval: float = 10.0
    #: How long a clean stop waits for the marker's deletion.
    release_timeout: float = 5.0

    def __post_init__(self) -> None:
        if not 0 < self.renew_interval < self.duration:
            raise ValueError(f"need 0 < renew interval ({self.renew_interval}s) < lease "
                             f"duration ({self.duration}s)")

    @property
    def holder_identity(self) -> str:
        return HOLDER_PREFIX + self.operator_version

    @property
    def max_failures(self) -> int:
        """Consecutive failed renewals tolerated: one interval fewer than fit in the
        duration (at least 1), so that the operator exits before its marker expires."""
        fit = round(self.duration * 1e9) // round(self.renew_interval * 1e9)
        return max(1, fit - 1)

    @property
    def duration_seconds(self) -> int:
        # Rounded up: a marker that says less than we hold it for invites a takeover.
        return max(1, math.ceil(self.duration))


def micro_time(at: float) -> str:
    """A Kubernetes MicroTime (RFC 3339, microseconds, UTC)."""
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def lease_expiry(lease: Json) -> float | None:
    """When a marker expires (epoch seconds): renewTime + leaseDurationSeconds; None when
    either is missing or unreadable, which counts as expired."""
    spec = lease.get("spec") or {}
    renewed, seconds = spec.get("renewTime"), spec.get("leaseDurationSeconds")
    if not isinstance(renewed, str) or not isinstance(seconds, int):
        return None
    try:
        return datetime.fromisoformat(renewed).timestamp() + seconds
    except ValueError:
        return None


class MarkerLease:
    """Creates, renews and deletes the marker of one restricted namespace."""

    def __init__(self, client: KubeClient, config: MarkerLeaseConfig,
                 clock: Callable[[], float] = time.time) -> None:
        self.client = client
        self.config = config
        self._clock = clock
        self._failures = 0
        self._log = log.bind(lease=f"{config.namespace}/{LEASE_NAME}",
                             holder=config.holder_identity)

    async def claim(self) -> None:
        """Create or renew the marker once; NamespaceScopeLost if that fails."""
        c = self.config
        self._log.info("claiming namespace", lease_duration=c.duration,
                       renew_interval=c.renew_interval, max_failures=c.max_failures)
        try:
            await self._create_or_renew()
        except _TRANSIENT as err:
            raise NamespaceScopeLost(f"cannot create lease {c.namespace}/{LEASE_NAME}: "
                                     f"{err!r}") from None

    async def hold(self) -> None:
        """Renew every interval until cancelled; NamespaceScopeLost after `max_failures`
        consecutive failures."""
        c = self.config
        while True:
            await asyncio.sleep(c.renew_interval)
            try:
                await self._create_or_renew()
            except _TRANSIENT as err:
                self._failures += 1
                self._log.warning("could not renew the namespace-scope lease",
                                  error=repr(err), failures=self._failures,
                                  max_failures=c.max_failures)
                if self._failures >= c.max_failures:
                    raise NamespaceScopeLost(
                        f"lease {c.namespace}/{LEASE_NAME} not renewed {self._failures} times "
                        "in a row; exiting before a cluster-wide operator takes the "
                        "namespace") from None
                continue
            if self._failures:
                self._log.info("namespace-scope lease renewed again",
                               previous_failures=self._failures)
                self._failures = 0

    async def release(self) -> None:
        """Delete the marker (a clean stop); failures are logged, never raised."""
        c = self.config
        try:
            await self.client.request("DELETE", LEASES.path(c.namespace, LEASE_NAME),
                                      request_timeout=c.release_timeout)
            self._log.info("released namespace")
        except NotFound:
            pass
        except _TRANSIENT as err:
            self._log.warning("could not delete the namespace-scope lease", error=repr(err))

    async def _create_or_renew(self) -> None:
        c = self.config
        # No request may outlive the interval: a hung call is a failed renewal.
        budget = min(self.client.config.timeout, c.renew_interval)
        now = micro_time(self._clock())
        mine = {"holderIdentity": c.holder_identity,
                "leaseDurationSeconds": c.duration_seconds, "renewTime": now}
        try:
            lease = await self.client.request("GET", LEASES.path(c.namespace, LEASE_NAME),
                                              request_timeout=budget)
        except NotFound:
            body = {"apiVersion": LEASES.api_version, "kind": LEASES.kind,
                    "metadata": {"name": LEASE_NAME, "namespace": c.namespace},
                    "spec": {**mine, "acquireTime": now}}
            await self.client.request("POST", LEASES.path(c.namespace), body=body,
                                      request_timeout=budget)
            self._log.info("created the namespace-scope lease")
            return
        lease["spec"] = {**(lease.get("spec") or {}), **mine}
        await self.client.request("PUT", LEASES.path(c.namespace, LEASE_NAME), body=lease,
                                  request_timeout=budget)
