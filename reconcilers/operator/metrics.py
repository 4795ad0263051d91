"""The operator's own metrics, under `dynamo_operator_`, beside controller-runtime's names.

As later versions of the original operator have them (spec/controllers.md section 7.6):

* `dynamo_operator_reconcile_total`, `_reconcile_duration_seconds` by resource_type,
  namespace and result (success, error, requeue), and `_reconcile_errors_total` by
  resource_type, namespace and error_type (not_found, already_exists, conflict, validation,
  bad_request, unauthorized, forbidden, timeout, server_timeout, unavailable, rate_limited,
  internal): every controller's reconciler is wrapped by `instrument_controllers`;
* `dynamo_operator_resources_total` by resource_type, namespace and status: counted from the
  shared cache at each scrape (no state of its own);
* `dynamo_operator_webhook_requests_total` (result allowed or denied),
  `_webhook_denials_total` and `_webhook_duration_seconds` by resource_type and operation:
  `instrument_webhook` wraps an admission handler.

All are registered on the manager's registry, so they are served with the runtime's on
/metrics (and not at all with `--metrics-bind-address=0`).
"""

from __future__ import annotations

import time
from collections import Counter as Tally
from collections.abc import Iterator

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from controller.cache import Cache
from controller.errors import ApiError, Conflict, TerminalError, is_transient
from controller.manager import Manager
from controller.reconcile import Reconciler, Request, Result
from controller.resource import Resource
from controller.webhook import AdmissionRequest, AdmissionResponse, Handler
from reconcilers.machinery.resources import (
    COMPONENT_DEPLOYMENTS,
    DEPLOYMENT_REQUESTS,
    GRAPH_DEPLOYMENTS,
    MODELS,
    SCALING_ADAPTERS,
)

__all__ = ["OperatorMetrics", "error_type", "instrument_controllers", "instrument_webhook"]

PREFIX = "dynamo_operator"
#: Our kinds, by the name of their controller (each package's NAME: the lower-case kind).
KINDS: dict[str, Resource] = {r.kind.lower(): r for r in (
    GRAPH_DEPLOYMENTS, COMPONENT_DEPLOYMENTS, SCALING_ADAPTERS, DEPLOYMENT_REQUESTS, MODELS)}

_BY_CODE = {400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found",
            408: "timeout", 409: "conflict", 422: "validation", 429: "rate_limited",
            500: "internal", 503: "unavailable", 504: "server_timeout"}


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


class OperatorMetrics:
    """The `dynamo_operator_*` series, on one registry."""

    def __init__(self, registry: CollectorRegistry) -> None:
        labels = ["resource_type", "namespace", "result"]
        self.reconcile_total = Counter(f"{PREFIX}_reconcile_total",
                                       "Reconciles, by result (success, error, requeue)",
                                       labels, registry=registry)
        self.reconcile_duration = Histogram(f"{PREFIX}_reconcile_duration_seconds",
                                            "Time a reconcile took", labels, registry=registry)
        self.reconcile_errors = Counter(f"{PREFIX}_reconcile_errors_total",
                                        "Failed reconciles, by error type",
                                        ["resource_type", "namespace", "error_type"],
                                        registry=registry)
        hook = ["resource_type", "operation"]
        self.webhook_requests = Counter(f"{PREFIX}_webhook_requests_total",
                                        "Admission requests, by result (allowed, denied)",
                                        [*hook, "result"], registry=registry)
        self.webhook_denials = Counter(f"{PREFIX}_webhook_denials_total",
                                       "Admission requests denied", hook, registry=registry)
        self.webhook_duration = Histogram(f"{PREFIX}_webhook_duration_seconds",
                                          "Time an admission request took", hook,
                                          registry=registry)
        self.registry = registry

    def watch_resources(self, cache: Cache) -> None:
        """Serve `dynamo_operator_resources_total` from the cache's informers of our kinds."""
        self.registry.register(_ResourceCollector(cache))

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


def instrument_controllers(manager: Manager, metrics: OperatorMetrics) -> None:
    """Wrap the reconciler of every controller of our kinds (after registration, before run)."""
    for controller in manager.controllers:
        resource = KINDS.get(controller.name)
        if resource is not None:
            controller.reconciler = metrics.instrument(resource.kind, controller.reconciler)
    metrics.watch_resources(manager.cache)


def instrument_webhook(metrics: OperatorMetrics, resource_type: str,
                       handler: Handler) -> Handler:
    """An admission handler, measured; a handler's exception counts as denied."""
    async def measured(request: AdmissionRequest) -> AdmissionResponse:
        started = time.monotonic()
        allowed = False
        try:
            response = await handler(request)
            allowed = response.allowed
            return response
        finally:
            labels = (resource_type, request.operation)
            metrics.webhook_duration.labels(*labels).observe(time.monotonic() - started)
            metrics.webhook_requests.labels(*labels, "allowed" if allowed else "denied").inc()
            if not allowed:
                metrics.webhook_denials.labels(*labels).inc()

    return measured


def _state(obj: dict[str, object]) -> str:
    """What an object of ours reports: status.state, else its Ready/Available condition."""
    status = obj.get("status")
    if not isinstance(status, dict):
        return "unknown"
    state = status.get("state")
    if isinstance(state, str) and state:
        return state
    for condition in status.get("conditions") or []:
        if isinstance(condition, dict) and condition.get("type") in ("Ready", "Available"):
            return "ready" if condition.get("status") == "True" else "not_ready"
    return "unknown"


class _ResourceCollector(Collector):
    """Counts our objects in the cache by kind, namespace and state, at each scrape."""

    def __init__(self, cache: Cache) -> None:
        self.cache = cache

    def collect(self) -> Iterator[GaugeMetricFamily]:
        family = GaugeMetricFamily(f"{PREFIX}_resources_total",
                                   "Objects of our kinds the operator sees, by state",
                                   labels=["resource_type", "namespace", "status"])
        for resource in KINDS.values():
            tally: Tally[tuple[str, str]] = Tally()
            for informer in self.cache.informers:
                if informer.resource != resource or informer.field_selector:
                    continue
                for obj in informer.store.list():
                    meta = obj.get("metadata") or {}
                    tally[(str(meta.get("namespace", "")), _state(obj))] += 1
                break
            for (namespace, state), count in sorted(tally.items()):
                family.add_metric([resource.kind, namespace, state], count)
        yield family
