"""The DynamoGraphDeployment controller: a graph becomes DCDs (or one Grove PodCliqueSet),
PVCs, scaling adapters and RBAC, and reports one state for all of them.

A reconcile, computed from the cluster alone:

1. the graph is gone → nothing; terminating → drop our finalizer and stop (garbage collection
   removes the children; nothing is created or updated for a terminating graph);
2. invalid spec → state `failed`, Ready reason `ValidationFailed` naming the fields; no retry
   until the spec changes;
3. finalizer `nvidia.com/finalizer`;
4. planner RBAC (cluster-wide mode), PVCs, scaling adapters, Kubernetes-discovery RBAC;
5. the workloads: Grove when installed and not opted out, else one DCD per service
   (multinode services need LeaderWorkerSet); restart tokens decided first (graph_restart);
6. children of services that left the graph, or of the other path, are deleted;
7. status written only when it differs, then one event if the state changed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import structlog

from api.convert import ConversionError, load
from api.v1alpha1 import DynamoGraphDeployment
from api.validation import validate
from backends import constants
from backends.errors import GenerationError
from backends.graph_objects import uses_discovery
from backends.multinode import node_count
from backends.render import uses_grove
from controller.errors import ApiError, Conflict, NotFound
from controller.manager import Manager
from controller.reconcile import Request, Result
from reconcilers.graph.children import (
    GraphProblem,
    claimed_names,
    ensure_adapters,
    ensure_claims,
    ensure_planner_rbac,
    prune,
    sync_discovery_rbac,
)
from reconcilers.graph.components import ComponentPath
from reconcilers.graph.grove import GrovePath, exposure_resources
from reconcilers.graph.readiness import ServiceReadiness
from reconcilers.graph.restart import plan_restart
from reconcilers.graph.status import (
    RECONCILE_FAILED,
    VALIDATION_FAILED,
    Verdict,
    failed,
    graph_status,
    summarize,
    transition_event,
)
from reconcilers.machinery.children import ChildWriter
from reconcilers.machinery.context import OperatorContext
from reconcilers.machinery.finalizer import ensure_finalizer, is_deleting, release_finalizer
from reconcilers.machinery.resources import (
    COMPONENT_DEPLOYMENTS,
    GRAPH_DEPLOYMENTS,
    PERSISTENT_VOLUME_CLAIMS,
    POD_CLIQUE_SCALING_GROUPS,
    POD_CLIQUE_SETS,
    POD_CLIQUES,
    ROLE_BINDINGS,
    ROLES,
    SCALING_ADAPTERS,
    SERVICE_ACCOUNTS,
)
from reconcilers.machinery.status_writer import write_status

Json = dict[str, Any]
log = structlog.get_logger("reconcilers.graph.reconciler")

NAME = "dynamographdeployment"
CLAIM_INDEX = "graph-claims"

NO_ORCHESTRATOR = (
    "no multinode orchestrator available: service(s) {services} need several nodes; install "
    "LeaderWorkerSet (leaderworkerset.x-k8s.io) or Grove (grove.io) and restart the operator"
)


class GraphDeploymentReconciler:
    """Reconciles one DynamoGraphDeployment per call."""

    def __init__(self, ctx: OperatorContext) -> None:
        self.ctx = ctx
        self.writer: ChildWriter = ctx.children(NAME)

    async def __call__(self, request: Request) -> Result | None:
        try:
            live = await self.ctx.cache.get(GRAPH_DEPLOYMENTS, request.namespace, request.name)
        except NotFound:
            return None
        if is_deleting(live):
            # Children go with the graph through their owner references; touching them now
            # would recreate what the garbage collector is removing.
            await release_finalizer(self.ctx.client, GRAPH_DEPLOYMENTS, live)
            return None
        dgd, errors = _load(live)
        if dgd is None or errors:
            previous = (live.get("status") or {}).get("restart")
            verdict = failed(VALIDATION_FAILED, "Validation failed: " + "; ".join(errors))
            await self._finish(live, live, verdict, None, previous)
            return None
        before = live
        live = await ensure_finalizer(self.ctx.client, GRAPH_DEPLOYMENTS, live)
        try:
            live, verdict, readiness, restart = await self._sync(live, dgd)
        except GraphProblem as problem:
            restart = (live.get("status") or {}).get("restart")
            await self._finish(before, live, failed(RECONCILE_FAILED, str(problem)), None,
                               restart)
            if problem.retry_after:
                return Result(requeue_after=problem.retry_after)
            return None
        except GenerationError as error:
            restart = (live.get("status") or {}).get("restart")
            await self._finish(before, live, failed(RECONCILE_FAILED, str(error)), None, restart)
            return None
        except Conflict:
            raise  # the cache was behind: retried at once on fresh data, no failure recorded
        except ApiError as error:
            restart = (live.get("status") or {}).get("restart")
            await self._finish(before, live, failed(RECONCILE_FAILED, str(error)), None, restart)
            raise
        await self._finish(before, live, verdict, readiness, restart)
        return None

    async def _sync(self, live: Json, dgd: DynamoGraphDeployment
                    ) -> tuple[Json, Verdict, list[ServiceReadiness], Json | None]:
        """Write every child; the graph (as last written), its verdict, readiness and
        restart status."""
        ctx, writer = self.ctx, self.writer
        await ensure_planner_rbac(ctx, writer, live)
        await ensure_claims(ctx, writer, live, dgd)
        await ensure_adapters(ctx, writer, live, dgd)
        discovery = uses_discovery(dgd, ctx.settings.discovery_backend)
        await sync_discovery_rbac(ctx, writer, live, dgd, discovery)

        grove = uses_grove(dgd, ctx.settings)
        services = dgd.spec.services or {}
        if not grove and not ctx.settings.lws_enabled:
            multinode = sorted(k for k, s in services.items() if node_count(s) > 1)
            if multinode:
                raise GraphProblem(NO_ORCHESTRATOR.format(services=", ".join(multinode)))
        path = (GrovePath if grove else ComponentPath)(ctx, writer, live, dgd)

        tokens, observed = await path.observe()
        previous = (live.get("status") or {}).get("restart")
        plan = plan_restart(dgd.spec.restart, previous, sorted(services), tokens,
                            {r.service for r in observed if r.ready})
        if plan.starts_new_request(previous):
            # Record the request before any child carries its id (see RestartPlan).
            live = await self._save_status(live, {**(live.get("status") or {}),
                                                   "restart": plan.status})
            path.live = live
        readiness = await path.apply(plan.tokens)
        await self._prune_other_path(live, grove)
        return live, summarize(readiness), readiness, plan.status

    async def _prune_other_path(self, live: Json, grove: bool) -> None:
        if grove:
            await prune(self.ctx, self.writer, live, COMPONENT_DEPLOYMENTS, ())
        elif self.ctx.settings.grove_enabled:
            await prune(self.ctx, self.writer, live, POD_CLIQUE_SETS, ())
            for resource in exposure_resources(self.ctx):
                await prune(self.ctx, self.writer, live, resource, ())

    async def _finish(self, before: Json, live: Json, verdict: Verdict,
                      readiness: list[ServiceReadiness] | None, restart: Json | None) -> None:
        """Write the status if it changed; then the event of the transition, if any."""
        generation = int(live["metadata"].get("generation") or 0)
        status = graph_status(live.get("status"), verdict, generation, readiness, restart)
        if status == (live.get("status") or {}):
            return
        await self._save_status(live, status)
        event = transition_event(before.get("status"), status)
        if event is not None:
            warning, reason, message = event
            recorder = self.writer.recorder
            await (recorder.warning if warning else recorder.normal)(live, reason, message)
        log.info("status written", namespace=live["metadata"]["namespace"],
                 name=live["metadata"]["name"], state=status["state"], reason=verdict.reason)

    async def _save_status(self, live: Json, status: Json) -> Json:
        # Carries the resourceVersion we computed from: a graph changed meanwhile answers 409
        # and the reconcile reruns on fresh data.
        written = await write_status(self.ctx.client, GRAPH_DEPLOYMENTS, live, status)
        return live if written is None else written


def _load(live: Json) -> tuple[DynamoGraphDeployment | None, list[str]]:
    """The typed graph and the validation errors (each naming its field)."""
    try:
        dgd = load(DynamoGraphDeployment, live)
    except ConversionError as error:
        return None, [str(e) for e in error.errors]
    return dgd, [str(e) for e in validate(dgd)]


# --- registration -----------------------------------------------------------------------------

def _by_graph_label(obj: Json) -> list[Request]:
    """Grove cliques and scaling groups are owned by Grove; their graph label leads to us."""
    meta = obj.get("metadata") or {}
    graph = (meta.get("labels") or {}).get(constants.LABEL_GRAPH_NAME)
    return [Request(meta.get("namespace", ""), graph)] if graph else []


def _claim_mapper(manager: Manager) -> Callable[[Json], list[Request]]:
    """A PVC event wakes the graphs that use that PVC without creating it."""
    graphs = manager.cache.informer(GRAPH_DEPLOYMENTS, indexers={CLAIM_INDEX: claimed_names})

    def mapper(obj: Json) -> list[Request]:
        meta = obj.get("metadata") or {}
        key = f"{meta.get('namespace', '')}/{meta.get('name', '')}"
        return [Request(g["metadata"].get("namespace", ""), g["metadata"]["name"])
                for g in graphs.store.by_index(CLAIM_INDEX, key)]

    return mapper


def register(manager: Manager, ctx: OperatorContext) -> None:
    """Add the DynamoGraphDeployment controller to a manager."""
    owns = [COMPONENT_DEPLOYMENTS, SCALING_ADAPTERS, PERSISTENT_VOLUME_CLAIMS,
            SERVICE_ACCOUNTS, ROLES, ROLE_BINDINGS]
    watches = [(PERSISTENT_VOLUME_CLAIMS, _claim_mapper(manager))]
    if ctx.settings.grove_enabled:
        owns += [POD_CLIQUE_SETS, *exposure_resources(ctx)]
        watches += [(POD_CLIQUES, _by_graph_label), (POD_CLIQUE_SCALING_GROUPS, _by_graph_label)]
    manager.add_controller(NAME, GraphDeploymentReconciler(ctx), for_=GRAPH_DEPLOYMENTS,
                           owns=owns, watches=watches,
                           max_concurrent_reconciles=ctx.max_concurrent_reconciles(NAME))
