"""Keeping something the API server holds as it should be: one round now, again every while.

Certificates, webhook configurations and CRD conversion stanzas are not watched for: a keeper
looks at them on a timer. Each keeper has an `ensure()` that makes one round (writing only what
differs) and says whether it is settled; `keep` repeats it, sooner while it is not, and turns
an API error into a warning and a short wait instead of ending the task.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import structlog

from .errors import ApiError

log = structlog.get_logger("controller.keeper")

#: Delays before the next round: unsettled (a CA not known yet, a write lost a race), failed.
UNSETTLED_DELAY = 0.2
FAILED_DELAY = 1.0


async def keep(ensure: Callable[[], Awaitable[bool]], *, interval: float, what: str) -> None:
    """Run `ensure` every `interval` seconds until cancelled; `what` names it in warnings."""
    while True:
        delay = interval
        try:
            if not await ensure():
                delay = UNSETTLED_DELAY
        except (ApiError, OSError, TimeoutError) as err:
            log.warning("cannot keep it as it should be", what=what, error=str(err))
            delay = FAILED_DELAY
        await asyncio.sleep(delay)
