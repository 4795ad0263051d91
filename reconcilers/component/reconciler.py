"""The DynamoComponentDeployment (DCD) controller: one component's workload, Services and
Ingress, and whether it is available.

A reconcile, from the cached DCD alone (level-based; it never depends on the event that woke
it):

1. Gone: stop. Terminating: release the finalizer and stop; a terminating DCD never gets
   children created or updated.
2. Invalid spec (conversion or api.validation): condition `Valid=False` naming the field,
   a Warning event when that is news, and stop *without* an error: retrying cannot help until
   the spec changes, and a spec change is a new event.
3. Finalizer, then the children (component_children): create, update on drift, prune.
4. Status: `Valid`, `Available` (component_readiness, plus the first stuck pod's story),
   `DynamoComponentReady` (mirrors Available), `service`, `observedGeneration`; written only
   when it changed.

Events: the ChildWriter's create/update/delete events, and Warnings when a failure condition
first appears. A no-op reconcile makes no write and no event.
"""

from __future__ import annotations

import copy
from typing import Any, NamedTuple

import structlog

from api.convert import load
from api.errors import ConversionError
from api.v1alpha1 import DynamoComponentDeployment
from api.validation import validate
from backends.errors import GenerationError
from backends.multinode import node_count
from controller.errors import ApiError, Conflict, NotFound
from controller.manager import Manager
from controller.reconcile import Request, Result
from reconcilers.component.children import (
    ChildrenState,
    owned_resources,
    service_account_informer,
    sync_children,
)
from reconcilers.component.model_services import model_service_informer_mapper
from reconcilers.component.pod_problems import first_problem, pod_informer, pods_to_components
from reconcilers.component.pull_secrets import secret_informer
from reconcilers.component.readiness import (
    Readiness,
    deployment_readiness,
    deployment_service_status,
    lws_readiness,
    lws_service_status,
)
from reconcilers.machinery.conditions import get_condition, set_condition
from reconcilers.machinery.context import OperatorContext
from reconcilers.machinery.finalizer import ensure_finalizer, is_deleting, release_finalizer
from reconcilers.machinery.resources import COMPONENT_DEPLOYMENTS, PODS, SERVICES
from reconcilers.machinery.status_writer import write_status

Json = dict[str, Any]
log = structlog.get_logger("reconcilers.component.reconciler")

#: Controller name, event source component and metrics label (the original's).
NAME = "dynamocomponentdeployment"
KIND = "DynamoComponentDeployment"

VALID = "Valid"
AVAILABLE = "Available"
COMPONENT_READY = "DynamoComponentReady"
#: A child's name is taken by an object we do not own: look again now and then, since
#: deleting that object wakes nobody.
NOT_OWNED_RETRY_SECONDS = 60.0
#: Failures worth a Warning event when they first appear (a rollout in progress is not one).
WARNING_REASONS = frozenset({"ValidationFailed", "GenerationFailed", "ReconcileFailed",
                             "NameConflict"})


class Cond(NamedTuple):
    """One condition to set."""

    type: str
    status: bool
    reason: str
    message: str


def _available(r: Readiness) -> Cond:
    return Cond(AVAILABLE, r.available, r.reason, r.message)


def _spec_errors(obj: Json) -> tuple[DynamoComponentDeployment | None, list[str]]:
    """The typed DCD, or the problems of its spec (each naming its field)."""
    try:
        # Status is ours; a problem there is not the user's spec problem.
        dcd = load(DynamoComponentDeployment, {k: v for k, v in obj.items() if k != "status"})
    except ConversionError as err:
        return None, [str(e) for e in err.errors]
    return dcd, [str(e) for e in validate(dcd)]


def _changed(old: Json | None, new: Json) -> bool:
    if old is None:
        return True
    return any(old.get(k) != new.get(k) for k in ("status", "reason", "message"))


class ComponentDeploymentReconciler:
    """Reconciles DCDs; build one per operator context (see `register`)."""

    def __init__(self, ctx: OperatorContext) -> None:
        self.ctx = ctx
        self.writer = ctx.children(NAME)
        self.recorder = ctx.recorder(NAME)
        # The cluster reads the children need, trimmed in the cache.
        secret_informer(ctx.cache)
        service_account_informer(ctx.cache)
        pod_informer(ctx.cache)

    async def reconcile(self, request: Request) -> Result | None:
        cache, client = self.ctx.cache, self.ctx.client
        try:
            obj = await cache.get(COMPONENT_DEPLOYMENTS, request.namespace, request.name)
        except NotFound:
            return None
        if is_deleting(obj):
            # Kubernetes discovery needs no cleanup; the original's etcd key removal applies
            # only to the etcd backend, which this operator does not write to.
            await release_finalizer(client, COMPONENT_DEPLOYMENTS, obj)
            return None
        status = copy.deepcopy(obj.get("status") or {})
        dcd, errors = _spec_errors(obj)
        if dcd is None or errors:
            message = "Validation failed: " + "; ".join(errors)
            await self._finish(obj, status, [Cond(VALID, False, "ValidationFailed", message)])
            return None
        valid = Cond(VALID, True, "ValidationPassed", f"{KIND} spec is valid")
        obj = await ensure_finalizer(client, COMPONENT_DEPLOYMENTS, obj)
        try:
            state = await sync_children(cache, self.writer, self.ctx.settings, obj, dcd)
        except GenerationError as err:
            # The spec cannot be rendered under this operator's settings (e.g. multinode
            # without an orchestrator): as for invalid input, retrying cannot help.
            failed = Cond(AVAILABLE, False, "GenerationFailed",
                          f"Failed to reconcile {KIND}: {err}")
            await self._finish(obj, status, [valid, failed])
            return None
        except (Conflict, NotFound):
            raise  # the cache was behind: retried with backoff, not worth a condition
        except ApiError as err:
            # Make a persistent failure (forbidden, invalid child...) visible on the object.
            failed = Cond(AVAILABLE, False, "ReconcileFailed",
                          f"Failed to reconcile {KIND}: {err}")
            try:
                await self._finish(obj, status, [valid, failed])
            except ApiError:
                log.debug("status not recorded", dcd=request.name)
            if err.code in (400, 422):
                return None  # the server refuses what the spec renders to: retrying won't help
            raise
        readiness, service = await self._readiness(obj, dcd, state)
        await self._finish(obj, status, [valid, _available(readiness)], set_service=True,
                           service=service)
        return Result(requeue_after=NOT_OWNED_RETRY_SECONDS) if state.not_owned else None

    async def _readiness(self, obj: Json, dcd: DynamoComponentDeployment,
                         state: ChildrenState) -> tuple[Readiness, Json | None]:
        name, namespace = obj["metadata"]["name"], obj["metadata"]["namespace"]
        if node_count(dcd.spec) > 1:
            sets = [state.workloads.get(n) for n in state.workload_names]
            readiness = lws_readiness(sets, state.workload_names)
            service = lws_service_status([s for s in sets if s is not None])
        else:
            dep = state.workloads.get(name)
            readiness = deployment_readiness(dep)
            service = deployment_service_status(dep) if dep is not None else None
        if state.not_owned:
            taken = ", ".join(state.not_owned)
            return Readiness(False, "NameConflict",
                             f"{taken} already exist(s) and is not owned by this {KIND}"), service
        if not readiness.available:
            problem = await first_problem(self.ctx.cache, namespace, name)
            if problem:
                readiness = Readiness(False, readiness.reason, f"{readiness.message}; {problem}")
        return readiness, service

    async def _finish(self, obj: Json, status: Json, conds: list[Cond], *,
                      set_service: bool = False, service: Json | None = None) -> None:
        """Write the status if it changed, then a Warning for each failure that is news.
        `status.service` is replaced only with `set_service` (kept when the workload was not
        looked at)."""
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
        if service is not None:
            status["service"] = service
        elif set_service:
            # Never an empty ServiceReplicaStatus: its "" kind is outside the CRD's enum.
            status.pop("service", None)
        if await write_status(self.ctx.client, COMPONENT_DEPLOYMENTS, obj, status) is None:
            return
        for c in conds:
            if c.reason in WARNING_REASONS and _changed(get_condition(old_conditions, c.type),
                                                        get_condition(conditions, c.type) or {}):
                await self.recorder.warning(obj, c.reason, c.message)


def register(manager: Manager, ctx: OperatorContext) -> None:
    """Add the DCD controller to the manager: woken by DCDs, by the children they control,
    by their pods (readiness messages) and by shared model Services."""
    reconciler = ComponentDeploymentReconciler(ctx)
    manager.add_controller(
        NAME, reconciler.reconcile, for_=COMPONENT_DEPLOYMENTS,
        owns=owned_resources(ctx.settings),
        watches=[(PODS, pods_to_components),
                 (SERVICES, model_service_informer_mapper(ctx.cache))],
        max_concurrent_reconciles=ctx.max_concurrent_reconciles(NAME))
