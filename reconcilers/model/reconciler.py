"""The DynamoModel controller: where a base model is served, and a LoRA adapter loaded into
every worker serving its base model.

A reconcile, computed from the cluster alone:

1. the model is gone → nothing; terminating → for a LoRA, `POST /engine/v1/unload_lora` to
   every endpoint (best effort: failures are events, never a blocked deletion), then drop
   our finalizer;
2. invalid spec → `EndpointsReady=False ValidationFailed`, no retry until the spec changes;
3. finalizer `nvidia.com/finalizer`;
4. candidates from the EndpointSlices labelled with the base model's hash (`endpoints`);
   none → `NoServicesFound` / `NoEndpoints`;
5. a base model (or an adapter) lists its endpoints, none of them ready, and calls nobody;
   a LoRA is loaded into the ready endpoints that need it (`lora`), never into one that is
   not ready;
6. status written only when it differs; events on transitions; a LoRA with an endpoint
   without the adapter is looked at again after `LoraSettings.retry_after`.

Which endpoints need the load is decided from the status, so it survives operator restarts:
each endpoint records in `loadedOn` the run it was loaded into, `<pod uid>/<restarts>` (the
pod's containers' restart counts summed, read from the Pod cache). A ready endpoint whose pod
still runs that incarnation is not called again; a new pod (scale-up, a replacement, an IP
reused) or a restarted container (its engine lost the adapter) no longer matches and is
loaded as soon as its endpoint is ready. The EndpointSlice and Pod watches bring those
moments here, so a late pod does not wait for the retry. Records made under another
generation (a new adapter name or source) count for nothing. Before calling anyone the model is
read once from the API server, so a status we have just written and the cache has not yet
seen never makes us call a worker twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import structlog

from api.errors import InvalidObject
from api.load import load_valid
from api.v1alpha1 import DynamoModel
from backends import naming
from controller.errors import NotFound
from controller.handlers import Mapper
from controller.manager import Manager
from controller.reconcile import Request, Result
from reconcilers.machinery.context import OperatorContext
from reconcilers.machinery.finalizer import (
    ensure_finalizer,
    has_finalizer,
    is_deleting,
    release_finalizer,
)
from reconcilers.machinery.resources import ENDPOINT_SLICES, MODELS, PODS
from reconcilers.machinery.status_writer import write_status
from reconcilers.model import status as model_status
from reconcilers.model.endpoints import (
    BY_MODEL_HASH,
    Candidate,
    candidates,
    hash_key,
    labelled_key,
    model_key,
)
from reconcilers.model.lora import (
    LOAD_PATH,
    UNLOAD_PATH,
    LoraSettings,
    call_all,
    load_body,
    unload_body,
)

Json = dict[str, Any]
log = structlog.get_logger("reconcilers.model")

#: The event source component (and the child writer's). The controller is named after
#: the kind (MODELS.kind), as the original's `Named(...)`: the `controller`
#: label of controller-runtime's metrics, the work queue's name, the logs' controller.
NAME = "dynamomodel"
LORA = "lora"


def is_lora(model: DynamoModel) -> bool:
    return (model.spec.model_type or "").lower() == LORA


def incarnation(candidate: Candidate, pod: Json | None) -> str:
    """`<pod uid>/<restarts>`: which run of the pod's containers serves the endpoint."""
    uid = candidate.pod_uid or str(((pod or {}).get("metadata") or {}).get("uid") or "")
    statuses = ((pod or {}).get("status") or {}).get("containerStatuses") or ()
    restarts = sum(int(c.get("restartCount") or 0) for c in statuses)
    return f"{uid}/{restarts}"


@dataclass(frozen=True)
class Plan:
    """The endpoints of a LoRA: those already settled, and those to load now."""

    endpoints: list[Json]
    to_load: dict[str, str]  # address -> incarnation


class ModelReconciler:
    """Reconciles one DynamoModel per call; holds no state between calls."""

    def __init__(self, ctx: OperatorContext, settings: LoraSettings | None = None) -> None:
        self.ctx = ctx
        self.settings = settings or LoraSettings()
        self.events = ctx.recorder(NAME)

    async def reconcile(self, request: Request) -> Result | None:
        live = await self.ctx.cache.get_or_none(MODELS, request.namespace, request.name)
        if live is None:
            return None
        try:
            model = load_valid(DynamoModel, live)
        except InvalidObject as invalid:
            if is_deleting(live):
                # Never loaded anything: nothing to unload.
                await release_finalizer(self.ctx.client, MODELS, live)
                return None
            await self._finish(live, model_status.invalid_status(
                live, f"Validation failed: {invalid}"))
            return None
        if is_deleting(live):
            if has_finalizer(live):  # once released, other finalizers' events are not ours
                await self._cleanup(live, model)
                await release_finalizer(self.ctx.client, MODELS, live)
            return None
        live = await ensure_finalizer(self.ctx.client, MODELS, live)
        slices = await self._slices(live, model)
        if not slices:
            await self._finish(live, model_status.no_slices_status(
                live, model.spec.base_model_name))
            return None
        found, services = candidates(slices)
        if not is_lora(model):
            endpoints = [{"address": c.address, "podName": c.pod_name, "ready": False}
                         for c in found]
            await self._finish(live, model_status.endpoints_status(live, endpoints, services,
                                                                   lora=False))
            return None
        plan = await self._plan(live, found)
        if plan.to_load:
            # Our last status write may not be in the cache yet: decide on the server's copy.
            live = await self._fresh(live)
            plan = await self._plan(live, found)
        endpoints = await self._load(live, model, plan)
        status = model_status.endpoints_status(live, endpoints, services, lora=True)
        await self._finish(live, status)
        if status["readyEndpoints"] < status["totalEndpoints"]:
            return Result(requeue_after=self.settings.retry_after)
        return None

    # --- the steps ---------------------------------------------------------------------

    async def _slices(self, live: Json, model: DynamoModel) -> list[Json]:
        key = hash_key(str(live["metadata"].get("namespace", "")),
                       naming.model_hash(model.spec.base_model_name))
        return await self.ctx.cache.by_index(ENDPOINT_SLICES, BY_MODEL_HASH, key)

    async def _plan(self, live: Json, found: list[Candidate]) -> Plan:
        """Which endpoints have the adapter already, and which ready ones need it."""
        namespace = str(live["metadata"].get("namespace", ""))
        status = live.get("status") or {}
        recorded = {(e.get("address"), e.get("podName")): e
                    for e in status.get("endpoints") or ()}
        if status.get("observedGeneration") != live["metadata"].get("generation"):
            recorded = {}  # loaded from another spec (name or source): load everywhere again
        endpoints: list[Json] = []
        to_load: dict[str, str] = {}
        for candidate in found:
            pod = await self.ctx.cache.get_or_none(PODS, namespace, candidate.pod_name)
            current = incarnation(candidate, pod)
            loaded_on = (recorded.get((candidate.address, candidate.pod_name)) or {}).get(
                "loadedOn")
            entry: Json = {"address": candidate.address, "podName": candidate.pod_name,
                           "ready": False}
            if loaded_on == current:
                entry["loadedOn"] = current
                entry["ready"] = candidate.ready
            elif candidate.ready:
                to_load[candidate.address] = current
            endpoints.append(entry)
        return Plan(endpoints, to_load)

    async def _load(self, live: Json, model: DynamoModel, plan: Plan) -> list[Json]:
        if not plan.to_load:
            return plan.endpoints
        uri = model.spec.source.uri if model.spec.source is not None else ""
        results = await call_all(self.ctx.http, plan.to_load, LOAD_PATH,
                                 load_body(model.spec.model_name, uri), self.settings,
                                 "load LoRA")
        failures = [error for error in results.values() if error]
        if len(failures) < len(results):
            log.info("LoRA loaded", lora=model.spec.model_name,
                     endpoints=len(results) - len(failures))
        if failures:
            await self.events.warning(live, "PartialEndpointFailure",
                                      "Some endpoints failed to load LoRA: "
                                      + "; ".join(sorted(failures)))
            log.info("LoRA load failed on some endpoints", failed=len(failures),
                     called=len(results))
        endpoints = []
        for entry in plan.endpoints:
            incarnation_now = plan.to_load.get(entry["address"])
            if incarnation_now is not None and results.get(entry["address"]) is None:
                entry = {**entry, "ready": True, "loadedOn": incarnation_now}
            endpoints.append(entry)
        return endpoints

    async def _cleanup(self, live: Json, model: DynamoModel) -> None:
        """Unload a LoRA from every endpoint; failures are reported, never blocking."""
        if not is_lora(model):
            return
        found, _ = candidates(await self._slices(live, model))
        if not found:
            return
        results = await call_all(self.ctx.http, [c.address for c in found], UNLOAD_PATH,
                                 unload_body(model.spec.model_name), self.settings,
                                 "unload LoRA")
        failures = sorted(error for error in results.values() if error)
        if failures:
            await self.events.warning(live, "LoRAUnloadFailed",
                                      "Failed to unload LoRA from some endpoints: "
                                      + "; ".join(failures))
        else:
            await self.events.normal(live, "LoRAUnloaded",
                                     f"Unloaded LoRA from {len(results)} endpoint(s)")

    async def _fresh(self, live: Json) -> Json:
        meta = live["metadata"]
        try:
            fresh: Json = await self.ctx.client.get(MODELS, meta.get("namespace"), meta["name"])
        except NotFound:
            return live
        return fresh

    async def _finish(self, live: Json, status: Json) -> None:
        """Write the status if it changed; then the event of the transition, if any."""
        before = live.get("status") or {}
        if status == before:
            return
        await write_status(self.ctx.client, MODELS, live, status)
        event = model_status.transition_event(before, status)
        if event is not None:
            await (self.events.warning if event.warning else self.events.normal)(
                live, event.reason, event.message)


# --- registration -----------------------------------------------------------------------------

def _to_models(manager: Manager) -> Mapper:
    """Mapper of EndpointSlices and Pods carrying a base-model hash: the models of that hash."""
    models = manager.cache.informer(MODELS, indexers={BY_MODEL_HASH: model_key})

    def mapper(obj: Json) -> list[Request]:
        return [Request(m["metadata"].get("namespace", ""), m["metadata"]["name"])
                for key in labelled_key(obj) for m in models.store.by_index(BY_MODEL_HASH, key)]

    return mapper


def register(manager: Manager, ctx: OperatorContext, settings: LoraSettings | None = None
             ) -> None:
    """Add the DynamoModel controller to a manager."""
    manager.cache.informer(ENDPOINT_SLICES, indexers={BY_MODEL_HASH: labelled_key})
    to_models = _to_models(manager)
    manager.add_controller(MODELS.kind, ModelReconciler(ctx, settings).reconcile, for_=MODELS,
                           watches=[(ENDPOINT_SLICES, to_models), (PODS, to_models)],
                           max_concurrent_reconciles=ctx.max_concurrent_reconciles(NAME))
