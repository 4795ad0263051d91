"""The Grafana dashboard in deploy/dashboards: valid JSON whose queries name only series the
operator serves (the runtime's and the `dynamo_operator_*` ones), grouped and shown by labels
those series carry: reconciles by `controller` (controller-runtime's names, the controller
named by its kind), denials by `reason`, as the original's page lists them."""

from __future__ import annotations

import json
import re
from pathlib import Path

from prometheus_client import CollectorRegistry

from controller.metrics import Metrics
from reconcilers.operator.metrics import OperatorMetrics

DASHBOARD = Path(__file__).resolve().parents[2] / "deploy" / "dashboards" / "dynamo-operator.json"
FUNCTIONS = {"sum", "by", "max", "rate", "histogram_quantile", "label_values", "le"}
#: Series of a collector reading the cache at scrape, with their labels.
COLLECTED = {"dynamo_operator_resources_total": {"resource_type", "namespace", "status"}}
#: Labels Prometheus adds to every series it scrapes through the chart's ServiceMonitor.
SCRAPED = {"pod", "instance", "job", "service", "endpoint", "container"}


def served() -> dict[str, set[str]]:
    """Every series name the operator serves, with its labels."""
    registry = CollectorRegistry()
    Metrics(registry)
    OperatorMetrics(registry)
    names = dict(COLLECTED)
    for collector in set(registry._collector_to_names):
        labels = set(getattr(collector, "_labelnames", ()))
        for family in collector.describe():
            suffixes = {"counter": ("_total",),
                        "histogram": ("_bucket", "_count", "_sum")}.get(family.type, ("",))
            for suffix in suffixes:
                names[family.name + suffix] = labels | ({"le"} if suffix == "_bucket" else set())
    return names


def _targets() -> list[tuple[str, str]]:
    dashboard = json.loads(DASHBOARD.read_text())
    assert dashboard["uid"] == "dynamo-operator"
    return [(t["expr"], t.get("legendFormat", "")) for p in dashboard["panels"]
            for t in p["targets"]]


def test_dashboard_queries_name_served_series_by_their_labels() -> None:
    series = served()
    targets = _targets()
    assert targets
    for expr, legend in targets:
        bare = re.sub(r"\{[^}]*\}|\[[^]]*\]|by \([a-z_, ]*\)", " ", expr)
        names = set(re.findall(r"[a-z_][a-z0-9_]*", bare)) - FUNCTIONS
        assert names and names <= set(series), (expr, names - set(series))
        labels = set.union(SCRAPED, *(series[n] for n in names))
        grouped = {label.strip() for group in re.findall(r"by \(([a-z_, ]*)\)", expr)
                   for label in group.split(",")}
        selected = set(re.findall(r"([a-z_]+)=~?\"", expr))
        shown = set(re.findall(r"\{\{(\w+)\}\}", legend))
        assert grouped | selected | shown <= labels, (expr, (grouped | selected | shown) - labels)


def test_dashboard_shows_what_the_page_lists() -> None:
    exprs = " ".join(expr for expr, _ in _targets())
    for name, label in (("controller_runtime_reconcile_total", "controller"),
                        ("controller_runtime_reconcile_time_seconds_bucket", "controller"),
                        ("controller_runtime_reconcile_errors_total", "controller"),
                        ("dynamo_operator_webhook_denials_total", "reason"),
                        ("dynamo_operator_webhook_requests_total", "result"),
                        ("dynamo_operator_webhook_duration_seconds_bucket", "operation"),
                        ("dynamo_operator_resources_total", "status")):
        assert re.search(rf"by \([a-z_, ]*\b{label}\b[a-z_, ]*\) \([a-z_]*\(?{name}\b", exprs), (
            name, label)
    titles = " ".join(p["title"] for p in json.loads(DASHBOARD.read_text())["panels"])
    for word in ("Reconciles", "errors", "Objects", "Admission", "denials"):
        assert word in titles
