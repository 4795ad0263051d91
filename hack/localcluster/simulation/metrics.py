"""Metrics the simulated HPA reads: per-pod resource usage and external metric series.

Stand-ins for metrics-server (pod usage) and a Prometheus adapter (external metrics). Tests set
them in-process through `Metrics`; e2e runs and humans use the token-authenticated control
endpoint `/localcluster/metrics` of the API server (GET lists, DELETE clears, POST sets):

    {"type": "external", "name": "dynamo_ttft_p95_seconds", "namespace": "default",
     "labels": {"dynamo_namespace": "default-g"}, "value": "750m"}
    {"type": "pod", "namespace": "default", "selector": "app=web", "resource": "cpu",
     "usage": "250m"}

A pod's usage may also come from its annotation `localcluster.dev/<resource>-usage` (for
example `localcluster.dev/cpu-usage: 250m`); an in-process rule wins, the latest rule first.
A pod with neither has no metrics, as a pod metrics-server has not scraped yet.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from api.quantity import QuantityError, parse_quantity

from ..errors import ApiError
from ..selectors import LabelSelector
from .objects import annotations_of, labels_of, name_of, namespace_of

Json = dict[str, Any]

CONTROL_PATH = "/localcluster/metrics"
USAGE_ANNOTATION = "localcluster.dev/{resource}-usage"


def milli(value: object) -> int:
    """A quantity (string or number) in thousandths, rounded up as Quantity.MilliValue does."""
    if isinstance(value, float):
        return math.ceil(value * 1000)
    try:
        return math.ceil(parse_quantity(value) * 1000)  # type: ignore[arg-type]
    except QuantityError as err:
        raise ApiError(400, "BadRequest", str(err)) from None


def format_milli(value: int) -> str:
    """A milli-value as the canonical quantity string ("3", "750m")."""
    return str(value // 1000) if value % 1000 == 0 else f"{value}m"


@dataclass(frozen=True)
class _UsageRule:
    namespace: str
    resource: str
    name: str | None
    selector: LabelSelector | None
    milli: int

    def matches(self, pod: Json, resource: str) -> bool:
        if resource != self.resource or namespace_of(pod) != self.namespace:
            return False
        if self.name is not None:
            return name_of(pod) == self.name
        return self.selector is None or self.selector.matches(labels_of(pod))


@dataclass(frozen=True)
class _Series:
    namespace: str
    name: str
    labels: tuple[tuple[str, str], ...]
    milli: int

    def to_json(self) -> Json:
        return {"namespace": self.namespace, "name": self.name, "labels": dict(self.labels),
                "value": format_milli(self.milli)}


class Metrics:
    """The metric values of one simulated cluster."""

    def __init__(self) -> None:
        self._usage: list[_UsageRule] = []
        self._series: dict[tuple[str, str, tuple[tuple[str, str], ...]], _Series] = {}

    # --- pod usage (metrics.k8s.io) ------------------------------------------------------

    def set_pod_usage(self, namespace: str, usage: str | int | float, *, name: str | None = None,
                      selector: str | None = None, resource: str = "cpu") -> None:
        """Usage of one pod (by name) or of every pod a label selector matches."""
        parsed = LabelSelector.parse(selector) if selector else None
        self._usage.append(_UsageRule(namespace, resource, name, parsed, milli(usage)))

    def pod_usage(self, pod: Json, resource: str = "cpu") -> int | None:
        """A pod's usage in milli-units, or None when it has no metrics."""
        for rule in reversed(self._usage):
            if rule.matches(pod, resource):
                return rule.milli
        value = annotations_of(pod).get(USAGE_ANNOTATION.format(resource=resource))
        if value is None:
            return None
        try:
            return milli(value)
        except ApiError:
            return None  # a bad annotation is a pod without metrics

    # --- external metrics (external.metrics.k8s.io) --------------------------------------

    def set_external(self, name: str, value: str | int | float, *, namespace: str = "default",
                     labels: dict[str, str] | None = None) -> None:
        """Set one series of an external metric (a metric name plus a label set)."""
        key_labels = tuple(sorted((labels or {}).items()))
        self._series[(namespace, name, key_labels)] = _Series(namespace, name, key_labels,
                                                              milli(value))

    def external(self, name: str, namespace: str, selector: LabelSelector) -> list[int]:
        """The milli-values of the series of `name` whose labels match `selector`."""
        return [s.milli for s in self._series.values()
                if s.namespace == namespace and s.name == name
                and selector.matches(dict(s.labels))]

    # --- all -----------------------------------------------------------------------------

    def clear(self) -> None:
        self._usage.clear()
        self._series.clear()

    def snapshot(self) -> Json:
        return {
            "external": [s.to_json() for s in self._series.values()],
            "pods": [{"namespace": r.namespace, "resource": r.resource, "name": r.name,
                      "selector": str(r.selector) if r.selector else None,
                      "usage": format_milli(r.milli)} for r in self._usage],
        }

    async def handle(self, request: web.Request) -> web.StreamResponse:
        """The control endpoint: GET lists, DELETE clears, POST sets one value."""
        if request.method == "GET":
            return web.json_response(self.snapshot())
        if request.method == "DELETE":
            self.clear()
            return web.json_response(self.snapshot())
        if request.method != "POST":
            raise ApiError(405, "MethodNotAllowed", "use GET, POST or DELETE")
        try:
            body = await request.json()
        except json.JSONDecodeError:
            body = None
        if not isinstance(body, dict):
            raise ApiError(400, "BadRequest", "the body must be a JSON object")
        self._set(body)
        return web.json_response(self.snapshot())

    def _set(self, body: Json) -> None:
        namespace = str(body.get("namespace") or "default")
        kind = body.get("type")
        if kind == "external":
            if not body.get("name") or "value" not in body:
                raise ApiError(400, "BadRequest", "an external metric needs a name and a value")
            labels = body.get("labels") or {}
            if not isinstance(labels, dict):
                raise ApiError(400, "BadRequest", "labels must be an object")
            self.set_external(str(body["name"]), body["value"], namespace=namespace,
                              labels={str(k): str(v) for k, v in labels.items()})
        elif kind == "pod":
            if "usage" not in body:
                raise ApiError(400, "BadRequest", "pod usage needs a usage value")
            self.set_pod_usage(namespace, body["usage"], name=body.get("name"),
                               selector=body.get("selector"),
                               resource=str(body.get("resource") or "cpu"))
        else:
            raise ApiError(400, "BadRequest", f"unknown metric type {kind!r}; use external or pod")
