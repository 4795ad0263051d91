"""The HorizontalPodAutoscaler printer (autoscaling/v1 and v2 shapes): TARGETS as kubectl
shows them, e.g. `cpu: 40%/80%`, `500m/1 (avg)`, `<unknown>/10`."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from .cells import as_dict, as_int, as_list, as_str, named_row, quantity
from .columns import Col, Printer, Row, named_columns

Json = dict[str, Any]

__all__ = ["PRINTERS"]

_DOCS = {
    "hpa.reference": "scaleTargetRef points to the target resource to scale, and is used to the "
    "pods for which metrics should be collected, as well as to actually change the replica count.",
    "hpa.metrics": "metrics contains the specifications for which to use to calculate the desired "
    "replica count (the maximum replica count across all metrics will be used).",
    "hpa.min": "minReplicas is the lower limit for the number of replicas to which the autoscaler "
    "can scale down.",
    "hpa.max": "maxReplicas is the upper limit for the number of replicas to which the autoscaler "
    "can scale up. It cannot be less that minReplicas.",
    "hpa.current": "currentReplicas is current number of replicas of pods managed by this "
    "autoscaler, as last seen by the autoscaler.",
}
#: The member of a metric spec / status that holds the source of each metric type.
_METRIC_SOURCES = {
    "External": "external",
    "Pods": "pods",
    "Object": "object",
    "Resource": "resource",
    "ContainerResource": "containerResource",
}


def _metric_target(spec: Json, status: Json | None, source: str) -> str:
    target = as_dict(as_dict(spec.get(source)).get("target"))
    current = as_dict(as_dict(status.get(source)).get("current")) if status is not None else None
    if target.get("averageValue") is not None:
        have = "<unknown>"
        if current is not None and current.get("averageValue") is not None:
            have = quantity(current.get("averageValue"), pointer=True)
        return f"{have}/{quantity(target.get('averageValue'))} (avg)"
    have = "<unknown>"
    if current is not None:
        have = quantity(current.get("value"), pointer=True)
    return f"{have}/{quantity(target.get('value'), pointer=True)}"


def _resource_target(spec: Json, status: Json | None, source: str) -> str:
    body = as_dict(spec.get(source))
    target = as_dict(body.get("target"))
    name = as_str(body.get("name"))
    current = as_dict(as_dict(status.get(source)).get("current")) if status is not None else None
    if target.get("averageValue") is not None:
        have = "<unknown>"
        if current is not None:
            have = quantity(current.get("averageValue"), pointer=True)
        return f"{name}: {have}/{quantity(target.get('averageValue'))}"
    have = "<unknown>"
    if current is not None and current.get("averageUtilization") is not None:
        have = f"{as_int(current.get('averageUtilization'))}%"
    want = "<auto>"
    if target.get("averageUtilization") is not None:
        want = f"{as_int(target.get('averageUtilization'))}%"
    return f"{name}: {have}/{want}"


def _pods_target(spec: Json, status: Json | None) -> str:
    have = "<unknown>"
    if status is not None:
        current = as_dict(as_dict(status.get("pods")).get("current"))
        have = quantity(current.get("averageValue"), pointer=True)
    target = as_dict(as_dict(spec.get("pods")).get("target"))
    return f"{have}/{quantity(target.get('averageValue'), pointer=True)}"


def _v1_cpu_metrics(spec: Json, status: Json) -> tuple[list[Json], list[Json]]:
    """The one CPU utilization target of the autoscaling/v1 shape, as v2 metrics."""
    specs: list[Json] = []
    statuses: list[Json] = []
    if spec.get("targetCPUUtilizationPercentage") is not None:
        percent = spec["targetCPUUtilizationPercentage"]
        target = {"type": "Utilization", "averageUtilization": percent}
        specs.append({"type": "Resource", "resource": {"name": "cpu", "target": target}})
    if status.get("currentCPUUtilizationPercentage") is not None:
        current = {"averageUtilization": status["currentCPUUtilizationPercentage"]}
        statuses.append({"type": "Resource", "resource": {"name": "cpu", "current": current}})
    return specs, statuses


def _hpa_metrics(obj: Json) -> tuple[list[Json], list[Json]]:
    spec, status = as_dict(obj.get("spec")), as_dict(obj.get("status"))
    v1_shape = "targetCPUUtilizationPercentage" in spec or (
        "metrics" not in spec and "currentCPUUtilizationPercentage" in status
    )
    if v1_shape:
        return _v1_cpu_metrics(spec, status)
    return [as_dict(m) for m in as_list(spec.get("metrics"))], [
        as_dict(m) for m in as_list(status.get("currentMetrics"))
    ]


def _format_hpa_metrics(obj: Json) -> str:
    specs, statuses = _hpa_metrics(obj)
    if not specs:
        return "<none>"
    shown: list[str] = []
    for i, spec in enumerate(specs):
        status = statuses[i] if i < len(statuses) else None
        source = _METRIC_SOURCES.get(as_str(spec.get("type")))
        if source is None:
            shown.append("<unknown type>")
            continue
        present = status if status is not None and isinstance(status.get(source), dict) else None
        if source == "pods":
            shown.append(_pods_target(spec, present))
        elif source in ("external", "object"):
            shown.append(_metric_target(spec, present, source))
        else:
            shown.append(_resource_target(spec, present, source))
    limit = 2
    if len(shown) > limit:
        return ", ".join(shown[:limit]) + f" + {len(shown) - limit} more..."
    return ", ".join(shown)


def _print_hpa(obj: Json, now: datetime) -> Row:
    spec, status = as_dict(obj.get("spec")), as_dict(obj.get("status"))
    ref = as_dict(spec.get("scaleTargetRef"))
    min_replicas = spec.get("minReplicas")
    min_pods = "<unset>" if min_replicas is None else str(as_int(min_replicas))
    cells = named_row(
        obj,
        now,
        f"{as_str(ref.get('kind'))}/{as_str(ref.get('name'))}",
        _format_hpa_metrics(obj),
        min_pods,
        as_int(spec.get("maxReplicas")),
        as_int(status.get("currentReplicas")),
    )
    return cells, None


PRINTERS: dict[tuple[str, str], Printer] = {
    ("autoscaling", "HorizontalPodAutoscaler"): Printer(
        named_columns(
            Col("Reference", "string", _DOCS["hpa.reference"]),
            Col("Targets", "string", _DOCS["hpa.metrics"]),
            Col("MinPods", "string", _DOCS["hpa.min"]),
            Col("MaxPods", "string", _DOCS["hpa.max"]),
            Col("Replicas", "string", _DOCS["hpa.current"]),
        ),
        _print_hpa,
    ),
}
