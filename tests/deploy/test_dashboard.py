"""The Grafana dashboard in deploy/dashboards: valid JSON whose queries name only series the
operator serves (the runtime's and the `dynamo_operator_*` ones)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from prometheus_client import CollectorRegistry

from controller.metrics import Metrics
from reconcilers.operator.metrics import OperatorMetrics

DASHBOARD = Path(__file__).resolve().parents[2] / "deploy" / "dashboards" / "dynamo-operator.json"
FUNCTIONS = {"sum", "by", "rate", "histogram_quantile", "max", "label_values", "le"}


def served_names() -> set[str]:
    registry = CollectorRegistry()
    Metrics(registry)
    OperatorMetrics(registry)
    names = {"dynamo_operator_resources_total"}  # a collector reading the cache at scrape
    for family in registry.collect():
        suffixes = {"counter": ("_total",), "histogram": ("_bucket", "_count", "_sum")}.get(
            family.type, ("",))
        names |= {family.name + suffix for suffix in suffixes}
    return names


def test_dashboard_queries_name_served_series() -> None:
    dashboard = json.loads(DASHBOARD.read_text())
    assert dashboard["uid"] == "dynamo-operator"
    served = served_names()
    exprs = [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
    assert exprs
    for expr in exprs:
        bare = re.sub(r"\{[^}]*\}|\[[^]]*\]|by \([a-z_, ]*\)", " ", expr)
        names = set(re.findall(r"[a-z_][a-z0-9_]*", bare)) - FUNCTIONS
        assert names and names <= served, (expr, names - served)
    titles = " ".join(p["title"] for p in dashboard["panels"])
    for word in ("Reconciles", "errors", "Objects", "Admission"):
        assert word in titles
