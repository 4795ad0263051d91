"""The worker ControllerRevisions a graph owns, read from the cache (`backends.worker_revisions`
decides which to keep). Read from the cluster at every reconcile: the history survives an
operator restart, and nothing of it is held in memory."""

from __future__ import annotations

from typing import Any

from controller.store import OWNER_UID_INDEX
from reconcilers.machinery.context import OperatorContext
from reconcilers.machinery.resources import CONTROLLER_REVISIONS

Json = dict[str, Any]

__all__ = ["owned_revisions"]


async def owned_revisions(ctx: OperatorContext, live: Json) -> list[Json]:
    """The ControllerRevisions with a controller reference to the graph."""
    uid = live["metadata"]["uid"]
    return [r for r in await ctx.cache.by_index(CONTROLLER_REVISIONS, OWNER_UID_INDEX, uid)
            if any(ref.get("uid") == uid and ref.get("controller")
                   for ref in r["metadata"].get("ownerReferences") or [])]
