"""Prometheus metrics of the runtime, under controller-runtime's and client-go's names.

Each `Metrics` owns its own `CollectorRegistry`, so several managers can live in one process
(tests do that); nothing registers in prometheus_client's global registry.
"""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

# controller-runtime's reconcile-time buckets (seconds).
RECONCILE_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5,
                     0.6, 0.7, 0.8, 0.9, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0,
                     6.0, 7.0, 8.0, 9.0, 10.0, 15.0, 20.0, 25.0, 30.0, 40.0, 50.0, 60.0)
# The work queue's buckets: 10 ns to 1000 s by powers of ten.
QUEUE_BUCKETS = tuple(1e-8 * 10 ** i for i in range(12))


class Metrics:
    """Every collector of one manager, registered in one registry."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        r = self.registry
        self.reconcile_total = Counter(
            "controller_runtime_reconcile_total",
            "Total number of reconciliations per controller", ["controller", "result"],
            registry=r)
        self.reconcile_errors = Counter(
            "controller_runtime_reconcile_errors_total",
            "Total number of reconciliation errors per controller", ["controller"], registry=r)
        self.terminal_reconcile_errors = Counter(
            "controller_runtime_terminal_reconcile_errors_total",
            "Total number of terminal reconciliation errors per controller", ["controller"],
            registry=r)
        self.reconcile_time = Histogram(
            "controller_runtime_reconcile_time_seconds",
            "Length of time per reconciliation per controller", ["controller"],
            buckets=RECONCILE_BUCKETS, registry=r)
        self.max_concurrent_reconciles = Gauge(
            "controller_runtime_max_concurrent_reconciles",
            "Maximum number of concurrent reconciles per controller", ["controller"], registry=r)
        self.active_workers = Gauge(
            "controller_runtime_active_workers",
            "Number of currently used workers per controller", ["controller"], registry=r)
        self.queue_depth = Gauge("workqueue_depth", "Current depth of workqueue", ["name"],
                                 registry=r)
        self.queue_adds = Counter("workqueue_adds_total",
                                  "Total number of adds handled by workqueue", ["name"],
                                  registry=r)
        self.queue_latency = Histogram(
            "workqueue_queue_duration_seconds",
            "How long in seconds an item stays in workqueue before being requested",
            ["name"], buckets=QUEUE_BUCKETS, registry=r)
        self.queue_work_duration = Histogram(
            "workqueue_work_duration_seconds",
            "How long in seconds processing an item from workqueue takes", ["name"],
            buckets=QUEUE_BUCKETS, registry=r)
        self.queue_retries = Counter("workqueue_retries_total",
                                     "Total number of retries handled by workqueue", ["name"],
                                     registry=r)
        self.queue_unfinished = Gauge(
            "workqueue_unfinished_work_seconds",
            "How many seconds of work has been done that is in progress and hasn't been"
            " observed by work_duration", ["name"], registry=r)
        self.queue_longest_running = Gauge(
            "workqueue_longest_running_processor_seconds",
            "How many seconds has the longest running processor for workqueue been running",
            ["name"], registry=r)
        self.leader_status = Gauge(
            "leader_election_master_status",
            "Gauge of if the reporting system is master of the relevant lease, 0 indicates"
            " backup, 1 indicates master", ["name"], registry=r)
        self.rest_requests = Counter(
            "rest_client_requests_total",
            "Number of HTTP requests, partitioned by status code, method, and host",
            ["code", "method", "host"], registry=r)
        self.rest_retries = Counter(
            "rest_client_request_retries_total",
            "Number of request retries, partitioned by status code, method, and host",
            ["code", "method", "host"], registry=r)

    def queue(self, name: str) -> QueueMetrics:
        return QueueMetrics(self, name)


class QueueMetrics:
    """The work queue metrics of one named queue."""

    def __init__(self, metrics: Metrics, name: str) -> None:
        self.depth = metrics.queue_depth.labels(name=name)
        self.adds = metrics.queue_adds.labels(name=name)
        self.latency = metrics.queue_latency.labels(name=name)
        self.work_duration = metrics.queue_work_duration.labels(name=name)
        self.retries = metrics.queue_retries.labels(name=name)
        self._unfinished = metrics.queue_unfinished.labels(name=name)
        self._longest = metrics.queue_longest_running.labels(name=name)

    def watch_processing(self, unfinished: Callable[[], float],
                         longest: Callable[[], float]) -> None:
        """Read the in-progress gauges from the queue at scrape time."""
        self._unfinished.set_function(unfinished)
        self._longest.set_function(longest)
