"""The DynamoGraphDeploymentRequest controller: profile a model against its SLA, generate a
DynamoGraphDeployment from the results, create it with autoApply and follow it to Ready.

One reconcile takes at most one step of the state machine (spec/controllers.md §8.3); the
status it writes comes back as an event and drives the next:

    ""  --valid-->  Pending  --Job created-->  Profiling  --Job complete, spec read back-->
    Deploying (autoApply) or Ready;  Deploying  <--DGD successful / degraded-->  Ready;
    a deleted DGD  -->  DeploymentDeleted;  any failure  -->  Failed.

DeploymentDeleted and Failed are terminal: nothing is written for them any more. Once profiling
has started the spec is frozen: a changed generation only earns a SpecChangeRejected warning.
The profiling Job and its identity come from `backends.profiling_job` through the child writer;
the generated graph has no owner (it survives its request) and is found again through the
`dgdr.nvidia.com/*` labels it carries.
"""

from __future__ import annotations

import contextlib
import copy
from typing import Any

import structlog
import yaml

from api.errors import InvalidObject
from api.load import load_valid
from api.v1alpha1 import DGDR_FROZEN_STATES, DynamoGraphDeploymentRequest
from api.validation import validate_graph_deployment_request
from backends import profiling_job as pj
from backends.errors import GenerationError
from backends.generated_graph import additional_config_maps, deployment_object
from backends.gpu_discovery import hardware_from_nodes
from controller.errors import AlreadyExists, ApiError, NotFound, TerminalError
from controller.manager import Manager
from controller.reconcile import Request, Result
from reconcilers.machinery import hub
from reconcilers.machinery.children import ChildWriter
from reconcilers.machinery.context import NOT_OWNED_RETRY, OperatorContext
from reconcilers.machinery.finalizer import ensure_finalizer, is_deleting, release_finalizer
from reconcilers.machinery.resources import (
    CONFIG_MAPS,
    DEPLOYMENT_REQUESTS,
    GRAPH_DEPLOYMENTS,
    JOBS,
    NODES,
    PODS,
)
from reconcilers.machinery.status_writer import raise_if_written_over, write_status
from reconcilers.request import failure
from reconcilers.request.output import OutputError, parse_output, profiler_message
from reconcilers.request.status import (
    DEPLOYING,
    DEPLOYMENT_READY,
    FAILED,
    GRAPH_READY_STATES,
    INITIAL,
    PENDING,
    PROFILING,
    PROFILING_CONDITION,
    READY,
    SPEC_GENERATED,
    TERMINAL,
    VALIDATION,
    Step,
    condition,
    graph_deleted,
    invalid,
    job_creation_failed,
    profiling_failed,
    step,
)

Json = dict[str, Any]
log = structlog.get_logger("reconcilers.request")

NAME = "dynamographdeploymentrequest"
ADDITIONAL_RESOURCES_ANNOTATION = "dgdr.nvidia.com/additional-resources"
#: API answers that retrying the same create cannot change.
_REFUSED = (400, 403, 422)


class GraphDeploymentRequestReconciler:
    """Reconciles one DynamoGraphDeploymentRequest per call."""

    def __init__(self, ctx: OperatorContext) -> None:
        self.ctx = ctx
        self.writer: ChildWriter = ctx.children(NAME)

    async def reconcile(self, request: Request) -> Result | None:
        live = await self.ctx.cache.get_or_none(DEPLOYMENT_REQUESTS, request.namespace,
                                                request.name)
        if live is None:
            return None
        # Between a status write and its payload's, the view lacks what only the payload
        # holds (the deployment, the backend): wait for the second write's event.
        raise_if_written_over(live)
        if is_deleting(live):
            # The Job goes with the request (owner reference); the graph stays, by design.
            await release_finalizer(self.ctx.client, DEPLOYMENT_REQUESTS, live)
            return None
        # A copy: the handlers refresh it after their own writes, and the cache's is shared.
        live = copy.deepcopy(await ensure_finalizer(self.ctx.client, DEPLOYMENT_REQUESTS, live))
        status = live.get("status") or {}
        state = str(status.get("state") or INITIAL)
        generation = int(live["metadata"].get("generation") or 0)
        observed = int(status.get("observedGeneration") or 0)
        if state in DGDR_FROZEN_STATES and observed and observed != generation:
            await self.writer.recorder.warning(
                live, "SpecChangeRejected",
                f"Cannot modify spec in state '{state}'. DynamoGraphDeploymentRequest is "
                "immutable once profiling starts. Create a new resource with a different name "
                "instead.")
            return None
        if state in TERMINAL:
            return None  # delete and recreate the request to try again
        try:
            dgdr = load_valid(DynamoGraphDeploymentRequest, live)
        except InvalidObject as error:
            await self._apply(live, invalid(live, str(error)))
            return None
        handler = {INITIAL: self._initial, PENDING: self._pending, PROFILING: self._profiling,
                   DEPLOYING: self._deploying, READY: self._ready}.get(state)
        if handler is None:
            await self._apply(live, step(live, FAILED).warning("InvalidState",
                                                                f"Invalid state {state!r}"))
            return None
        await self._apply(live, await handler(live, dgdr))
        return None

    async def _apply(self, live: Json, s: Step | None) -> None:
        """Write the step's status if it changed, then record its events."""
        if s is None:
            return
        before = (live.get("status") or {}).get("state")
        if s.status != (live.get("status") or {}):
            # Carries the resourceVersion read: a request changed meanwhile answers 409 and
            # the reconcile reruns on fresh data.
            written = await write_status(self.ctx.client, DEPLOYMENT_REQUESTS, live, s.status)
            live = written or live
        recorder = self.writer.recorder
        for warning, reason, message in s.events:
            await (recorder.warning if warning else recorder.normal)(live, reason, message)
        if before != s.status.get("state"):
            log.info("state changed", state=s.status.get("state"), previous=before or "")

    # --- "" and Pending ------------------------------------------------------------------

    async def _problems(self, dgdr: DynamoGraphDeploymentRequest) -> list[str]:
        """What the user must fix before profiling can start (§8.4)."""
        restricted = self.ctx.namespace is not None
        problems = [str(e) for e in validate_graph_deployment_request(
            dgdr, namespace_restricted=restricted)]
        profiling = dgdr.spec.profiling_config
        hardware = _given_hardware(dgdr)
        low, high = (hardware.get("min_num_gpus_per_engine"),
                     hardware.get("max_num_gpus_per_engine"))
        if isinstance(low, int) and isinstance(high, int) and low > high:
            problems.append(f"spec.profilingConfig.config.hardware: min_num_gpus_per_engine "
                            f"({low}) is greater than max_num_gpus_per_engine ({high})")
        ref = profiling.config_map_ref if profiling is not None else None
        if ref is not None:
            namespace = str(dgdr.metadata["namespace"])
            try:
                # One read when the request starts: ConfigMaps are not cached by the operator.
                cm = await self.ctx.client.get(CONFIG_MAPS, namespace, ref.name)
            except NotFound:
                problems.append(f"ConfigMap {ref.name} not found in namespace {namespace}")
            else:
                key = ref.key or pj.DEFAULT_CONFIG_KEY
                if key not in (cm.get("data") or {}) and key not in (cm.get("binaryData") or {}):
                    problems.append(f"key {key} not found in ConfigMap {ref.name}")
        return problems

    async def _initial(self, live: Json, dgdr: DynamoGraphDeploymentRequest) -> Step:
        problems = await self._problems(dgdr)
        if problems:
            return invalid(live, "; ".join(problems))
        _log_overwrites(dgdr)
        s = step(live, PENDING, observedGeneration=live["metadata"].get("generation"),
                 backend=dgdr.spec.backend)
        condition(s, live, VALIDATION, True, "ValidationPassed", "Spec is valid")
        return s.normal("Initialized", "DGDR initialized successfully")

    async def _pending(self, live: Json, dgdr: DynamoGraphDeploymentRequest) -> Step:
        # A spec changed while Pending is taken as it is now, checked again.
        problems = await self._problems(dgdr)
        if problems:
            return invalid(live, "; ".join(problems))
        namespace = str(dgdr.metadata["namespace"])
        s = step(live, observedGeneration=live["metadata"].get("generation"),
                 backend=dgdr.spec.backend)
        try:
            config = pj.profile_config(dgdr, namespace, await self._hardware(dgdr))
            restricted = self.ctx.namespace is not None
            role = "" if restricted else self.ctx.dgdr_profiling_cluster_role_name
            desired = pj.profiling_children(dgdr, config,
                                            yaml.safe_dump(config, sort_keys=False),
                                            cluster_role=role)
        except (GenerationError, _NoGpus) as error:
            return job_creation_failed(live, s, str(error))
        name = pj.job_name(str(dgdr.metadata["name"]))
        if await self.ctx.cache.get_or_none(JOBS, namespace, name) is None:
            await self._delete_stale_output(dgdr)
        try:
            synced = await self.writer.sync(live, desired)
        except TerminalError as error:  # a child the API server refuses (400/422)
            return job_creation_failed(live, s, error.message)
        except ApiError as error:
            if error.code not in _REFUSED:
                raise
            return job_creation_failed(live, s, str(error))
        if synced.not_owned:
            # Someone else's object of that name: wait for it to go.
            raise TerminalError(synced.not_owned_message("request"), reason="JobCreationFailed",
                                retry_after=NOT_OWNED_RETRY)
        app = pj.profiler_app(config)
        s.status["state"] = PROFILING
        condition(s, live, PROFILING_CONDITION, False, "ProfilingRunning",
                  "Profiling is in progress")
        return s.normal("ProfilingJobCreated", "AIC profiling job created"
                        if app == "aic-profiler" else "Profiling job created")

    async def _hardware(self, dgdr: DynamoGraphDeploymentRequest) -> Json | None:
        """GPU facts from the nodes when the request asks for discovery (cluster-wide only:
        validation refuses it for a namespace-restricted operator)."""
        if not dgdr.spec.enable_gpu_discovery:
            return None
        nodes = (await self.ctx.client.list(NODES)).get("items") or []
        hardware = hardware_from_nodes(nodes)
        given = _given_hardware(dgdr)
        engine_sizes = all(given.get(k) for k in ("min_num_gpus_per_engine",
                                                  "max_num_gpus_per_engine"))
        if hardware is None and not (given.get("num_gpus_per_node") or engine_sizes):
            raise _NoGpus("GPU discovery found no node with nvidia.com/gpu labels or capacity; "
                          "set spec.profilingConfig.config.hardware (num_gpus_per_node, or "
                          "both min_num_gpus_per_engine and max_num_gpus_per_engine) or turn "
                          "spec.enableGpuDiscovery off")
        return hardware

    async def _delete_stale_output(self, dgdr: DynamoGraphDeploymentRequest) -> None:
        """Results of an earlier run of the same name must not pass for this run's."""
        namespace = str(dgdr.metadata["namespace"])
        name = pj.output_config_map_name(str(dgdr.metadata["name"]))
        with contextlib.suppress(NotFound):
            await self.ctx.client.delete(CONFIG_MAPS, namespace, name)
            log.info("stale profiling output deleted", configmap=name)

    # --- Profiling -----------------------------------------------------------------------

    async def _profiling(self, live: Json, dgdr: DynamoGraphDeploymentRequest) -> Step | None:
        namespace = str(dgdr.metadata["namespace"])
        name = pj.job_name(str(dgdr.metadata["name"]))
        job = await self.ctx.cache.get_or_none(JOBS, namespace, name)
        if job is None:
            # Just created, the cache may not hold it yet: ask the API server before failing.
            try:
                job = await self.ctx.client.get(JOBS, namespace, name)
            except NotFound:
                return profiling_failed(live, f"profiling job failed: Job {name} not found")
        if failure.condition_true(job, "Failed"):
            return profiling_failed(live, await self._failure_message(dgdr, job))
        if not failure.condition_true(job, "Complete"):
            return None  # Job events drive the rest
        s = step(live)
        condition(s, live, PROFILING_CONDITION, True, "ProfilingCompleted",
                  "Profiling job completed successfully")
        try:
            return await self._generated(live, dgdr, s)
        except OutputError as error:
            s.status["state"] = FAILED
            condition(s, live, SPEC_GENERATED, False, "GenerationFailed", str(error))
            return s.warning("GenerationFailed", f"Failed to generate spec: {error}")

    async def _failure_message(self, dgdr: DynamoGraphDeploymentRequest, job: Json) -> str:
        namespace = str(dgdr.metadata["namespace"])
        name = str(dgdr.metadata["name"])
        # One read on the way to Failed: the pods' exit codes, and the profiler's verdict.
        pods = (await self.ctx.client.list(PODS, namespace,
                                           label_selector=f"dgdr={name}")).get("items") or []
        try:
            output = await self.ctx.client.get(CONFIG_MAPS, namespace,
                                               pj.output_config_map_name(name))
        except NotFound:
            output = None
        return failure.job_failure_message(job, pods, profiler_message(output, pj.STATUS_KEY))

    async def _generated(self, live: Json, dgdr: DynamoGraphDeploymentRequest, s: Step
                         ) -> Step:
        namespace = str(dgdr.metadata["namespace"])
        cm_name = pj.output_config_map_name(str(dgdr.metadata["name"]))
        try:
            output_cm = await self.ctx.client.get(CONFIG_MAPS, namespace, cm_name)
        except NotFound:
            raise OutputError(f"output ConfigMap {cm_name} not found - profiling may not have "
                              "completed yet") from None
        key = pj.MOCKER_OUTPUT_KEY if dgdr.spec.use_mocker else pj.OUTPUT_KEY
        output = parse_output(output_cm, key)
        extra = output.additional_yaml()
        if extra and (live["metadata"].get("annotations") or {}).get(
                ADDITIONAL_RESOURCES_ANNOTATION) != extra:
            patch = {"metadata": {"resourceVersion": live["metadata"]["resourceVersion"],
                                  "annotations": {ADDITIONAL_RESOURCES_ANNOTATION: extra}}}
            live.update(hub.from_wire(DEPLOYMENT_REQUESTS, await self.ctx.client.patch(
                DEPLOYMENT_REQUESTS, namespace, str(dgdr.metadata["name"]), patch)))
        await self._create_config_maps(live, dgdr, output.additional)
        generated = deployment_object(output.deployment, dgdr)
        auto = bool(dgdr.spec.auto_apply)
        s.status.update(state=DEPLOYING if auto else READY,
                        generatedDeployment=generated,
                        profilingResults=f"configmap/{cm_name}")
        message = ("DynamoGraphDeployment spec generated successfully" if auto
                   else "Generated spec is available in status.generatedDeployment")
        condition(s, live, SPEC_GENERATED, True, "SpecGenerated", message)
        return s.normal("SpecGenerated", message)

    async def _create_config_maps(self, live: Json, dgdr: DynamoGraphDeploymentRequest,
                                  documents: list[Json]) -> None:
        """The profiler's extra ConfigMaps, for the graph: created once, no owner (§8.7)."""
        try:
            for cm in additional_config_maps(documents, dgdr):
                with contextlib.suppress(AlreadyExists):
                    await self.ctx.client.create(CONFIG_MAPS, cm)
        except ApiError as error:
            await self.writer.recorder.warning(
                live, "ConfigMapCreationFailed",
                f"Failed to create ConfigMaps from profiling output: {error}")

    # --- Deploying and Ready -------------------------------------------------------------

    async def _deploying(self, live: Json, dgdr: DynamoGraphDeploymentRequest) -> Step | None:
        if not dgdr.spec.auto_apply:
            return step(live, READY)
        deployment = (live.get("status") or {}).get("deployment") or {}
        if not deployment.get("created"):
            return await self._create_graph(live, dgdr)
        graph = await self._graph(deployment)
        if graph is None:
            return graph_deleted(live, deployment)
        state = str((graph.get("status") or {}).get("state") or "")
        s = step(live, deployment={**deployment, "state": state or deployment.get("state")})
        if state in GRAPH_READY_STATES:
            s.status["state"] = READY
            condition(s, live, DEPLOYMENT_READY, True, "DeploymentReady",
                      f"DynamoGraphDeployment {deployment['name']} is ready")
            s.normal("DeploymentReady", f"DynamoGraphDeployment {deployment['name']} is ready")
        return s

    async def _ready(self, live: Json, dgdr: DynamoGraphDeploymentRequest) -> Step | None:
        deployment = (live.get("status") or {}).get("deployment") or {}
        if not dgdr.spec.auto_apply or not deployment.get("created"):
            return None
        graph = await self._graph(deployment)
        if graph is None:
            return graph_deleted(live, deployment)
        state = str((graph.get("status") or {}).get("state") or "")
        s = step(live, deployment={**deployment, "state": state})
        if state not in GRAPH_READY_STATES:
            s.status["state"] = DEPLOYING
            condition(s, live, DEPLOYMENT_READY, False, "DeploymentDegraded",
                      f"Deployment degraded to {state or 'unknown'}")
            s.warning("DeploymentDegraded", f"DynamoGraphDeployment {deployment['name']} "
                      f"degraded from Ready to {state or 'unknown'}")
        return s

    async def _graph(self, deployment: Json) -> Json | None:
        namespace, name = str(deployment.get("namespace")), str(deployment.get("name"))
        graph = await self.ctx.cache.get_or_none(GRAPH_DEPLOYMENTS, namespace, name)
        if graph is None:
            # The cache may be behind our own create: only the API server can say "deleted".
            try:
                graph = hub.view(await self.ctx.client.get(GRAPH_DEPLOYMENTS, namespace, name))
            except NotFound:
                return None
        return graph

    async def _create_graph(self, live: Json, dgdr: DynamoGraphDeploymentRequest) -> Step:
        generated = (live.get("status") or {}).get("generatedDeployment") or {}
        graph = deployment_object(generated, dgdr)
        meta = graph["metadata"]
        try:
            await self.ctx.client.create(GRAPH_DEPLOYMENTS, hub.to_wire(GRAPH_DEPLOYMENTS, graph))
            created = True
        except AlreadyExists:
            created = False
        except ApiError as error:
            await self.writer.recorder.warning(
                live, "DeploymentCreationFailed",
                f"Failed to create DynamoGraphDeployment {meta['name']}: {error}")
            if error.code in _REFUSED:
                raise TerminalError(str(error), reason="DeploymentCreationFailed") from None
            raise
        s = step(live, deployment={"name": meta["name"], "namespace": meta["namespace"],
                                   "state": "Pending", "created": True})
        condition(s, live, DEPLOYMENT_READY, False, "DeploymentCreated",
                  f"DGD {meta['name']} created, waiting for Ready")
        if created:
            s.normal("DeploymentCreated",
                     f"DynamoGraphDeployment {meta['name']} created successfully")
        return s


def _given_hardware(dgdr: DynamoGraphDeploymentRequest) -> Json:
    """The user's `hardware` section of the profile config ({} when absent)."""
    profiling = dgdr.spec.profiling_config
    config = (profiling.config or {}) if profiling is not None else {}
    hardware = config.get("hardware")
    return hardware if isinstance(hardware, dict) else {}


def _log_overwrites(dgdr: DynamoGraphDeploymentRequest) -> None:
    """Values of the profile config that the request's own fields replace (§6.3 warnings)."""
    profiling = dgdr.spec.profiling_config
    config = (profiling.config or {}) if profiling is not None else {}
    engine, deployment = config.get("engine"), config.get("deployment")
    if isinstance(engine, dict) and engine.get("backend") not in (None, dgdr.spec.backend):
        log.info("profilingConfig.config.engine.backend will be overwritten by spec.backend",
                 given=engine.get("backend"), backend=dgdr.spec.backend)
    if isinstance(deployment, dict) and deployment.get("model") not in (None, dgdr.spec.model):
        log.info("profilingConfig.config.deployment.model will be overwritten by spec.model",
                 given=deployment.get("model"), model=dgdr.spec.model)


class _NoGpus(Exception):
    """GPU discovery found nothing to go on."""


# --- registration -----------------------------------------------------------------------------

def _by_request_labels(obj: Json) -> list[Request]:
    """A graph made by a request carries the request's name and namespace as labels."""
    labels = (obj.get("metadata") or {}).get("labels") or {}
    name, namespace = labels.get(pj.LABEL_DGDR_NAME), labels.get(pj.LABEL_DGDR_NAMESPACE)
    return [Request(namespace, name)] if name and namespace else []


def register(manager: Manager, ctx: OperatorContext) -> None:
    """Add the DynamoGraphDeploymentRequest controller to a manager."""
    hub.require_views(manager.cache, DEPLOYMENT_REQUESTS, GRAPH_DEPLOYMENTS)
    manager.add_controller(NAME, GraphDeploymentRequestReconciler(ctx).reconcile,
                           for_=DEPLOYMENT_REQUESTS, owns=[JOBS],
                           watches=[(GRAPH_DEPLOYMENTS, _by_request_labels)],
                           max_concurrent_reconciles=ctx.max_concurrent_reconciles(NAME))
