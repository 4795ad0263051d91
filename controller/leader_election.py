"""Leader election on a coordination.k8s.io/v1 Lease, with client-go's rules.

A candidate takes the lease when it is free (no holder) or when the record it last saw has
not changed for a lease duration, measured on its own clock. The leader renews every retry
period; if it cannot renew within the renew deadline it has lost, and since the deadline is
shorter than the lease duration it stops before anyone else may take over. Released on a
clean stop: holder emptied and duration set to 1 s, so a successor need not wait.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import aiohttp
import structlog

from .client import KubeClient
from .errors import ApiError, Conflict, NotFound
from .metrics import Metrics
from .resource import LEASES

Json = dict[str, Any]

log = structlog.get_logger("controller.leader_election")

#: client-go's jitter on the acquire loop's retry period.
JITTER = 1.2

#: Writes a release may try when a cancelled renewal moved the lease under it.
RELEASE_ATTEMPTS = 3


def default_identity() -> str:
    """The pod name (HOSTNAME or POD_NAME) plus a uuid, so restarts never share an identity."""
    pod = os.environ.get("POD_NAME") or os.environ.get("HOSTNAME") or "unknown"
    return f"{pod}_{uuid.uuid4()}"


@dataclass
class LeaderElectionConfig:
    """Which lease and how fast; the durations default to controller-runtime's."""

    name: str
    namespace: str
    identity: str = field(default_factory=default_identity)
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0

    def __post_init__(self) -> None:
        if not self.lease_duration > self.renew_deadline > self.retry_period * JITTER > 0:
            raise ValueError("need lease_duration > renew_deadline > retry_period * 1.2 > 0")


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class LeaderElector:
    """Acquires, keeps and releases one lease for one identity."""

    def __init__(self, client: KubeClient, config: LeaderElectionConfig,
                 metrics: Metrics | None = None) -> None:
        self.client = client
        self.config = config
        self._status = (metrics or Metrics()).leader_status.labels(name=config.name)
        self._status.set(0)
        self._lease: Json | None = None
        self._observed: Json = {}
        self._observed_at = 0.0
        self._log = log.bind(lease=f"{config.namespace}/{config.name}",
                             identity=config.identity)

    @property
    def is_leader(self) -> bool:
        return bool(self._observed) and self._observed.get("holderIdentity") == \
            self.config.identity

    @property
    def leader(self) -> str:
        """The holder we last saw ("" when none)."""
        return str(self._observed.get("holderIdentity") or "")

    async def acquire(self) -> None:
        """Return once this candidate holds the lease (retrying forever)."""
        self._log.info("waiting for the lease")
        while True:
            if await self._try_acquire_or_renew():
                break
            await asyncio.sleep(self.config.retry_period * (1.0 + random.random() * JITTER))
        self._status.set(1)
        self._log.info("became leader")

    async def hold(self) -> None:
        """Renew until a renewal misses the deadline; returning means leadership is lost."""
        c = self.config
        while True:
            # An explicit deadline rather than asyncio.timeout: aiohttp turns a cancellation
            # into its own TimeoutError, which would make the deadline's cancel vanish.
            deadline = time.monotonic() + c.renew_deadline
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    self._status.set(0)
                    self._log.warning("lost the lease: could not renew within the deadline")
                    return
                if await self._try_acquire_or_renew(remaining):
                    break
                await asyncio.sleep(min(c.retry_period, max(0.0, deadline - time.monotonic())))
            await asyncio.sleep(c.retry_period)

    async def release(self) -> None:
        """Give the lease up if we hold it: empty holder, 1 s duration (client-go's release).

        A renewal cancelled by the stop may still have reached the server, leaving our copy a
        resourceVersion behind; on a conflict we read the lease again and, if it is still
        ours, release that. client-go gives up there and makes the successor wait a lease
        duration.
        """
        if not self.is_leader or self._lease is None:
            return
        deadline = time.monotonic() + self.config.renew_deadline
        lease = self._lease
        try:
            for _ in range(RELEASE_ATTEMPTS):
                try:
                    await self._write_release(lease, deadline)
                    self._log.info("released the lease")
                    return
                except Conflict:
                    lease = await self.client.request(
                        "GET", LEASES.path(self.config.namespace, self.config.name),
                        request_timeout=max(0.001, deadline - time.monotonic()))
                    if (lease.get("spec") or {}).get("holderIdentity") != self.config.identity:
                        self._log.info("the lease was no longer ours to release")
                        return
            self._log.warning("could not release the lease: it kept changing")
        except (ApiError, aiohttp.ClientError, TimeoutError) as err:
            self._log.warning("could not release the lease", error=repr(err))
        finally:
            self._status.set(0)

    async def _write_release(self, lease: Json, deadline: float) -> None:
        now = _now()
        held = lease.get("spec") or {}
        spec = {"holderIdentity": "", "leaseDurationSeconds": 1, "acquireTime": now,
                "renewTime": now, "leaseTransitions": held.get("leaseTransitions", 0)}
        self._lease = await self._write("PUT", {**lease, "spec": spec},
                                        max(0.001, deadline - time.monotonic()))
        self._observe_written(spec)

    # --- one try ---------------------------------------------------------------------------

    async def _try_acquire_or_renew(self, budget: float | None = None) -> bool:
        """One attempt; every request in it ends within `budget` seconds."""
        c = self.config
        limit = time.monotonic() + (budget if budget is not None else c.renew_deadline)

        def left() -> float:
            return max(0.001, limit - time.monotonic())

        now = _now()
        mine = {"holderIdentity": c.identity,
                "leaseDurationSeconds": max(1, round(c.lease_duration)),
                "acquireTime": now, "renewTime": now, "leaseTransitions": 0}
        try:
            lease = await self.client.request("GET", LEASES.path(c.namespace, c.name),
                                              request_timeout=left())
        except NotFound:
            body = {"apiVersion": LEASES.api_version, "kind": LEASES.kind,
                    "metadata": {"name": c.name, "namespace": c.namespace}, "spec": mine}
            try:
                self._lease = await self._write("POST", body, left())
            except (ApiError, aiohttp.ClientError, TimeoutError) as err:
                self._log.info("could not create the lease", error=repr(err))
                return False
            self._observe_written(mine)
            return True
        except (ApiError, aiohttp.ClientError, TimeoutError) as err:
            self._log.warning("could not read the lease", error=repr(err))
            return False

        spec = lease.get("spec") or {}
        if spec != self._observed:
            self._observed, self._observed_at = spec, time.monotonic()
        holder = spec.get("holderIdentity") or ""
        if (holder and holder != c.identity
                and self._observed_at + c.lease_duration > time.monotonic()):
            return False
        if holder == c.identity:
            mine["acquireTime"] = spec.get("acquireTime", now)
            mine["leaseTransitions"] = spec.get("leaseTransitions", 0)
        else:
            mine["leaseTransitions"] = int(spec.get("leaseTransitions") or 0) + 1
        try:
            self._lease = await self._write("PUT", {**lease, "spec": mine}, left())
        except (ApiError, aiohttp.ClientError, TimeoutError) as err:
            self._log.info("could not update the lease", error=repr(err))
            return False
        self._observe_written(mine)
        return True

    def _observe_written(self, sent: Json) -> None:
        # Compare later reads with what the server stored, not with what we sent.
        assert self._lease is not None
        self._observed = self._lease.get("spec") or sent
        self._observed_at = time.monotonic()

    async def _write(self, method: str, lease: Json, seconds: float) -> Json:
        c = self.config
        path = LEASES.path(c.namespace, c.name if method == "PUT" else "")
        return await self.client.request(method, path, body=lease, request_timeout=seconds)
