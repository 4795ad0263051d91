"""Start-up checks that wait out a busy API server and give up only on what waiting cannot fix.

Every call made before the controllers run (API discovery, the CRD check) is retried with a
growing delay while it fails transiently (429, 5xx, timeouts, refused connections), logging
one warning per failed attempt and no traceback. Two things end the start instead, each with
one clear line: credentials the API server refuses (401 or 403), which no retry changes, and
the operator's CRDs still missing after `crd_wait` seconds.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar

import structlog

from controller.client import KubeClient
from controller.errors import ApiError, NotFound, is_transient

log = structlog.get_logger("reconcilers.operator")

T = TypeVar("T")

#: The resources of `nvidia.com/v1alpha1` the controllers watch.
REQUIRED_CRDS = ("dynamographdeployments", "dynamocomponentdeployments",
                 "dynamographdeploymentrequests", "dynamographdeploymentscalingadapters",
                 "dynamomodels")
GROUP_VERSION = "nvidia.com/v1alpha1"


class CannotStart(Exception):
    """A start-up failure that retrying cannot fix; the message is the one line to log."""


@dataclass(frozen=True)
class StartupBackoff:
    """The delays between attempts: from `initial`, doubling, at most `maximum`."""

    initial: float = 0.2
    maximum: float = 5.0


def _refused_credentials(err: ApiError) -> CannotStart:
    word = "Unauthorized" if err.code == 401 else "Forbidden"
    return CannotStart(f"the API server refuses the operator's credentials ({err.code} {word}):"
                       f" {err.message or err.reason}")


async def with_retries(call: Callable[[], Awaitable[T]], what: str,
                       backoff: StartupBackoff = StartupBackoff()) -> T:
    """`call()`, again after a growing delay while it fails transiently; CannotStart on a
    401/403; any other error as it is."""
    delay = backoff.initial
    attempt = 1
    while True:
        try:
            return await call()
        except ApiError as err:
            if err.code in (401, 403):
                raise _refused_credentials(err) from None
            if not is_transient(err):
                raise
            log.warning("start-up call failed, retrying", call=what, attempt=attempt,
                        code=err.code, reason=err.reason, retry_in=round(delay, 2))
        except Exception as err:
            if not is_transient(err):
                raise
            log.warning("start-up call failed, retrying", call=what, attempt=attempt,
                        error=type(err).__name__, retry_in=round(delay, 2))
        await asyncio.sleep(delay)
        delay = min(delay * 2, backoff.maximum)
        attempt += 1


async def served_resources(client: KubeClient, group_version: str = GROUP_VERSION) -> set[str]:
    """The plural names served under one group/version (empty when it is not served)."""
    try:
        listing = await client.request("GET", f"/apis/{group_version}")
    except NotFound:
        return set()
    return {str(r.get("name", "")) for r in listing.get("resources") or []}


async def wait_for_crds(client: KubeClient, wait: float,
                        required: Iterable[str] = REQUIRED_CRDS,
                        backoff: StartupBackoff = StartupBackoff()) -> None:
    """Return once every required CRD is served; CannotStart naming the missing ones when
    `wait` seconds pass first (transient errors are retried meanwhile)."""
    wanted = tuple(required)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + wait
    logged = False
    while True:
        served = await with_retries(lambda: served_resources(client), "api discovery", backoff)
        missing = [name for name in wanted if name not in served]
        if not missing:
            return
        if loop.time() >= deadline:
            raise CannotStart(f"the CRDs of {GROUP_VERSION} are not installed after {wait:g}s:"
                              f" missing {', '.join(missing)}")
        if not logged:
            log.warning("waiting for CRDs", missing=missing, wait=wait)
            logged = True
        await asyncio.sleep(min(backoff.maximum, max(0.0, deadline - loop.time()), 1.0))
