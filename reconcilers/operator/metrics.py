"""The operator's own metrics, under `dynamo_operator_`, beside controller-runtime's names.

The contract is the original's page (reference/observability/operator-metrics): reconciles
under controller-runtime's names (`controller/metrics.py`; the `controller` label is the
controller's name, which is its kind, `DynamoGraphDeployment`, as the original's
`Named(consts.ResourceType...)`), and these, registered on the manager's registry so they are
served with the runtime's on /metrics (and not at all with `--metrics-bind-address=0`):

* `dynamo_operator_webhook_duration_seconds` by resource_type and operation,
  `_webhook_requests_total` by resource_type, operation and result (allowed, denied) and
  `_webhook_denials_total` by resource_type, operation and reason: `instrument_webhook` wraps
  an admission handler. The reason is the handler's (`AdmissionResponse.cause`:
  immutable_field_changed, forbidden, invalid_config, bad_request, see
  `reconcilers.machinery.denials`), `internal` when the handler raised (a refusal with 500).
  The original's code files a denial under its error's category (`validation` for every
  field error); its page names the reasons this way, so the page is followed.
* `dynamo_operator_resources_total` by resource_type, namespace and status: counted from the
  shared cache at each scrape (no state of its own, so a deleted object's series goes), with
  the states the original's `GetState` derives: a graph's `status.state` (pending,
  successful, failed), a request's v1beta1 `status.phase` (Pending, Profiling, Ready,
  Deploying, Deployed, Failed), and ready or not_ready for the others (a DCD: its Available
  condition True; a DynamoModel: every one of at least one endpoint ready; an adapter: a
  selector and replicas). An object no controller has written a status to yet is `unknown`
  (the original counts an empty state as the empty string, and the others as not_ready).
  Namespaces another, namespace-restricted, operator claims are left out, as the original's.
* `dynamo_operator_graph_gpus` by namespace, graph and state (requested, running), ours: read
  from each graph's `status.gpus` at each scrape (`reconcilers/operator/gpu_metrics.py`).

The page no longer lists `dynamo_operator_reconcile_total`, `_reconcile_duration_seconds`
(resource_type, namespace, result: success, error, requeue) and `_reconcile_errors_total`
(resource_type, namespace, error_type: not_found, already_exists, conflict, validation,
bad_request, unauthorized, forbidden, timeout, server_timeout, unavailable, rate_limited,
internal), but the original's code still records them (`observability.ObservedReconciler`
wraps its controllers; its Grafana dashboard reads them), so they stay:
`instrument_controllers` wraps every controller's reconciler. They are the only reconcile
series by target namespace and error category.
"""

from __future__ import annotations

import time
from collections import Counter as Tally
from collections.abc import Callable, Iterator

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from controller.cache import Cache
from controller.errors import ApiError, Conflict, TerminalError, is_transient
from controller.manager import Manager
from controller.reconcile import Reconciler, Request, Result
from controller.resource import Resource
from controller.webhook import AdmissionRequest, AdmissionResponse, Handler
from reconcilers.machinery.denials import BAD_REQUEST, FORBIDDEN, INTERNAL, INVALID_CONFIG
from reconcilers.machinery.resources import (
    COMPONENT_DEPLOYMENTS,
    DEPLOYMENT_REQUESTS,
    GRAPH_DEPLOYMENTS,
    MODELS,
    SCALING_ADAPTERS,
)
from reconcilers.operator.gpu_metrics import GraphGpuCollector

__all__ = ["OperatorMetrics", "denial_reason", "error_type", "instrument_controllers",
           "instrument_webhook", "resource_state"]

PREFIX = "dynamo_operator"
#: Our kinds, by the name of their controller (the kind, as the original's `Named`).
KINDS: dict[str, Resource] = {r.kind: r for r in (
    GRAPH_DEPLOYMENTS, COMPONENT_DEPLOYMENTS, SCALING_ADAPTERS, DEPLOYMENT_REQUESTS, MODELS)}

# The original's buckets (seconds).
RECONCILE_BUCKETS = (.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60)
WEBHOOK_BUCKETS = (.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5)

READY, NOT_READY, UNKNOWN = "ready", "not_ready", "unknown"

_BY_CODE = {400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found",
            408: "timeout", 409: "conflict", 422: "validation", 429: "rate_limited",
            500: "internal", 503: "unavailable", 504: "server_timeout"}
#: A denial's reason when its handler gave none, by the refusal's code.
_DENIAL_BY_CODE = {400: BAD_REQUEST, 403: FORBIDDEN, 422: INVALID_CONFIG}


def error_type(err: BaseException) -> str:
    """The error_type label of a failed reconcile."""
    if isinstance(err, ApiError):
        if err.reason == "AlreadyExists":
            return "already_exists"
        return _BY_CODE.get(err.code, "internal" if err.code >= 500 else "bad_request")
    if isinstance(err, TerminalError):
        return "validation"
    if isinstance(err, TimeoutError):
        return "timeout"
    if is_transient(err):
        return "unavailable"
    return "internal"


def denial_reason(response: AdmissionResponse) -> str:
    """The reason label of a refusal: the handler's, else what its code says."""
    return response.cause or _DENIAL_BY_CODE.get(response.code, INTERNAL)


class OperatorMetrics:
    """The `dynamo_operator_*` series, on one registry."""

    def __init__(self, registry: CollectorRegistry) -> None:
        labels = ["resource_type", "namespace", "result"]
        self.reconcile_total = Counter(f"{PREFIX}_reconcile_total",
                                       "Total number of reconciliations by resource type",
                                       labels, registry=registry)
        self.reconcile_duration = Histogram(f"{PREFIX}_reconcile_duration_seconds",
                                            "Duration of reconciliation loops in seconds",
                                            labels, buckets=RECONCILE_BUCKETS,
                                            registry=registry)
        self.reconcile_errors = Counter(f"{PREFIX}_reconcile_errors_total",
                                        "Total number of reconciliation errors by resource"
                                        " type and error type",
                                        ["resource_type", "namespace", "error_type"],
                                        registry=registry)
        hook = ["resource_type", "operation"]
        self.webhook_duration = Histogram(f"{PREFIX}_webhook_duration_seconds",
                                          "Duration of webhook validation in seconds", hook,
                                          buckets=WEBHOOK_BUCKETS, registry=registry)
        self.webhook_requests = Counter(f"{PREFIX}_webhook_requests_total",
                                        "Total number of webhook admission requests",
                                        [*hook, "result"], registry=registry)
        self.webhook_denials = Counter(f"{PREFIX}_webhook_denials_total",
                                       "Total number of webhook admission denials",
                                       [*hook, "reason"], registry=registry)
        self.registry = registry

    def watch_resources(self, cache: Cache,
                        skip_namespace: Callable[[str], bool] = lambda _: False) -> None:
        """Serve `dynamo_operator_resources_total` from the cache's informers of our kinds,
        leaving out the namespaces `skip_namespace` names."""
        self.registry.register(_ResourceCollector(cache, skip_namespace))
        self.registry.register(GraphGpuCollector(cache, skip_namespace))

    def instrument(self, resource_type: str, reconciler: Reconciler) -> Reconciler:
        """`reconciler`, measured; what it returns or raises goes through unchanged."""
        async def measured(request: Request) -> Result | None:
            started = time.monotonic()
            result_label = "success"
            try:
                result = await reconciler(request)
            except BaseException as err:
                if isinstance(err, Exception):
                    result_label = "requeue" if isinstance(err, Conflict) else "error"
                    self.reconcile_errors.labels(resource_type, request.namespace,
                                                 error_type(err)).inc()
                raise
            else:
                if result is not None and (result.requeue or result.requeue_after):
                    result_label = "requeue"
                return result
            finally:
                self.reconcile_total.labels(resource_type, request.namespace,
                                            result_label).inc()
                self.reconcile_duration.labels(resource_type, request.namespace,
                                               result_label).observe(time.monotonic() - started)

        return measured


def instrument_controllers(manager: Manager, metrics: OperatorMetrics,
                           skip_namespace: Callable[[str], bool] = lambda _: False) -> None:
    """Wrap the reconciler of every controller of our kinds (after registration, before run),
    and count our objects outside the namespaces `skip_namespace` names."""
    for controller in manager.controllers:
        resource = KINDS.get(controller.name)
        if resource is not None:
            controller.reconciler = metrics.instrument(resource.kind, controller.reconciler)
    metrics.watch_resources(manager.cache, skip_namespace)


def instrument_webhook(metrics: OperatorMetrics, resource_type: str,
                       handler: Handler) -> Handler:
    """An admission handler, measured; a handler's exception counts as denied (internal)."""
    async def measured(request: AdmissionRequest) -> AdmissionResponse:
        started = time.monotonic()
        response: AdmissionResponse | None = None
        try:
            response = await handler(request)
            return response
        finally:
            labels = (resource_type, request.operation)
            metrics.webhook_duration.labels(*labels).observe(time.monotonic() - started)
            allowed = response is not None and response.allowed
            metrics.webhook_requests.labels(*labels, "allowed" if allowed else "denied").inc()
            if not allowed:
                reason = INTERNAL if response is None else denial_reason(response)
                metrics.webhook_denials.labels(*labels, reason).inc()

    return measured


def _status(obj: dict[str, object]) -> dict[str, object] | None:
    status = obj.get("status")
    return status if isinstance(status, dict) and status else None


def _condition_true(status: dict[str, object], kind: str) -> bool:
    conditions = status.get("conditions")
    return isinstance(conditions, list) and any(
        isinstance(c, dict) and c.get("type") == kind and c.get("status") == "True"
        for c in conditions)


def _count(status: dict[str, object], key: str) -> int:
    value = status.get(key)
    return value if isinstance(value, int) else 0


def _graph_state(status: dict[str, object]) -> str:
    state = status.get("state")
    return state if isinstance(state, str) and state else UNKNOWN


def _request_phase(status: dict[str, object]) -> str:
    phase = status.get("phase")
    return phase if isinstance(phase, str) and phase else UNKNOWN


def _component_state(status: dict[str, object]) -> str:
    return READY if _condition_true(status, "Available") else NOT_READY


def _model_state(status: dict[str, object]) -> str:
    total, ready = _count(status, "totalEndpoints"), _count(status, "readyEndpoints")
    return READY if total > 0 and ready >= total else NOT_READY


def _adapter_state(status: dict[str, object]) -> str:
    return READY if status.get("selector") and _count(status, "replicas") != 0 else NOT_READY


_STATES: dict[str, Callable[[dict[str, object]], str]] = {
    GRAPH_DEPLOYMENTS.kind: _graph_state,
    DEPLOYMENT_REQUESTS.kind: _request_phase,
    COMPONENT_DEPLOYMENTS.kind: _component_state,
    MODELS.kind: _model_state,
    SCALING_ADAPTERS.kind: _adapter_state,
}


def resource_state(kind: str, obj: dict[str, object]) -> str:
    """The status label of one object of ours, as stored (a graph's, DCD's and request's
    v1beta1 form), as the original derives it."""
    status = _status(obj)
    return UNKNOWN if status is None else _STATES[kind](status)


class _ResourceCollector(Collector):
    """Counts our objects in the cache by kind, namespace and state, at each scrape."""

    def __init__(self, cache: Cache, skip_namespace: Callable[[str], bool]) -> None:
        self.cache = cache
        self.skip_namespace = skip_namespace

    def collect(self) -> Iterator[GaugeMetricFamily]:
        family = GaugeMetricFamily(f"{PREFIX}_resources_total",
                                   "Total number of resources by type and status",
                                   labels=["resource_type", "namespace", "status"])
        for kind, resource in KINDS.items():
            tally: Tally[tuple[str, str]] = Tally()
            for informer in self.cache.informers:
                if informer.resource != resource or informer.field_selector:
                    continue
                for obj in informer.store.list():
                    meta = obj.get("metadata") or {}
                    namespace = str(meta.get("namespace", ""))
                    if not self.skip_namespace(namespace):
                        tally[(namespace, resource_state(kind, obj))] += 1
                break
            for (namespace, state), count in sorted(tally.items()):
                family.add_metric([kind, namespace, state], count)
        yield family
