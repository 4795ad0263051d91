"""The DynamoComponentDeployment (DCD) controller: one component's workload, Services and
Ingress, and whether it is available.

A reconcile, from the cached DCD alone (level-based; it never depends on the event that woke
it):

1. Gone: stop. Terminating: if it carries our finalizer, delete its etcd discovery keys
   (`etcd_keys`; an etcd error keeps the finalizer and is retried), release the finalizer
   and stop; a terminating DCD never gets children created or updated.
2. Invalid spec (conversion or api.validation): condition `Valid=False` naming the field as
   the DCD is stored (`v1beta1`, `api.hub_errors`, through `spec_views.validated`); the
   builders take the DCD as the hub (`spec_views.component_of`, made once per change of it);
   a Warning event when that is news, and stop *without* an error: retrying cannot help until
   the spec changes, and a spec change is a new event.
3. The finalizer only where a cleanup exists (`needs_finalizer`: etcd discovery keys; with
   Kubernetes discovery owner references clean up), then the children (component_children):
   create, update on drift, prune. A multinode DCD's LeaderWorkerSets are laid out as
   `lws_layout.choose_layout` finds: the legacy layout (one per replica) kept while it runs
   unchanged, else one LeaderWorkerSet for every replica.
4. Status, in `v1beta1` as the DCD is stored and cached: `Valid`, `Available`
   (component_readiness, plus the first stuck pod's story), `DynamoComponentReady` (mirrors
   Available), `component`, `observedGeneration`; written only
   when it changed, and while not available only when more than messages and rollout counts
   moved (`machinery.progress`). A not-available status with nothing wrong (`_is_intermediate`)
   is held for a moment (`machinery.status_pacer`): a Deployment available within it makes the
   DCD's first status its Available one.

Events: the ChildWriter's create/update/delete events, and Warnings when a failure condition
first appears. A no-op reconcile makes no write and no event.
"""

from __future__ import annotations

import contextlib
import copy
from typing import Any, NamedTuple

from api.conversion import HUB
from api.errors import InvalidObject
from api.v1alpha1 import DynamoComponentDeployment
from backends import constants
from backends.children import DesiredChildren
from backends.context import discovery_backend_of
from backends.errors import GenerationError
from backends.hub_component import HubComponent
from backends.labels import graph_name
from backends.leader_worker_set import LwsLayout
from backends.mpi_secret import component_needs_mpi_secret
from backends.multinode import node_count
from backends.settings import OperatorSettings
from controller.errors import ApiError, Conflict, NotFound, TerminalError, is_transient
from controller.handlers import CREATE_IGNORED, STATUS_ONLY_IGNORED
from controller.informer import Transform
from controller.manager import Manager
from controller.reconcile import Request, Result
from controller.resource import Resource
from reconcilers.component import etcd_keys
from reconcilers.component.children import (
    cluster_inputs,
    desired_children,
    index_service_accounts,
    owned_resources,
)
from reconcilers.component.lws_layout import choose_layout
from reconcilers.component.model_services import model_service_informer_mapper
from reconcilers.component.pull_secrets import trim_secret
from reconcilers.component.readiness import (
    Readiness,
    deployment_readiness,
    deployment_service_status,
    lws_readiness,
    lws_service_status,
)
from reconcilers.component.workload_cache import trim_deployment, trim_leader_worker_set
from reconcilers.machinery import availability, hub
from reconcilers.machinery.children import Synced
from reconcilers.machinery.conditions import get_condition, set_condition
from reconcilers.machinery.context import NOT_OWNED_RETRY, OperatorContext
from reconcilers.machinery.finalizer import (
    ensure_finalizer,
    has_finalizer,
    is_deleting,
    release_finalizer,
)
from reconcilers.machinery.gms_device_classes import (
    check_gms_device_classes,
    watch_gms_device_classes,
)
from reconcilers.machinery.mpi_secret import mpi_source
from reconcilers.machinery.pod_problems import (
    PROBLEM_CHANGES,
    first_problem,
    index_pods,
    pods_to_components,
    trim_pod,
)
from reconcilers.machinery.progress import only_progress
from reconcilers.machinery.replica_status import on_hub
from reconcilers.machinery.resources import (
    COMPONENT_DEPLOYMENTS,
    DEPLOYMENTS,
    LEADER_WORKER_SETS,
    PODS,
    SECRETS,
    SERVICES,
)
from reconcilers.machinery.spec_views import component_of, validated
from reconcilers.machinery.status_pacer import StatusPacer
from reconcilers.machinery.status_writer import write_status

Json = dict[str, Any]

#: The event source component (and the child writer's). The controller is named after
#: the kind (COMPONENT_DEPLOYMENTS.kind), as the original's `Named(...)`: the `controller`
#: label of controller-runtime's metrics, the work queue's name, the logs' controller.
NAME = "dynamocomponentdeployment"
KIND = "DynamoComponentDeployment"

VALID = "Valid"
AVAILABLE = "Available"
COMPONENT_READY = "DynamoComponentReady"
#: Failures worth a Warning event when they first appear (a rollout in progress is not one).
WARNING_REASONS = frozenset({availability.VALIDATION_FAILED, availability.GENERATION_FAILED,
                             availability.RECONCILE_FAILED, availability.NAME_CONFLICT})
#: How the cache must hold what this controller reads: Pods without their spec, Secrets
#: without their data, workloads without their pod templates (see pod_problems,
#: pull_secrets and workload_cache).
CACHE_TRANSFORMS: dict[Resource, Transform] = {
    PODS: trim_pod, SECRETS: trim_secret,
    DEPLOYMENTS: trim_deployment, LEADER_WORKER_SETS: trim_leader_worker_set,
}
_WORKLOAD_KINDS = frozenset({("apps/v1", "Deployment"),
                             (LEADER_WORKER_SETS.api_version, LEADER_WORKER_SETS.kind)})


class Cond(NamedTuple):
    """One condition to set."""

    type: str
    status: bool
    reason: str
    message: str


def _available(r: Readiness) -> Cond:
    return Cond(AVAILABLE, r.available, r.reason, r.message)


def _failed(reason: str, error: Exception) -> Cond:
    return Cond(AVAILABLE, False, reason, f"Failed to reconcile {KIND}: {error}")


def _changed(old: Json | None, new: Json) -> bool:
    if old is None:
        return True
    return any(old.get(k) != new.get(k) for k in ("status", "reason", "message"))


class ComponentDeploymentReconciler:
    """Reconciles DCDs; build one per operator context (see `register`)."""

    def __init__(self, ctx: OperatorContext, pacer: StatusPacer | None = None) -> None:
        self.ctx = ctx
        self.writer = ctx.children(NAME)
        self.recorder = ctx.recorder(NAME)
        self.pacer = StatusPacer() if pacer is None else pacer

    async def reconcile(self, request: Request) -> Result | None:
        cache, client = self.ctx.cache, self.ctx.client
        obj = await cache.get_or_none(COMPONENT_DEPLOYMENTS, request.namespace, request.name)
        if obj is None:
            self.pacer.clear(request)
            self.writer.forget(request.namespace, request.name)
            return None
        if is_deleting(obj):
            self.pacer.clear(request)
            # With etcd discovery the component's keys go first (etcd_keys); an etcd error
            # keeps the finalizer and is retried with backoff. Kubernetes discovery needs no
            # cleanup; a finalizer an older version added to every DCD is released too.
            if has_finalizer(obj):
                await etcd_keys.clean_up(self.ctx.http, self.ctx.settings, self.recorder, obj)
            await release_finalizer(client, COMPONENT_DEPLOYMENTS, obj)
            return None
        status = copy.deepcopy(obj.get("status") or {})
        try:
            notes = "; ".join(str(w) for w in validated(DynamoComponentDeployment, obj))
        except InvalidObject as invalid:
            # Recorded, not retried: only a new spec can help, and a new spec is an event.
            message = f"Validation failed: {invalid}"
            await self._finish(obj, status, [Cond(VALID, False, availability.VALIDATION_FAILED,
                                                  message)])
            return None
        # Warnings (an unknown componentType and the defaults it gets, deprecated fields) ride
        # on the Valid condition: visible, and written only when they change.
        valid = Cond(VALID, True, "ValidationPassed",
                     f"{KIND} spec is valid" + (f"; warnings: {notes}" if notes else ""))
        stored = component_of(obj)
        if needs_finalizer(stored, self.ctx.settings):
            obj = await ensure_finalizer(client, COMPONENT_DEPLOYMENTS, obj)
        try:
            namespace = str(obj["metadata"]["namespace"])
            # A DCD of its own brings the MPI SSH Secret its pods mount (a graph's, its graph).
            mpi_secret = await mpi_source(
                self.ctx, namespace,
                [stored.service] if component_needs_mpi_secret(stored) else [],
                availability.RECONCILE_FAILED)
            await check_gms_device_classes(self.ctx, _own_components(obj),
                                           availability.RECONCILE_FAILED)
            inputs = await cluster_inputs(cache, namespace)

            def render(layout: LwsLayout) -> DesiredChildren:
                return desired_children(self.ctx.settings, stored, inputs,
                                        mpi_secret=mpi_secret, lws_layout=layout,
                                        epp_cluster_role=self.ctx.epp_cluster_role_name)

            layout = LwsLayout.NATIVE
            if self.ctx.settings.lws_enabled and node_count(stored.model.spec) > 1:
                # A DCD running the legacy layout keeps it until its templates change.
                layout, desired = await choose_layout(cache, obj, render)
            else:
                desired = render(layout)
            # The settings and the EPP role are the process's: the rest is the DCD's own.
            synced = await self.writer.sync(obj, desired, inputs=(inputs, mpi_secret, layout))
        except GenerationError as err:
            # The spec cannot be rendered under this operator's settings (e.g. multinode
            # without an orchestrator).
            await self._finish(obj, status, [valid, _failed(availability.GENERATION_FAILED,
                                                            err)])
            raise TerminalError(str(err), reason=availability.GENERATION_FAILED) from None
        except TerminalError as err:
            await self._finish(obj, status, [valid, Cond(AVAILABLE, False, err.reason,
                                                         f"Failed to reconcile {KIND}: {err}")])
            raise
        except (Conflict, NotFound):
            raise  # the cache was behind: retried with backoff, not worth a condition
        except ApiError as err:
            if is_transient(err):
                raise  # the API server, not the component: retried, the status kept
            # Make a persistent failure (forbidden, invalid child...) visible on the object;
            # the error itself is what counts, a lost status write is not news.
            with contextlib.suppress(ApiError):
                await self._finish(obj, status, [valid, _failed(availability.RECONCILE_FAILED,
                                                                err)])
            if err.code in (400, 422):
                # The server refuses what the spec renders to: retrying won't help.
                raise TerminalError(str(err), reason=availability.RECONCILE_FAILED) from None
            raise
        readiness, service = await self._readiness(obj, stored, desired, synced)
        held = await self._finish(obj, status, [valid, _available(readiness)], set_service=True,
                                  service=service, pace=True)
        if synced.not_owned:
            # Deleting someone else's object wakes nobody: look again now and then.
            raise TerminalError(readiness.message, reason=availability.NAME_CONFLICT,
                                retry_after=NOT_OWNED_RETRY)
        return Result(requeue_after=held) if held > 0 else None

    async def _readiness(self, obj: Json, dcd: HubComponent,
                         desired: DesiredChildren, synced: Synced
                         ) -> tuple[Readiness, Json | None]:
        name, namespace = obj["metadata"]["name"], obj["metadata"]["namespace"]
        workloads = [c for c in desired.children if c.kind in _WORKLOAD_KINDS]
        if node_count(dcd.model.spec) > 1:
            names = [c.name for c in workloads]
            sets = [synced.get(c.kind, c.name) for c in workloads]
            readiness = lws_readiness(sets, names)
            service = lws_service_status([s for s in sets if s is not None])
        else:
            dep = next((synced.get(c.kind, c.name) for c in workloads if c.name == name), None)
            readiness = deployment_readiness(dep)
            service = deployment_service_status(dep) if dep is not None else None
        if synced.not_owned:
            return Readiness(False, availability.NAME_CONFLICT,
                             synced.not_owned_message(KIND)), service
        if not readiness.available:
            problem = await first_problem(self.ctx.cache, namespace, name)
            if problem:
                readiness = Readiness(False, problem.reason,
                                      f"{readiness.message}; {problem.message}")
        return readiness, service

    async def _finish(self, obj: Json, status: Json, conds: list[Cond], *,
                      set_service: bool = False, service: Json | None = None,
                      pace: bool = False) -> float:
        """Write the status if it changed, then a Warning for each failure that is news.
        `status.service` is replaced only with `set_service` (kept when the workload was not
        looked at). With `pace` (a reconcile that went through: failures are written at
        once), an intermediate status may be held: the seconds it still is (0: none held)."""
        generation = obj["metadata"].get("generation")
        old_conditions = list(status.get("conditions") or [])
        conditions = old_conditions
        for c in conds:
            conditions = set_condition(conditions, c.type, c.status, c.reason, c.message,
                                       generation)
            if c.type == AVAILABLE:
                # The original set this once to Unknown and never again; mirroring
                # Available gives it a meaning without a second rule.
                conditions = set_condition(conditions, COMPONENT_READY, c.status, c.reason,
                                           c.message, generation)
        status["conditions"] = conditions
        status["observedGeneration"] = generation
        replicas_key = "component" if obj.get("apiVersion") == HUB else "service"
        if service is not None:
            status[replicas_key] = on_hub(service) if replicas_key == "component" else service
        elif set_service:
            # Never an empty ComponentReplicaStatus: its "" kind is outside the CRD's enum.
            status.pop(replicas_key, None)
        current = obj.get("status") or {}
        key = Request(obj["metadata"].get("namespace", ""), obj["metadata"]["name"])
        if status == current or _only_progress(current, status):
            self.pacer.clear(key)
            return 0.0
        if pace and _is_intermediate(current, status):
            wait = self.pacer.hold(key)
            if wait > 0:
                return wait
        written = await write_status(self.ctx.client, COMPONENT_DEPLOYMENTS, obj, status,
                                     decode=False)
        self.pacer.clear(key)
        if written is None:
            return 0.0
        for c in conds:
            if c.reason in WARNING_REASONS and _changed(get_condition(old_conditions, c.type),
                                                        get_condition(conditions, c.type) or {}):
                await self.recorder.warning(obj, c.reason, c.message)
        return 0.0


def _only_progress(current: Json, status: Json) -> bool:
    """A DCD not yet available whose status moved only in messages and rollout counts (see
    machinery.progress); a failure's message is news and always written."""
    available = get_condition(status.get("conditions"), AVAILABLE) or {}
    return (available.get("status") == "False"
            and available.get("reason") not in WARNING_REASONS
            and only_progress(current, status))


def _is_intermediate(current: Json, status: Json) -> bool:
    """A step on the way, worth holding for a moment (`machinery.status_pacer`): not
    available only because the workload is not ready yet, before and now (or no status yet),
    at the same generation and with the same Valid condition. Becoming available, a problem
    (a stuck pod), a failure, a new generation or new validation warnings are written at once."""
    new = get_condition(status.get("conditions"), AVAILABLE) or {}
    if new.get("status") != "False" or new.get("reason") not in availability.NOT_READY_YET:
        return False
    old = get_condition(current.get("conditions"), AVAILABLE)
    if old is not None and (old.get("status") != "False"
                            or old.get("reason") not in availability.NOT_READY_YET):
        return False
    if current.get("observedGeneration") not in (None, status.get("observedGeneration")):
        return False
    old_valid = get_condition(current.get("conditions"), VALID)
    new_valid = get_condition(status.get("conditions"), VALID) or {}
    return old_valid is None or all(old_valid.get(k) == new_valid.get(k)
                                    for k in ("status", "reason", "message"))


def needs_finalizer(dcd: HubComponent, settings: OperatorSettings) -> bool:
    """Whether deleting the DCD has something to clean up (spec §1.1): its etcd keys under
    `/<dynamoNamespace>/components/<serviceName>` (both as `v1alpha1` gives them: render
    inputs), with the etcd discovery backend and both names set. With Kubernetes discovery,
    owner references and garbage collection do it all."""
    inputs = dcd.inputs
    return (discovery_backend_of(inputs.annotations, settings) == constants.DISCOVERY_ETCD
            and bool(inputs.dynamo_namespace) and bool(inputs.service_name))


def register(manager: Manager, ctx: OperatorContext) -> None:
    """Add the DCD controller to the manager: woken by DCDs, by the children they control,
    by their pods (readiness messages) and by shared model Services."""
    hub.require_views(manager.cache, COMPONENT_DEPLOYMENTS)
    for resource, transform in CACHE_TRANSFORMS.items():
        if manager.cache.transform_for(resource) is not transform:
            raise ValueError(f"the {NAME} controller needs the cache to hold {resource} "
                             "trimmed: declare reconcilers.component.CACHE_TRANSFORMS in "
                             "the manager's by_object")
    index_pods(manager.cache)
    index_service_accounts(manager.cache)
    reconciler = ComponentDeploymentReconciler(ctx)
    controller = manager.add_controller(
        COMPONENT_DEPLOYMENTS.kind, reconciler.reconcile, for_=COMPONENT_DEPLOYMENTS,
        owns=owned_resources(ctx.settings),
        watches=[(SERVICES, model_service_informer_mapper(ctx.cache))],
        max_concurrent_reconciles=ctx.max_concurrent_reconciles(NAME),
        # As the original: its own status writes and the creation of its children (its own
        # doing) wake nothing; their updates (a Deployment's status) and deletions do.
        for_predicate=STATUS_ONLY_IGNORED, owns_predicate=CREATE_IGNORED)
    # Of its pods, only what changes the story of a stuck pod it tells (see pod_problems).
    controller.watch(manager.cache.informer(PODS), pods_to_components, PROBLEM_CHANGES)
    # A DCD of its own waiting for its GMS DeviceClass is woken when it appears.
    watch_gms_device_classes(manager, ctx, controller, COMPONENT_DEPLOYMENTS, _own_components)


def _own_components(dcd: Json) -> list[Json]:
    """A DCD of its own as its one component (`v1beta1`, named); none for a graph's DCD,
    whose graph looks its GMS class up."""
    metadata = dcd.get("metadata") or {}
    spec = dcd.get("spec")
    if graph_name(None, metadata) or not isinstance(spec, dict):
        return []
    return [{**spec, "name": spec.get("name") or metadata.get("name", "")}]
