"""The DynamoGraphDeployment controller: a graph becomes DCDs (or one Grove PodCliqueSet),
PVCs, scaling adapters and RBAC, and reports one state for all of them.

A reconcile, computed from the cluster alone:

1. the graph (cached as the hub, `v1beta1`) is gone → nothing; terminating → drop the
   finalizer an older operator version added, if any, and stop (garbage collection removes the
   children; nothing is created or updated for a terminating graph);
2. invalid spec → state `failed`, Ready reason `ValidationFailed` naming the fields as the
   graph is stored (`api.hub_errors`, through `spec_views.validated`); no retry until the spec
   changes; the builders take the graph as the hub (`spec_views.graph_of`, made once per change
   of the graph);
3. no finalizer: a graph has nothing to clean up that owner references do not (spec §1.1);
4. what runs now is observed (restart tokens, readiness) and the restart planned (restart);
5. the whole desired set comes from one pure call (`backends.graph_children`: planner and EPP
   RBAC, the MPI SSH Secret's copy (source read by `machinery.mpi_secret`), PVCs, scaling adapters,
   discovery RBAC, the EPP's ConfigMap and InferencePool, the DCDs or the Grove objects) and
   goes to the child writer once, which writes it and prunes what the graph owns and no longer
   wants;
6. what the user must fix (a missing PVC or MPI Secret, a GMS DeviceClass no DeviceClass
   defines (`machinery.gms_device_classes`), a name taken by someone else's object, a graph this
   cluster cannot run) is a `failed` state and a TerminalError; API errors are
   retried;
7. status (in `v1beta1`: `status.components`) written only when it differs, and while
   pending only when more than messages and rollout counts moved (`machinery.progress`), then
   one event if the state changed; a pending status with nothing wrong
   (`status.is_intermediate`) is held for a moment (`machinery.status_pacer`) so that DCDs
   reporting together make one write, and a graph ready within that moment gets no pending
   status at all.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import structlog

from api.errors import InvalidObject
from api.v1alpha1 import DynamoGraphDeployment
from backends import constants
from backends.errors import GenerationError
from backends.graph_children import graph_children, pruned_kinds, uses_grove
from backends.hub_graph import HubGraph
from backends.mpi_secret import mpi_services
from controller.errors import ApiError, Conflict, TerminalError, is_transient
from controller.handlers import CREATE_IGNORED, STATUS_ONLY_IGNORED
from controller.manager import Manager
from controller.reconcile import Request, Result
from reconcilers.graph.checkpoint_notice import warn_checkpoint_ignored
from reconcilers.graph.children import claimed_names, report_orphaned_adapters
from reconcilers.graph.cluster_topology import cluster_topologies
from reconcilers.graph.components import ComponentPath
from reconcilers.graph.gpu_capacity import GraphGpus, watch_gpus
from reconcilers.graph.grove import GrovePath
from reconcilers.graph.mpi_secret import secret_mapper
from reconcilers.graph.path import WorkloadPath
from reconcilers.graph.provider_rollout import provider_workers, record_provider_change
from reconcilers.graph.readiness import ServiceReadiness
from reconcilers.graph.restart import plan_restart
from reconcilers.graph.revisions import owned_revisions
from reconcilers.graph.rollout import FAILED as ROLLOUT_FAILED_PHASE
from reconcilers.graph.rollout import RECHECK_SECONDS, Rollout, observe_rollout, provider_rollout
from reconcilers.graph.status import (
    PENDING,
    READY,
    RECONCILE_FAILED,
    ROLLOUT_FAILED,
    VALIDATION_FAILED,
    Verdict,
    failed,
    graph_status,
    is_intermediate,
    summarize,
    transition_event,
    with_rolling_update,
)
from reconcilers.graph.topology_condition import lost_topology_event, with_topology_condition
from reconcilers.machinery import hub
from reconcilers.machinery.children import ChildWriter
from reconcilers.machinery.conditions import get_condition
from reconcilers.machinery.context import NOT_OWNED_RETRY, OperatorContext
from reconcilers.machinery.finalizer import is_deleting, release_finalizer
from reconcilers.machinery.gms_device_classes import (
    check_gms_device_classes,
    watch_gms_device_classes,
)
from reconcilers.machinery.mpi_secret import mpi_source
from reconcilers.machinery.pod_problems import index_pods
from reconcilers.machinery.progress import only_progress
from reconcilers.machinery.resources import (
    COMPONENT_DEPLOYMENTS,
    GRAPH_DEPLOYMENTS,
    PERSISTENT_VOLUME_CLAIMS,
    POD_CLIQUE_SCALING_GROUPS,
    POD_CLIQUES,
    PODS,
    SECRETS,
    resource_for,
)
from reconcilers.machinery.spec_views import graph_of, validated
from reconcilers.machinery.status_pacer import StatusPacer
from reconcilers.machinery.status_writer import write_status

Json = dict[str, Any]
log = structlog.get_logger("reconcilers.graph")

#: The event source component (and the child writer's). The controller is named after
#: the kind (GRAPH_DEPLOYMENTS.kind), as the original's `Named(...)`: the `controller`
#: label of controller-runtime's metrics, the work queue's name, the logs' controller.
NAME = "dynamographdeployment"
CLAIM_INDEX = "graph-claims"


class GraphDeploymentReconciler:
    """Reconciles one DynamoGraphDeployment per call."""

    def __init__(self, ctx: OperatorContext, pacer: StatusPacer | None = None) -> None:
        self.ctx = ctx
        self.writer: ChildWriter = ctx.children(NAME)
        self.pacer = StatusPacer() if pacer is None else pacer
        self.gpus = GraphGpus(ctx)

    async def reconcile(self, request: Request) -> Result | None:
        live = await self.ctx.cache.get_or_none(GRAPH_DEPLOYMENTS, request.namespace,
                                                request.name)
        if live is None:
            self.pacer.clear(request)
            self.writer.forget(request.namespace, request.name)
            return None
        if is_deleting(live):
            # Children go with the graph through their owner references; touching them now
            # would recreate what the garbage collector is removing.
            self.pacer.clear(request)
            await release_finalizer(self.ctx.client, GRAPH_DEPLOYMENTS, live)
            return None
        try:
            validated(DynamoGraphDeployment, live)
        except InvalidObject as invalid:
            verdict = failed(VALIDATION_FAILED, f"Validation failed: {invalid}")
            await self._finish(live, live, verdict, None, _restart_of(live))
            return None
        before = live
        try:
            live, verdict, readiness, restart, rollout = await self._sync(live, graph_of(live))
        except TerminalError as problem:
            verdict = failed(RECONCILE_FAILED, problem.message)
            await self._finish(before, live, verdict, None, _restart_of(live))
            raise
        except Conflict:
            raise  # the cache was behind: requeued on fresh data, no failure recorded
        except ApiError as error:
            # A passing state of the API server says nothing about the graph: retried, and
            # the status stays as it was.
            if not is_transient(error):
                verdict = failed(RECONCILE_FAILED, str(error))
                await self._finish(before, live, verdict, None, _restart_of(live))
            raise
        result = await self._finish(before, live, verdict, readiness, restart, pace=True,
                                    rollout=rollout)
        if rollout is not None and rollout.step.rolling and result is None:
            # Old pods that finish terminating wake nothing: look again while rolling.
            return Result(requeue_after=RECHECK_SECONDS)
        return result

    async def _sync(self, live: Json, graph: HubGraph
                    ) -> tuple[Json, Verdict, list[ServiceReadiness], Json | None,
                               Rollout | None]:
        """Write every child; the graph (as last written), its verdict, readiness and
        restart status. TerminalError for what the user has to fix."""
        ctx = self.ctx
        services = [name for name, _ in graph.components()]
        kind = GrovePath if uses_grove(graph, ctx.settings) else ComponentPath
        path: WorkloadPath = kind(ctx, live, graph)
        rollout = None
        if isinstance(path, ComponentPath):
            try:
                rollout = await observe_rollout(ctx, live, graph, ctx.settings)
            except GenerationError as error:
                raise TerminalError(str(error), reason=RECONCILE_FAILED) from None
            path.rollout = rollout
        tokens, observed = await path.observe()
        previous = _restart_of(live)
        plan = plan_restart(graph.model.spec.restart, previous, services, tokens,
                            {r.service for r in observed if r.ready})
        if plan.starts_new_request(previous):
            # Record the request before any child carries its id (see RestartPlan).
            live = await self._save_status(live, {**(live.get("status") or {}),
                                                   "restart": plan.status})
            path.live = live
        mpi_secret = await mpi_source(ctx, path.namespace, mpi_services(graph), RECONCILE_FAILED)
        await check_gms_device_classes(ctx, _components(live), RECONCILE_FAILED)
        topologies = await cluster_topologies(ctx, graph, grove=isinstance(path, GrovePath))
        try:
            desired = graph_children(graph, ctx.settings, tokens=plan.tokens,
                                     planner_cluster_role=ctx.planner_cluster_role_name,
                                     epp_cluster_role=ctx.epp_cluster_role_name,
                                     mpi_secret=mpi_secret,
                                     workers=rollout.plan if rollout is not None else None,
                                     revisions=await owned_revisions(ctx, live),
                                     topologies=topologies)
        except GenerationError as error:
            raise TerminalError(str(error), reason=RECONCILE_FAILED) from None
        # The settings and cluster roles are the process's: the rest is the graph's own.
        synced = await self.writer.sync(
            live, desired,
            inputs=(plan.tokens, mpi_secret, rollout.plan if rollout is not None else None,
                    topologies))
        if synced.missing:
            # A claim appearing wakes the graph (see _claim_mapper).
            raise TerminalError("; ".join(synced.missing), reason=RECONCILE_FAILED)
        await report_orphaned_adapters(self.writer.recorder, live, graph, synced)
        if synced.not_owned:
            # Deleting someone else's object wakes nobody: look again now and then.
            raise TerminalError(synced.not_owned_message("graph"), reason=RECONCILE_FAILED,
                                retry_after=NOT_OWNED_RETRY)
        readiness = await path.readiness(synced)
        grove = isinstance(path, GrovePath)
        workers = provider_workers(graph, grove)
        if workers:
            change = await record_provider_change(ctx, self.writer.recorder, live, graph,
                                                  workers, readiness, grove=grove)
            live = change.live
            if rollout is None or rollout.status is None:
                rollout = provider_rollout(change.status)
        verdict = await self.gpus.check(live, _verdict(live, readiness, rollout), rollout)
        return live, verdict, readiness, plan.status, rollout

    async def _finish(self, before: Json, live: Json, verdict: Verdict,
                      readiness: list[ServiceReadiness] | None, restart: Json | None,
                      pace: bool = False, rollout: Rollout | None = None) -> Result | None:
        """Write the status if it changed; then the event of the transition, if any. With
        `pace` (a reconcile that went through: failures are written at once), an intermediate
        status is written once its hold is over, and until then the answer asks for a
        reconcile at that time."""
        generation = int(live["metadata"].get("generation") or 0)
        gpus = await self.gpus.status(live, readiness, rollout) if readiness is not None else None
        status = graph_status(live.get("status"), verdict, generation, readiness, restart, gpus)
        if rollout is not None:
            with_rolling_update(status, rollout.status)
        if readiness is not None:
            await with_topology_condition(self.ctx, live, graph_of(live), status)
        current = live.get("status") or {}
        key = Request(live["metadata"].get("namespace", ""), live["metadata"]["name"])
        if status == current or (verdict.state == PENDING and only_progress(current, status)):
            self.pacer.clear(key)
            return None  # unchanged, or only a pending graph's messages and rollout counts moved
        if pace and is_intermediate(current, status):
            wait = self.pacer.hold(key)
            if wait > 0:
                return Result(requeue_after=wait)
        # The written graph is not read again here: its answer is not decoded.
        await write_status(self.ctx.client, GRAPH_DEPLOYMENTS, live, status, decode=False)
        self.pacer.clear(key)
        await warn_checkpoint_ignored(self.writer.recorder, live, before.get("status"))
        lost = lost_topology_event(current, status)
        if lost is not None:
            await self.writer.recorder.warning(live, *lost)
        event = transition_event(before.get("status"), status)
        if event is not None:
            warning, reason, message = event
            recorder = self.writer.recorder
            await (recorder.warning if warning else recorder.normal)(live, reason, message)
        if (before.get("status") or {}).get("state") != status["state"]:
            log.info("state changed", state=status["state"], reason=verdict.reason)
        return None

    async def _save_status(self, live: Json, status: Json) -> Json:
        # Carries the resourceVersion we computed from: a graph changed meanwhile answers 409
        # and the reconcile reruns on fresh data.
        written = await write_status(self.ctx.client, GRAPH_DEPLOYMENTS, live, status)
        return live if written is None else written


def _verdict(live: Json, readiness: list[ServiceReadiness], rollout: Rollout | None) -> Verdict:
    """The graph's state from its services; a failed worker rollout fails the graph (its
    old generation still serving), with the cause."""
    if rollout is None or (rollout.status or {}).get("phase") != ROLLOUT_FAILED_PHASE:
        return summarize(readiness)
    message = rollout.failure
    if not message:  # held since it failed: the cause as first told
        ready = get_condition((live.get("status") or {}).get("conditions"), READY) or {}
        message = str(ready.get("message") or "the new worker generation made no progress")
    return failed(ROLLOUT_FAILED, message)


def _restart_of(live: Json) -> Json | None:
    restart = (live.get("status") or {}).get("restart")
    return restart if isinstance(restart, dict) else None


# --- registration -----------------------------------------------------------------------------

def _by_graph_label(obj: Json) -> list[Request]:
    """Grove cliques and scaling groups are owned by Grove; their graph label leads to us."""
    meta = obj.get("metadata") or {}
    graph = (meta.get("labels") or {}).get(constants.LABEL_GRAPH_NAME)
    return [Request(meta.get("namespace", ""), graph)] if graph else []


def _stopping_worker(pod: Json) -> list[Request]:
    """A worker pod of a generation that is stopping (or gone) wakes its graph: a rollout's
    next step waits for old pods to be gone, which changes no DCD."""
    meta = pod.get("metadata") or {}
    labels = meta.get("labels") or {}
    graph = labels.get(constants.LABEL_GRAPH_NAME)
    if not graph or not meta.get("deletionTimestamp") or (
            labels.get(constants.LABEL_COMPONENT_TYPE) not in constants.WORKER_TYPES):
        return []
    return [Request(meta.get("namespace", ""), graph)]


def _components(graph: Json) -> list[Json]:
    """The graph's components as stored (`v1beta1`)."""
    return [c for c in (graph.get("spec") or {}).get("components") or ()
            if isinstance(c, dict)]


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
    hub.require_views(manager.cache, GRAPH_DEPLOYMENTS, COMPONENT_DEPLOYMENTS)
    index_pods(manager.cache)  # a rollout counts each generation's pods
    owns = [PERSISTENT_VOLUME_CLAIMS, *(resource_for(k) for k in pruned_kinds(ctx.settings))]
    graphs = manager.cache.informer(GRAPH_DEPLOYMENTS)
    watches = [(PERSISTENT_VOLUME_CLAIMS, _claim_mapper(manager)),
               (SECRETS, secret_mapper(graphs, ctx.settings)),
               (PODS, _stopping_worker)]
    if ctx.settings.grove_enabled:
        watches += [(POD_CLIQUES, _by_graph_label), (POD_CLIQUE_SCALING_GROUPS, _by_graph_label)]
    # As the original: the graph's own status writes and the creation of its children (its
    # own doing) wake nothing; their updates and deletions do.
    reconciler = GraphDeploymentReconciler(ctx)
    controller = manager.add_controller(
        GRAPH_DEPLOYMENTS.kind, reconciler.reconcile,
        for_=GRAPH_DEPLOYMENTS, owns=owns, watches=watches,
        max_concurrent_reconciles=ctx.max_concurrent_reconciles(NAME),
        for_predicate=STATUS_ONLY_IGNORED, owns_predicate=CREATE_IGNORED)
    # Capacity changes wake the graphs told of its lack.
    watch_gpus(manager, ctx, controller, reconciler.gpus)
    watch_gms_device_classes(manager, ctx, controller, GRAPH_DEPLOYMENTS, _components)
