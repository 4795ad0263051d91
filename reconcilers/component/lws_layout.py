"""Which LeaderWorkerSet layout a multinode DCD gets (`backends.leader_worker_set`): the legacy
one, a LeaderWorkerSet per replica, while the DCD runs it and its pod templates are as they were
written; else the native one, a single LeaderWorkerSet that rolls one group at a time.

What runs is read from the cluster, never remembered: the DCD runs the legacy layout when it
controls LeaderWorkerSets labelled `instance-id` (what operators before this one stamped on
them; the native LeaderWorkerSet never carries it). Its templates are unchanged when every
such LeaderWorkerSet of an index the DCD still has carries, as the child writer's spec hash
(`nvidia.com/last-applied-hash`), the hash of the legacy rendering of that index: as rendered
now, or with the rollout budgets the live object holds, since budgets alone restart no pod (the
revision LWS rolls by covers the templates only). A scale keeps the layout (indexed
LeaderWorkerSets come and go, restarting nothing); the first template change, which restarts
every legacy group anyway, moves the DCD to the native layout, for good: the native
LeaderWorkerSet's hash is never a legacy one's.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any

from backends import constants
from backends.children import DesiredChildren
from backends.leader_worker_set import LwsLayout
from controller.cache import Cache
from controller.store import OWNER_UID_INDEX
from reconcilers.machinery.children import HASH_ANNOTATION, is_owned_by, spec_hash
from reconcilers.machinery.resources import LEADER_WORKER_SETS

Json = dict[str, Any]

__all__ = ["choose_layout", "keeps_legacy", "legacy_sets"]

_LWS = (constants.LWS_API_VERSION, "LeaderWorkerSet")


async def legacy_sets(cache: Cache, dcd: Json) -> list[Json]:
    """The legacy-layout LeaderWorkerSets the DCD controls (those being deleted aside)."""
    owned = await cache.by_index(LEADER_WORKER_SETS, OWNER_UID_INDEX, dcd["metadata"]["uid"])
    return [obj for obj in owned
            if constants.LABEL_INSTANCE_ID in (obj["metadata"].get("labels") or {})
            and not obj["metadata"].get("deletionTimestamp") and is_owned_by(obj, dcd)]


def keeps_legacy(legacy: DesiredChildren, live: Sequence[Json]) -> bool:
    """Whether the DCD stays in the legacy layout: `legacy` is its legacy rendering, `live`
    its legacy LeaderWorkerSets; at least one of an index still wanted, each such one with
    unchanged templates."""
    wanted = {c.name: c.obj for c in legacy.children if c.kind == _LWS}
    kept = [obj for obj in live if obj["metadata"]["name"] in wanted]
    return bool(kept) and all(_unchanged(obj, wanted[obj["metadata"]["name"]]) for obj in kept)


def _unchanged(live: Json, desired: Json) -> bool:
    recorded = (live["metadata"].get("annotations") or {}).get(HASH_ANNOTATION)
    return recorded is not None and recorded in {spec_hash(d) for d in _with_live_budgets(
        desired, live)}


def _with_live_budgets(desired: Json, live: Json) -> list[Json]:
    """`desired` as it is, without budgets, and with the budgets `live` holds (in the shape
    the builders write them)."""
    variants = [desired]
    bare = copy.deepcopy(desired)
    bare["spec"].pop("rolloutStrategy", None)
    variants.append(bare)
    rolling = ((live.get("spec") or {}).get("rolloutStrategy") or {}).get(
        "rollingUpdateConfiguration") or {}
    if "maxSurge" in rolling and "maxUnavailable" in rolling:
        held = copy.deepcopy(bare)
        held["spec"]["rolloutStrategy"] = {"type": "RollingUpdate", "rollingUpdateConfiguration": {
            "maxSurge": rolling["maxSurge"], "maxUnavailable": rolling["maxUnavailable"]}}
        variants.append(held)
    return variants


async def choose_layout(cache: Cache, dcd: Json,
                        render: Callable[[LwsLayout], DesiredChildren]
                        ) -> tuple[LwsLayout, DesiredChildren]:
    """The layout of a multinode DCD and its desired set so rendered (`render`: the DCD's
    desired set in a layout)."""
    live = await legacy_sets(cache, dcd)
    if live:
        legacy = render(LwsLayout.LEGACY)
        if keeps_legacy(legacy, live):
            return LwsLayout.LEGACY, legacy
    return LwsLayout.NATIVE, render(LwsLayout.NATIVE)
