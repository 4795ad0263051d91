"""A generic CRD conversion webhook: `apiextensions.k8s.io/v1` ConversionReview in and out.

The API server sends the objects of a custom resource that must change version (stored in one,
asked for in another) and the `desiredAPIVersion`; the webhook answers them converted, in the
same order, under the request's uid. Like controller-runtime's conversion webhook it is served
by the same HTTPS server (and certificate) as the admission webhooks: `WebhookServer.route`
(path `/convert` by convention).

The conversion itself is a pure function `(object, desired_api_version) -> object`, registered
per API group (every kind of it) or per group and kind. The webhook knows nothing of what it
converts: it finds the function by the object's apiVersion and kind, checks that what comes
back has the desired apiVersion and the same kind, and answers `result: {status: Success}`;
any error (no converter, a converter's exception, a wrong answer) fails the whole review with
`result: {status: Failure, message}`, as one object the API server cannot convert fails the
request that needed it. Requests, converted objects and durations are counted by
`ConversionMetrics`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import structlog
from aiohttp import web
from prometheus_client import CollectorRegistry, Counter, Histogram

log = structlog.get_logger("controller.conversion_webhook")

Json = dict[str, Any]
#: A pure conversion: the object (any served version) as `desired_api_version`.
Converter = Callable[[Json, str], Json]

__all__ = ["DURATION_BUCKETS", "REVIEW_VERSION", "ConversionError", "ConversionMetrics",
           "ConversionWebhook", "Converter", "convert_objects"]

REVIEW_VERSION = "apiextensions.k8s.io/v1"
#: A review of one object takes a fraction of a millisecond: the default buckets (from 5 ms)
#: would put every one in the first.
DURATION_BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                    0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class ConversionError(Exception):
    """An object cannot be converted (the message goes to the API server)."""


class ConversionMetrics:
    """Conversion reviews by result, objects converted, and the time a review takes."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.requests = Counter("conversion_webhook_requests_total",
                                "Conversion reviews handled, by result (success, failure)",
                                ["webhook", "desired_version", "result"], registry=registry)
        self.objects = Counter("conversion_webhook_objects_total",
                               "Objects converted by successful conversion reviews",
                               ["webhook", "desired_version"], registry=registry)
        self.duration = Histogram("conversion_webhook_duration_seconds",
                                  "Time to handle a conversion review", ["webhook"],
                                  buckets=DURATION_BUCKETS, registry=registry)


def _group(api_version: str) -> str:
    return api_version.rpartition("/")[0]


@dataclass
class ConversionWebhook:
    """The `/convert` handler: converters by group (and kind), and their metrics."""

    metrics: ConversionMetrics
    _by_group: dict[str, Converter] = field(default_factory=dict)
    _by_kind: dict[tuple[str, str], Converter] = field(default_factory=dict)
    #: The metrics' children by (path, desired version, outcome): the API server sends one
    #: review per object, and looking labels up costs a review as much as decoding it.
    _children: dict[tuple[str, str, str], tuple[Any, Any, Any]] = field(default_factory=dict)

    def register(self, group: str, converter: Converter, kind: str | None = None) -> None:
        """Convert the objects of `group` (only its `kind`, when given) with `converter`."""
        table: dict[Any, Converter] = self._by_group if kind is None else self._by_kind
        key: Any = group if kind is None else (group, kind)
        if key in table:
            raise ValueError(f"a converter is already registered for {key}")
        table[key] = converter

    def converter_for(self, api_version: str, kind: str) -> Converter | None:
        group = _group(api_version)
        return self._by_kind.get((group, kind)) or self._by_group.get(group)

    async def handle(self, request: web.Request) -> web.Response:
        """Answer one ConversionReview (an aiohttp handler for `WebhookServer.route`)."""
        started = time.monotonic()
        try:
            review = json.loads(await request.read())
            uid, desired, objects = _parse(review)
        except ValueError as err:
            return web.json_response({"error": str(err)}, status=400)
        result: Json
        try:
            converted = convert_objects(self.converter_for, objects, desired)
        except ConversionError as err:
            log.warning("conversion failed", path=request.path, desired=desired,
                        error=str(err))
            result, response = {"status": "Failure", "message": str(err)}, {}
            outcome = "failure"
        else:
            result, response = {"status": "Success"}, {"convertedObjects": converted}
            outcome = "success"
        body = json.dumps({"apiVersion": review.get("apiVersion") or REVIEW_VERSION,
                           "kind": "ConversionReview",
                           "response": {"uid": uid, **response, "result": result}})
        duration, requests, converted_objects = self._metrics(request.path, desired, outcome)
        # From the body read to the answer encoded: the review as this process handles it.
        duration.observe(time.monotonic() - started)
        requests.inc()
        if outcome == "success":
            converted_objects.inc(len(objects))
        return web.Response(text=body, content_type="application/json")

    def _metrics(self, path: str, desired: str, outcome: str) -> tuple[Any, Any, Any]:
        key = (path, desired, outcome)
        children = self._children.get(key)
        if children is None:
            children = (self.metrics.duration.labels(path),
                        self.metrics.requests.labels(path, desired, outcome),
                        self.metrics.objects.labels(path, desired))
            self._children[key] = children
        return children


def _parse(review: Any) -> tuple[str, str, list[Json]]:
    """(uid, desiredAPIVersion, objects) of a ConversionReview; ValueError when malformed."""
    request = review.get("request") if isinstance(review, dict) else None
    if not isinstance(request, dict) or not request.get("uid"):
        raise ValueError("the ConversionReview has no request uid")
    desired = request.get("desiredAPIVersion")
    if not isinstance(desired, str) or not desired:
        raise ValueError("the ConversionReview has no desiredAPIVersion")
    objects = request.get("objects") or []
    if not isinstance(objects, list) or not all(isinstance(o, dict) for o in objects):
        raise ValueError("the ConversionReview's objects are not a list of objects")
    return str(request["uid"]), desired, objects


def convert_objects(find: Callable[[str, str], Converter | None], objects: list[Json],
                    desired: str) -> list[Json]:
    """Every object as `desired`, in order; ConversionError names the first that fails."""
    out = []
    for index, obj in enumerate(objects):
        api_version, kind = str(obj.get("apiVersion") or ""), str(obj.get("kind") or "")
        meta = obj.get("metadata") or {}
        what = f"{kind} {meta.get('namespace', '')}/{meta.get('name', '')}".replace(" /", " ")
        if api_version == desired:
            out.append(obj)
            continue
        if _group(api_version) != _group(desired):
            raise ConversionError(f"object {index} ({what}): cannot convert {api_version} to "
                                  f"another group's {desired}")
        converter = find(api_version, kind)
        if converter is None:
            raise ConversionError(f"object {index} ({what}): no converter for {api_version}, "
                                  f"Kind={kind}")
        try:
            converted = converter(obj, desired)
        except Exception as err:  # a converter's error is the review's failure, not a crash
            raise ConversionError(f"object {index} ({what}): converting {api_version} to "
                                  f"{desired}: {err}") from err
        if not isinstance(converted, dict) or converted.get("apiVersion") != desired or \
                converted.get("kind") != kind:
            raise ConversionError(f"object {index} ({what}): the converter returned "
                                  f"{_shape(converted)}, expected {desired}, Kind={kind}")
        out.append(converted)
    return out


def _shape(obj: Any) -> str:
    if not isinstance(obj, dict):
        return type(obj).__name__
    return f"{obj.get('apiVersion', '')}, Kind={obj.get('kind', '')}"
