"""Worker changes where the workload's own controller replaces the pods: Grove (the whole graph
on the Grove path) and LeaderWorkerSet (multinode workers on the DCD path).

These paths have no worker generations: the new templates go to the existing PodCliqueSet or
LeaderWorkerSets, and Grove or LWS replaces the pods (`nvidia.com/grove-update-strategy`, the
LWS `rolloutStrategy`). As the original operator, the graph records the worker hash it last
rendered in `nvidia.com/current-worker-hash-v2`; a change of it is told by a Warning event
`RollingUpdateNotSupported` (the managed controls that cannot apply are named: the partition
and Recreate on both, the surge and unavailable budgets too on Grove) and
`status.rollingUpdate` goes InProgress, then Completed once every worker service is ready
again. The annotation only decides the event and the start time: completion is read from the
workloads. For a graph `PROVIDER_GENERATION` covers, the hash recorded is the one its templates
carry (`backends.worker_generation.in_place_generation`: every worker's, as the original
records), so a change of a single-node worker that rolls a LeaderWorkerSet's suffix is told too.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from backends import constants
from backends.hub_graph import HubGraph
from backends.multinode import node_count
from backends.worker_generation import provider_generations, worker_hash
from controller.events import EventRecorder
from reconcilers.graph.readiness import ServiceReadiness
from reconcilers.machinery.context import OperatorContext
from reconcilers.machinery.resources import GRAPH_DEPLOYMENTS

Json = dict[str, Any]

__all__ = ["ProviderChange", "provider_workers", "record_provider_change"]

NOT_SUPPORTED = "RollingUpdateNotSupported"
_IGNORED_CONTROLS = (constants.ANNOTATION_ROLLOUT_PARTITION,
                     constants.ANNOTATION_DEPLOYMENT_STRATEGY)
#: Grove takes only its update strategy: the budgets LeaderWorkerSet takes do not apply.
_IGNORED_ON_GROVE = (*_IGNORED_CONTROLS, constants.ANNOTATION_MAX_SURGE,
                     constants.ANNOTATION_MAX_UNAVAILABLE)


@dataclass(frozen=True)
class ProviderChange:
    """The graph as written (with the hash recorded) and the rollingUpdate status to hold."""

    live: Json
    status: Json | None


def provider_workers(graph: HubGraph, grove: bool) -> list[str]:
    """The worker components Grove or LWS replaces: every worker on the Grove path, the
    multinode ones on the DCD path."""
    return [name for name, spec in graph.components()
            if graph.component_type(name) in constants.WORKER_TYPES
            and (grove or node_count(spec) > 1)]


async def record_provider_change(ctx: OperatorContext, recorder: EventRecorder, live: Json,
                                 graph: HubGraph, workers: list[str],
                                 readiness: list[ServiceReadiness], *, grove: bool = False,
                                 now: datetime | None = None) -> ProviderChange:
    """Record the workers' hash, tell a change, and carry status.rollingUpdate. `grove`:
    the graph is on the Grove path (else its workers are LeaderWorkerSets)."""
    previous = (live.get("status") or {}).get("rollingUpdate")
    status = dict(previous) if isinstance(previous, dict) else None
    wanted = worker_hash(graph) if provider_generations(graph) else worker_hash(graph, workers)
    annotations = live["metadata"].get("annotations") or {}
    recorded = annotations.get(constants.ANNOTATION_CURRENT_WORKER_HASH_V2)
    if recorded != wanted:
        # The resourceVersion read: a graph changed meanwhile is a 409 and a new reconcile.
        meta = live["metadata"]
        patch = {"metadata": {"resourceVersion": meta["resourceVersion"], "annotations": {
            constants.ANNOTATION_CURRENT_WORKER_HASH_V2: wanted}}}
        live = await ctx.client.patch(GRAPH_DEPLOYMENTS, meta["namespace"], meta["name"], patch)
        if recorded:
            await recorder.warning(live, NOT_SUPPORTED, _message(graph, workers, grove))
            stamp = (now or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")
            return ProviderChange(live, {"phase": "InProgress", "startTime": stamp,
                                         "updatedComponents": []})
        return ProviderChange(live, status)
    if status is not None and status.get("phase") in ("Pending", "InProgress"):
        ready = {r.service for r in readiness if r.ready}
        if set(workers) <= ready:
            stamp = (now or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")
            status = {**status, "phase": "Completed", "endTime": stamp,
                      "updatedComponents": sorted(workers)}
        else:
            status["updatedComponents"] = sorted(set(workers) & ready)
    return ProviderChange(live, status)


def _message(graph: HubGraph, workers: list[str], grove: bool) -> str:
    controls = _IGNORED_ON_GROVE if grove else _IGNORED_CONTROLS
    annotations = graph.model.metadata.get("annotations") or {}
    ignored = [key for key in controls if key in annotations]
    for name in workers:
        ignored += [f"{name}: {key}" for key in (graph.inputs.component(name).annotations or {})
                    if key in controls]
    text = (f"Worker spec changed ({', '.join(sorted(workers))}); Grove or LeaderWorkerSet "
            "replaces the pods itself, without worker generations")
    return text + (f"; ignored: {', '.join(ignored)}" if ignored else "")
