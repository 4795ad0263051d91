"""The DynamoGraphDeploymentRequest controller, on the v1beta1 request: validate, profile,
generate a DynamoGraphDeployment, create it with autoApply and follow it.

The informer holds the v1beta1 object as stored (the hub); one reconcile takes at most one step
of the lifecycle, and the status it writes (one write, v1beta1's status subresource) comes back
as an event and drives the next:

    ""  --valid-->  Pending  --Job created-->  Profiling (profilingPhase Initializing)
    --Job complete, graph generated-->  Deploying (autoApply, the default) or Ready;
    Deploying  --graph created, then successful-->  Deployed  --degraded-->  Deploying;
    a deleted graph, an invalid spec, a failed Job or generation  -->  Failed.

Failed is terminal; once profiling has started the spec is frozen (a changed generation only
earns a SpecChangeRejected warning), except that a request waiting in Ready may switch
autoApply on. The profiling Job is built from the intent (`backends.profiling_intent`), or,
for a request written as v1alpha1 with a profilingConfig, from that config as before
(`backends.profiling_job`): the v1beta1 request and what only v1alpha1 says, read from its spec
payload by `api.conversion.request_inputs` (no v1alpha1 view is made here). The graph is
made by `backends.generated_graph.materialize`, stored in `status.profilingResults.
selectedConfig` and created as v1beta1 without an owner (it outlives its request); its
`dgdr.nvidia.com/*` labels lead its events back here.
"""

from __future__ import annotations

import contextlib
import copy
from typing import Any

import structlog

from api.conversion import SPOKE
from api.conversion.request_inputs import RequestInputs, request_inputs
from api.errors import ConversionError
from api.v1beta1.graph_deployment_request import DynamoGraphDeploymentRequest as HubRequest
from api.validation.request import profiles_by_config
from api.validation.request_versions import check_request
from backends import profiling_intent as intent
from backends import profiling_job as pj
from backends.children import DesiredChildren
from backends.errors import GenerationError
from backends.generated_graph import additional_config_maps, materialize, target_namespace
from controller.errors import AlreadyExists, ApiError, NotFound, TerminalError
from controller.manager import Manager
from controller.reconcile import Request, Result
from reconcilers.machinery import hub
from reconcilers.machinery.children import ChildWriter
from reconcilers.machinery.context import NOT_OWNED_RETRY, OperatorContext
from reconcilers.machinery.finalizer import (
    ensure_finalizer,
    has_finalizer,
    is_deleting,
    release_finalizer,
)
from reconcilers.machinery.resources import (
    CONFIG_MAPS,
    DEPLOYMENT_REQUESTS,
    GRAPH_DEPLOYMENTS,
    JOBS,
    NODES,
    PERSISTENT_VOLUME_CLAIMS,
    PODS,
)
from reconcilers.machinery.status_writer import drop_status_payload, merge_patch
from reconcilers.request import failure
from reconcilers.request.legacy import LegacyProfiling, NoGpus
from reconcilers.request.output import OutputError, parse_output, profiler_message
from reconcilers.request.status import (
    DEPLOYED,
    DEPLOYING,
    DEPLOYMENT_READY,
    FAILED,
    FROZEN,
    GRAPH_READY_STATES,
    INITIAL,
    PENDING,
    PROFILING,
    PROFILING_CONDITION,
    PROFILING_INITIALIZING,
    READY,
    SPEC_GENERATED,
    VALIDATION,
    Step,
    condition,
    graph_deleted,
    has_condition,
    invalid,
    job_creation_failed,
    profiling_failed,
    set_phase,
    step,
)

Json = dict[str, Any]
log = structlog.get_logger("reconcilers.request")

#: The event source component (and the child writer's). The controller is named after
#: the kind (DEPLOYMENT_REQUESTS.kind), as the original's `Named(...)`: the `controller`
#: label of controller-runtime's metrics, the work queue's name, the logs' controller.
NAME = "dynamographdeploymentrequest"
ADDITIONAL_RESOURCES_ANNOTATION = "dgdr.nvidia.com/additional-resources"
#: API answers that retrying the same create cannot change.
_REFUSED = (400, 403, 422)


class _Request:
    """One request as a reconcile reads it: the live v1beta1 object, its typed v1beta1 form
    and, when it profiles by a v1alpha1 profilingConfig, what only v1alpha1 says of it."""

    def __init__(self, live: Json, dgdr: HubRequest, legacy: RequestInputs | None) -> None:
        self.live = live
        self.dgdr = dgdr
        self.legacy = legacy

    @property
    def name(self) -> str:
        return str(self.live["metadata"]["name"])

    @property
    def namespace(self) -> str:
        return str(self.live["metadata"]["namespace"])

    @property
    def auto_apply(self) -> bool:
        return self.dgdr.spec.auto_apply is not False


class GraphDeploymentRequestReconciler:
    """Reconciles one DynamoGraphDeploymentRequest per call."""

    def __init__(self, ctx: OperatorContext) -> None:
        self.ctx = ctx
        self.writer: ChildWriter = ctx.children(NAME)
        self.legacy = LegacyProfiling(ctx)

    async def reconcile(self, request: Request) -> Result | None:
        live = await self.ctx.cache.get_or_none(DEPLOYMENT_REQUESTS, request.namespace,
                                                request.name)
        if live is None:
            return None
        if is_deleting(live):
            # The Job goes with the request (owner reference); the graph stays, by design.
            await release_finalizer(self.ctx.client, DEPLOYMENT_REQUESTS, live)
            return None
        if not has_finalizer(live):
            live = await ensure_finalizer(self.ctx.client, DEPLOYMENT_REQUESTS, live)
        # A copy: the handlers refresh it after their own writes, and the cache's is shared.
        live = copy.deepcopy(live)
        status = live.get("status") or {}
        phase = str(status.get("phase") or INITIAL)
        if phase == FAILED:
            return None  # delete and recreate the request to try again
        legacy = _legacy(live)
        # A request written as v1alpha1 (it has a profilingConfig) hears of its fields by
        # their v1alpha1 names.
        checked = check_request(live, namespace_restricted=self.ctx.namespace is not None,
                                new=phase == INITIAL, written_as=SPOKE if legacy else None)
        if checked.hub is None or checked.errors:
            await self._apply(live, invalid(live, "; ".join(str(e) for e in checked.errors)))
            return None
        req = _Request(live, checked.hub, legacy)
        if _rejected_change(req, phase):
            await self.writer.recorder.warning(
                live, "SpecChangeRejected",
                f"Cannot modify spec in phase '{phase}'. DynamoGraphDeploymentRequest is "
                "immutable once profiling starts. Create a new resource with a different "
                "name instead.")
            return None
        handler = {INITIAL: self._initial, PENDING: self._pending, PROFILING: self._profiling,
                   READY: self._ready, DEPLOYING: self._deploying,
                   DEPLOYED: self._deployed}.get(phase)
        if handler is None:
            await self._apply(live, step(live, FAILED).warning("InvalidState",
                                                                f"Invalid phase {phase!r}"))
            return None
        await self._apply(live, await handler(req))
        return None

    async def _apply(self, live: Json, s: Step | None) -> None:
        """Write the step's status if it changed (one write), then record its events."""
        if s is None:
            return
        before = (live.get("status") or {}).get("phase")
        current = live.get("status") or {}
        if s.status != current:
            meta = live["metadata"]
            # Carries the resourceVersion read: a request changed meanwhile answers 409 and
            # the reconcile reruns on fresh data.
            patch = {"metadata": {"resourceVersion": meta["resourceVersion"]},
                     "status": merge_patch(current, s.status)}
            with contextlib.suppress(NotFound):
                live = await self.ctx.client.patch(DEPLOYMENT_REQUESTS, meta["namespace"],
                                                   meta["name"], patch, subresource="status")
            live = await self._drop_stale_status_payload(live)
        recorder = self.writer.recorder
        for warning, reason, message in s.events:
            await (recorder.warning if warning else recorder.normal)(live, reason, message)
        if before != s.status.get("phase"):
            log.info("phase changed", phase=s.status.get("phase"), previous=before or "")

    async def _drop_stale_status_payload(self, live: Json) -> Json:
        """Remove the status payload an older controller left, once this one wrote the
        status (`status_writer.drop_status_payload`)."""
        with contextlib.suppress(NotFound):
            live = await drop_status_payload(self.ctx.client, DEPLOYMENT_REQUESTS, live)
        return live

    # --- "" and Pending ------------------------------------------------------------------

    async def _problems(self, req: _Request) -> list[str]:
        """What the user must fix before profiling can start, found by reading the cluster."""
        if req.legacy is not None:
            return await self.legacy.problems(req.dgdr, req.legacy)
        problems = []
        cache = req.dgdr.spec.model_cache
        if cache is not None and cache.pvc_name:
            try:
                await self.ctx.client.get(PERSISTENT_VOLUME_CLAIMS, req.namespace,
                                          cache.pvc_name)
            except NotFound:
                problems.append(f"model cache PVC {cache.pvc_name} not found in namespace "
                                f"{req.namespace}")
        if not intent.manual_hardware(req.dgdr) and await self._discovered() is None:
            problems.append("GPU hardware info required but auto-discovery found no GPU node. "
                            "Add spec.hardware.gpuSku, spec.hardware.vramMb or "
                            "spec.hardware.numGpusPerNode")
        return problems

    async def _discovered(self) -> Json | None:
        """spec.hardware as the GPU nodes describe it (None: none found, or a
        namespace-restricted operator, which may not read nodes)."""
        if self.ctx.namespace is not None:
            return None
        return intent.discovered_hardware((await self.ctx.client.list(NODES)).get("items")
                                          or [])

    async def _initial(self, req: _Request) -> Step:
        live = req.live
        problems = await self._problems(req)
        if problems:
            return invalid(live, "; ".join(problems))
        s = step(live, PENDING, observedGeneration=live["metadata"].get("generation"))
        condition(s, live, VALIDATION, True, "ValidationPassed", "Spec is valid")
        condition(s, live, PROFILING_CONDITION, False, "DiscoveringHardware",
                  "Discovering GPU hardware and preparing profiling job")
        return s.normal("Initialized", "DGDR initialized successfully")

    async def _pending(self, req: _Request) -> Step:
        live = req.live
        # A spec changed while Pending is taken as it is now, checked again.
        problems = await self._problems(req)
        if problems:
            return invalid(live, "; ".join(problems))
        s = step(live, observedGeneration=live["metadata"].get("generation"))
        role = self.ctx.dgdr_profiling_cluster_role_name if self.ctx.namespace is None else ""
        try:
            if req.legacy is not None:
                desired, aic = await self.legacy.children(req.dgdr, req.legacy, role)
            else:
                spec = intent.effective_spec(req.dgdr, await self._hardware(req.dgdr))
                desired, aic = intent.intent_profiling_children(
                    req.dgdr, spec, cluster_role=role,
                    dynamo_version=self.ctx.settings.dynamo_version), False
        except (GenerationError, NoGpus) as error:
            return job_creation_failed(live, s, str(error))
        job = pj.job_name(req.name)
        if await self.ctx.cache.get_or_none(JOBS, req.namespace, job) is None:
            await self._delete_stale_output(req)
        failed = await self._sync(req, desired)
        if failed is not None:
            return job_creation_failed(live, s, failed)
        set_phase(s, live, PROFILING)
        s.status.update(profilingPhase=PROFILING_INITIALIZING, profilingJobName=job)
        condition(s, live, PROFILING_CONDITION, False, "ProfilingRunning",
                  "Profiling is in progress")
        return s.normal("ProfilingJobCreated",
                        "AIC profiling job created" if aic else "Profiling job created")

    async def _sync(self, req: _Request, desired: DesiredChildren) -> str | None:
        """Create the profiling identity and Job; the refusal's message, if refused."""
        try:
            synced = await self.writer.sync(req.live, desired)
        except TerminalError as error:  # a child the API server refuses (400/422)
            return error.message
        except ApiError as error:
            if error.code not in _REFUSED:
                raise
            return str(error)
        if synced.not_owned:
            # Someone else's object of that name: wait for it to go.
            raise TerminalError(synced.not_owned_message("request"), reason="JobCreationFailed",
                                retry_after=NOT_OWNED_RETRY)
        return None

    async def _hardware(self, dgdr: HubRequest) -> Json | None:
        """Discovered hardware for the fields the user left out (all given: no read)."""
        hardware = dgdr.spec.hardware
        if hardware is not None and None not in (hardware.gpu_sku, hardware.vram_mb,
                                                 hardware.num_gpus_per_node,
                                                 hardware.total_gpus):
            return None
        return await self._discovered()

    async def _delete_stale_output(self, req: _Request) -> None:
        """Results of an earlier run of the same name must not pass for this run's."""
        name = pj.output_config_map_name(req.name)
        with contextlib.suppress(NotFound):
            await self.ctx.client.delete(CONFIG_MAPS, req.namespace, name)
            log.info("stale profiling output deleted", configmap=name)

    # --- Profiling -----------------------------------------------------------------------

    async def _profiling(self, req: _Request) -> Step | None:
        live = req.live
        name = pj.job_name(req.name)
        job = await self.ctx.cache.get_or_none(JOBS, req.namespace, name)
        if job is None:
            # Just created, the cache may not hold it yet: ask the API server before failing.
            try:
                job = await self.ctx.client.get(JOBS, req.namespace, name)
            except NotFound:
                return profiling_failed(live, f"profiling job failed: Job {name} not found")
        if failure.condition_true(job, "Failed"):
            return profiling_failed(live, await self._failure_message(req, job))
        if not failure.condition_true(job, "Complete"):
            return None  # Job events drive the rest
        s = step(live, profilingPhase=None)
        condition(s, live, PROFILING_CONDITION, True, "ProfilingCompleted",
                  "Profiling job completed successfully")
        try:
            return await self._generated(req, s)
        except (OutputError, GenerationError) as error:
            set_phase(s, live, FAILED)
            condition(s, live, SPEC_GENERATED, False, "GenerationFailed", str(error))
            return s.warning("GenerationFailed", f"Failed to generate spec: {error}")

    async def _failure_message(self, req: _Request, job: Json) -> str:
        # One read on the way to Failed: the pods' exit codes, and the profiler's verdict.
        pods = (await self.ctx.client.list(PODS, req.namespace,
                                           label_selector=f"dgdr={req.name}")).get("items") or []
        try:
            output = await self.ctx.client.get(CONFIG_MAPS, req.namespace,
                                               pj.output_config_map_name(req.name))
        except NotFound:
            output = None
        return failure.job_failure_message(job, pods, profiler_message(output, pj.STATUS_KEY))

    def _output_key(self, req: _Request) -> str:
        if req.legacy is None:
            return intent.INTENT_OUTPUT_KEY
        return pj.MOCKER_OUTPUT_KEY if req.legacy.use_mocker else pj.OUTPUT_KEY

    async def _generated(self, req: _Request, s: Step) -> Step:
        live = req.live
        cm_name = pj.output_config_map_name(req.name)
        try:
            output_cm = await self.ctx.client.get(CONFIG_MAPS, req.namespace, cm_name)
        except NotFound:
            raise OutputError(f"output ConfigMap {cm_name} not found - profiling may not have "
                              "completed yet") from None
        output = parse_output(output_cm, self._output_key(req))
        extra = output.additional_yaml()
        graph = materialize(output.deployment, req.dgdr)
        if extra and (live["metadata"].get("annotations") or {}).get(
                ADDITIONAL_RESOURCES_ANNOTATION) != extra:
            patch = {"metadata": {"resourceVersion": live["metadata"]["resourceVersion"],
                                  "annotations": {ADDITIONAL_RESOURCES_ANNOTATION: extra}}}
            written = await self.ctx.client.patch(DEPLOYMENT_REQUESTS, req.namespace, req.name,
                                                  patch)
            live["metadata"] = written["metadata"]
        await self._create_config_maps(req, output.additional)
        auto = req.auto_apply
        set_phase(s, live, DEPLOYING if auto else READY)
        s.status.update(dgdName=graph["metadata"]["name"],
                        profilingResults={**(s.status.get("profilingResults") or {}),
                                          "selectedConfig": graph})
        message = ("DynamoGraphDeployment spec generated successfully" if auto
                   else "Generated spec is available in status.profilingResults.selectedConfig")
        condition(s, live, SPEC_GENERATED, True, "SpecGenerated", message)
        return s.normal("SpecGenerated", message)

    async def _create_config_maps(self, req: _Request, documents: list[Json]) -> None:
        """The profiler's extra ConfigMaps, for the graph: created once, no owner."""
        try:
            for cm in additional_config_maps(documents, req.dgdr):
                with contextlib.suppress(AlreadyExists):
                    await self.ctx.client.create(CONFIG_MAPS, cm)
        except ApiError as error:
            await self.writer.recorder.warning(
                req.live, "ConfigMapCreationFailed",
                f"Failed to create ConfigMaps from profiling output: {error}")

    # --- Ready, Deploying and Deployed ---------------------------------------------------

    async def _ready(self, req: _Request) -> Step | None:
        if not req.auto_apply or _graph_created(req.live):
            return None
        # autoApply switched on after profiling: deploy what was generated.
        return step(req.live, DEPLOYING,
                    observedGeneration=req.live["metadata"].get("generation"))

    async def _deploying(self, req: _Request) -> Step | None:
        live = req.live
        if not req.auto_apply:
            return step(live, READY)
        if not _graph_created(live):
            return await self._create_graph(req)
        name = str((live.get("status") or {}).get("dgdName") or "")
        graph = await self._graph(req, name)
        if graph is None:
            return graph_deleted(live, name)
        s = step(live, deploymentInfo=_deployment_info(graph) or None)
        if _graph_state(graph) in GRAPH_READY_STATES:
            set_phase(s, live, DEPLOYED)
            condition(s, live, DEPLOYMENT_READY, True, "DeploymentReady",
                      f"DynamoGraphDeployment {name} is ready")
            s.normal("DeploymentReady", f"DynamoGraphDeployment {name} is ready")
        return s

    async def _deployed(self, req: _Request) -> Step | None:
        live = req.live
        name = str((live.get("status") or {}).get("dgdName") or "")
        graph = await self._graph(req, name)
        if graph is None:
            return graph_deleted(live, name)
        state = _graph_state(graph)
        s = step(live, deploymentInfo=_deployment_info(graph) or None)
        if state not in GRAPH_READY_STATES:
            set_phase(s, live, DEPLOYING)
            condition(s, live, DEPLOYMENT_READY, False, "DeploymentDegraded",
                      f"Deployment degraded to {state or 'unknown'}")
            s.warning("DeploymentDegraded", f"DynamoGraphDeployment {name} degraded from "
                      f"Ready to {state or 'unknown'}")
        return s

    async def _graph(self, req: _Request, name: str) -> Json | None:
        """The graph as stored (the hub), from the cache or the API server."""
        namespace = target_namespace(req.dgdr)
        graph = await self.ctx.cache.get_or_none(GRAPH_DEPLOYMENTS, namespace, name)
        if graph is None:
            # The cache may be behind our own create: only the API server can say "deleted".
            try:
                graph = await self.ctx.client.get(GRAPH_DEPLOYMENTS, namespace, name)
            except NotFound:
                return None
        return graph

    async def _create_graph(self, req: _Request) -> Step:
        live = req.live
        selected = ((live.get("status") or {}).get("profilingResults") or {}).get(
            "selectedConfig") or {}
        graph = copy.deepcopy(selected)
        meta = graph.get("metadata") or {}
        name = str(meta.get("name") or "")
        try:
            await self.ctx.client.create(GRAPH_DEPLOYMENTS, graph)
            created = True
        except AlreadyExists:
            created = False
        except ApiError as error:
            await self.writer.recorder.warning(
                live, "DeploymentCreationFailed",
                f"Failed to create DynamoGraphDeployment {name}: {error}")
            if error.code in _REFUSED:
                raise TerminalError(str(error), reason="DeploymentCreationFailed") from None
            raise
        s = step(live, dgdName=name)
        condition(s, live, DEPLOYMENT_READY, False, "DeploymentCreated",
                  f"DGD {name} created, waiting for Ready")
        if created:
            s.normal("DeploymentCreated", f"DynamoGraphDeployment {name} created successfully")
        return s


def _legacy(live: Json) -> RequestInputs | None:
    """What only v1alpha1 says of a request that profiles by its profilingConfig (None for
    one profiled from its intent, and for one whose v1alpha1 form does not load, which its
    check then reports)."""
    try:
        inputs = request_inputs(live)
    except ConversionError:
        return None
    config = inputs.profiling_config
    return inputs if config is not None and profiles_by_config(config) else None


def _rejected_change(req: _Request, phase: str) -> bool:
    """The spec changed once profiling had started (switching autoApply on in Ready, before
    any graph was made, is allowed)."""
    status = req.live.get("status") or {}
    generation = int(req.live["metadata"].get("generation") or 0)
    observed = int(status.get("observedGeneration") or 0)
    if phase not in FROZEN or not observed or observed == generation:
        return False
    return not (phase == READY and req.auto_apply and not _graph_created(req.live))


def _graph_created(live: Json) -> bool:
    """The graph has been created (or found): the DeploymentReady condition is set."""
    return has_condition(live, DEPLOYMENT_READY)


def _graph_state(graph: Json) -> str:
    return str((graph.get("status") or {}).get("state") or "")


def _deployment_info(graph: Json) -> Json:
    """Replicas summed over the graph's components (`status.components`: graphs are read as
    stored, the hub)."""
    components = (graph.get("status") or {}).get("components") or {}
    if not isinstance(components, dict) or not components:
        return {}
    replicas = sum(int((c or {}).get("replicas") or 0) for c in components.values())
    available = sum(int((c or {}).get("availableReplicas") or 0) for c in components.values())
    return {"replicas": replicas, "availableReplicas": available}


# --- registration -----------------------------------------------------------------------------

def _by_request_labels(obj: Json) -> list[Request]:
    """A graph made by a request carries the request's name and namespace as labels."""
    labels = (obj.get("metadata") or {}).get("labels") or {}
    name, namespace = labels.get(pj.LABEL_DGDR_NAME), labels.get(pj.LABEL_DGDR_NAMESPACE)
    return [Request(namespace, name)] if name and namespace else []


def register(manager: Manager, ctx: OperatorContext) -> None:
    """Add the DynamoGraphDeploymentRequest controller to a manager."""
    hub.require_views(manager.cache, DEPLOYMENT_REQUESTS, GRAPH_DEPLOYMENTS)
    manager.add_controller(DEPLOYMENT_REQUESTS.kind,
                           GraphDeploymentRequestReconciler(ctx).reconcile,
                           for_=DEPLOYMENT_REQUESTS, owns=[JOBS],
                           watches=[(GRAPH_DEPLOYMENTS, _by_request_labels)],
                           max_concurrent_reconciles=ctx.max_concurrent_reconciles(NAME))

