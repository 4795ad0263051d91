"""The HorizontalPodAutoscaler controller of the simulated cluster (autoscaling/v2).

Every `HpaSettings.sync_period` each HPA is evaluated the way kube-controller-manager does it:
the target is found through discovery by apiVersion and kind and must serve a `/scale`
subresource (Deployments, StatefulSets, ReplicaSets and custom resources such as
DynamoGraphDeploymentScalingAdapters); its Scale gives the current replicas and the pod
selector; Resource metrics (pod usage) and External metrics come from `Metrics`; the proposal
is bounded, stabilized and rate-limited (`hpa_algorithm`); a new size is written through the
Scale; the status (current/desired replicas, current metrics, AbleToScale, ScalingActive,
ScalingLimited, lastScaleTime) is written only when it changed. Pods and Object metrics are
not simulated: such a metric is reported as invalid.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from typing import Any

from .. import discovery
from ..errors import ApiError
from ..registry import Registry, ResourceType
from ..selectors import LabelSelector
from ..storage import ADDED, DELETED, Change
from . import hpa_algorithm as algo
from .clock import rfc3339
from .config import HpaSettings
from .loop import Context, ControlLoop, Key
from .metrics import Metrics, format_milli, milli
from .objects import set_condition
from .writer import PODS, Retry

Json = dict[str, Any]
#: Sets one HPA condition: (type, ok, reason, message).
SetCondition = Callable[[str, bool, str, str], None]
HPAS = ("autoscaling", "horizontalpodautoscalers")
ABLE, ACTIVE, LIMITED = "AbleToScale", "ScalingActive", "ScalingLimited"


def scale_target(registry: Registry, api_version: str, kind: str) -> ResourceType | None:
    """The resource of a scaleTargetRef, if discovery lists it with a `/scale` subresource.

    Like a RESTMapper, the asked version is tried first, then the group's other versions.
    """
    group, _, version = api_version.rpartition("/")
    versions = registry.groups().get(group) or []
    for candidate in sorted(versions, key=lambda v: v != version):
        listing = discovery.resource_list(registry, group, candidate) or {}
        names = {r["name"] for r in listing.get("resources", ())}
        for entry in listing.get("resources", ()):
            plural = entry["name"]
            if entry["kind"] == kind and "/" not in plural and f"{plural}/scale" in names:
                return registry.get(group, candidate, plural)
    return None


class HorizontalPodAutoscalerController(ControlLoop):
    """Scales the targets of HorizontalPodAutoscalers on their metrics."""

    component = "horizontal-pod-autoscaler"

    def __init__(self, ctx: Context, metrics: Metrics) -> None:
        super().__init__(ctx)
        self.metrics = metrics
        self._history: dict[Key, algo.History] = {}

    @property
    def settings(self) -> HpaSettings:
        return self.ctx.config.hpa

    def initial_keys(self) -> Iterable[Key]:
        return [(o["metadata"]["namespace"], o["metadata"]["name"])
                for o in self.writer.list_objects(HPAS)]

    def keys_for(self, change: Change) -> Iterable[Key]:
        # New, deleted or re-specified HPAs are looked at at once; otherwise an HPA is only
        # evaluated every sync period (its own status writes must not re-trigger it).
        if change.resource != HPAS:
            return ()
        old_gen = (change.old or {}).get("metadata", {}).get("generation")
        if change.type in (ADDED, DELETED) or change.obj["metadata"].get("generation") != old_gen:
            return [(change.obj["metadata"]["namespace"], change.obj["metadata"]["name"])]
        return ()

    def reconcile(self, key: Key) -> float | None:
        namespace, name = key
        hpa = self.writer.get(HPAS, namespace, name)
        if hpa is None:
            self._history.pop(key, None)
            return None
        status = self._evaluate(key, hpa)
        self.writer.update_status(HPAS, hpa, status)
        return self.settings.sync_period

    # --- one evaluation --------------------------------------------------------------------

    def _evaluate(self, key: Key, hpa: Json) -> Json:
        """Scale the target if its metrics say so; returns the HPA's new status."""
        spec, old = hpa.get("spec") or {}, hpa.get("status") or {}
        now = rfc3339()
        conditions = copy.deepcopy(old.get("conditions") or [])

        def cond(ctype: str, ok: bool, reason: str, message: str) -> None:
            set_condition(conditions, ctype, "True" if ok else "False", now, reason=reason,
                          message=message)

        def result(current: int, desired: int, metrics: list[Json] | None,
                   scaled: bool = False) -> Json:
            status: Json = {"currentReplicas": current, "desiredReplicas": desired,
                            "conditions": conditions}
            if metrics:
                status["currentMetrics"] = metrics
            last = now if scaled else old.get("lastScaleTime")
            if last:
                status["lastScaleTime"] = last
            return status

        ref = spec.get("scaleTargetRef") or {}
        rt = scale_target(self.ctx.ops.registry, str(ref.get("apiVersion", "")),
                          str(ref.get("kind", "")))
        try:
            if rt is None:
                raise ApiError(404, "NotFound", f"no matches for kind {ref.get('kind')!r} in "
                               f"version {ref.get('apiVersion')!r} with a scale subresource")
            scale = self.ctx.ops.get_scale(rt, hpa["metadata"]["namespace"], ref.get("name", ""))
        except ApiError as err:
            message = f"the HPA controller was unable to get the target's current scale: {err}"
            cond(ABLE, False, "FailedGetScale", message)
            self.events.warning(hpa, "FailedGetScale", str(err))
            return result(int(old.get("currentReplicas") or 0),
                          int(old.get("desiredReplicas") or 0), old.get("currentMetrics"))
        assert rt is not None
        cond(ABLE, True, "SucceededGetScale",
             "the HPA controller was able to get the target's current scale")
        current = int((scale.get("spec") or {}).get("replicas") or 0)
        minimum = int(spec.get("minReplicas", 1))
        maximum = int(spec.get("maxReplicas", 1))
        history = self._history.setdefault(key, algo.History(
            recommendations=[(current, self.ctx.clock.now())]))
        metrics: list[Json] = []
        reason = ""
        if current == 0 and minimum != 0:
            cond(ACTIVE, False, "ScalingDisabled",
                 "scaling is disabled since the replica count of the target is zero")
            return result(current, current, None)
        if current > maximum:
            desired, reason = maximum, "Current number of replicas above Spec.MaxReplicas"
        elif current < minimum:
            desired, reason = minimum, "Current number of replicas below Spec.MinReplicas"
        else:
            try:
                proposal, described, metrics = self._proposal(hpa, scale, current, cond)
            except algo.MetricError as err:
                self.events.warning(hpa, "FailedComputeMetricsReplicas", err.message)
                return result(current, int(old.get("desiredReplicas") or 0),
                              old.get("currentMetrics"))
            reason = (f"{described} above target" if proposal > current else
                      "All metrics below target")
            desired = self._normalize(hpa, history, current, proposal, minimum, maximum, cond)
        if desired == current:
            return result(current, desired, metrics)
        try:
            self.ctx.ops.update_scale(rt, hpa["metadata"]["namespace"], ref["name"], {
                **scale, "spec": {"replicas": desired}}, self.writer.opts)
        except ApiError as err:
            if err.code == 409:
                raise Retry(err.message) from None
            cond(ABLE, False, "FailedUpdateScale",
                 f"the HPA controller was unable to update the target scale: {err}")
            self.events.warning(hpa, "FailedRescale",
                                f"New size: {desired}; reason: {reason}; error: {err}")
            return result(current, int(old.get("desiredReplicas") or 0), metrics)
        cond(ABLE, True, "SucceededRescale",
             f"the HPA controller was able to update the target scale to {desired}")
        self.events.normal(hpa, "SuccessfulRescale", f"New size: {desired}; reason: {reason}")
        up = algo.rules(spec.get("behavior"), algo.SCALE_UP, 0, self.settings.time_scale)
        down = algo.rules(spec.get("behavior"), algo.SCALE_DOWN, 0, self.settings.time_scale)
        keep = max(p[2] for p in (up if desired > current else down).policies)
        history.record_scale(current, desired, self.ctx.clock.now(), keep)
        return result(current, desired, metrics, scaled=True)

    def _normalize(self, hpa: Json, history: algo.History, current: int, proposal: int,
                   minimum: int, maximum: int, cond: SetCondition) -> int:
        behavior = (hpa.get("spec") or {}).get("behavior")
        s = self.settings
        window = s.downscale_stabilization * s.time_scale
        now = self.ctx.clock.now()
        if behavior is None:
            out = algo.normalize_legacy(history, now, current, proposal, minimum, maximum, window)
        else:
            out = algo.normalize_with_behavior(
                history, now, current, proposal, minimum, maximum,
                algo.rules(behavior, algo.SCALE_UP, s.downscale_stabilization, s.time_scale),
                algo.rules(behavior, algo.SCALE_DOWN, s.downscale_stabilization, s.time_scale))
        cond(ABLE, True, *out.able)
        cond(LIMITED, *out.limited)
        return out.replicas

    # --- metrics ---------------------------------------------------------------------------

    def _proposal(self, hpa: Json, scale: Json, current: int,
                  cond: SetCondition) -> tuple[int, str, list[Json]]:
        """The highest proposal of the HPA's metrics, their descriptions and statuses."""
        selector_text = (scale.get("status") or {}).get("selector") or ""
        if not selector_text:
            cond(ACTIVE, False, "InvalidSelector", "the HPA target's scale is missing a selector")
            self.events.warning(hpa, "SelectorRequired", "selector is required")
            raise algo.MetricError("InvalidSelector", "selector is required")
        try:
            selector = LabelSelector.parse(selector_text)
        except ApiError as err:
            cond(ACTIVE, False, "InvalidSelector", err.message)
            raise algo.MetricError("InvalidSelector", err.message) from None
        namespace = hpa["metadata"]["namespace"]
        pods = self.writer.list_objects(PODS, namespace, selector)
        status_replicas = int((scale.get("status") or {}).get("replicas") or 0)
        specs = (hpa.get("spec") or {}).get("metrics") or [_DEFAULT_CPU]
        best: tuple[int, str] | None = None
        statuses: list[Json] = []
        failures: list[algo.MetricError] = []
        for metric in specs:
            try:
                proposal, described, status = self._one(metric, namespace, current,
                                                        status_replicas, pods)
            except algo.MetricError as err:
                failures.append(err)
                self.events.warning(hpa, err.reason, err.message)
                continue
            statuses.append(status)
            if best is None or proposal > best[0]:
                best = (proposal, described)
        # With a metric missing, scaling down could act on half the picture: do not.
        if best is None or (failures and best[0] < current):
            first = failures[0]
            cond(ACTIVE, False, first.reason,
                 f"the HPA was unable to compute the replica count: {first.message}")
            raise algo.MetricError(first.reason, f"invalid metrics ({len(failures)} invalid out "
                                   f"of {len(specs)}), first error is: {first.message}")
        cond(ACTIVE, True, "ValidMetricFound",
             f"the HPA was able to successfully calculate a replica count from {best[1]}")
        return best[0], best[1], statuses

    def _one(self, metric: Json, namespace: str, current: int, status_replicas: int,
             pods: list[Json]) -> tuple[int, str, Json]:
        kind = metric.get("type")
        tolerance = self.settings.tolerance
        if kind == "Resource":
            return self._resource(metric.get("resource") or {}, current, pods, tolerance)
        if kind == "External":
            return self._external(metric.get("external") or {}, namespace, current,
                                  status_replicas, pods, tolerance)
        raise algo.MetricError("InvalidMetricSourceType",
                               f"metric source type {kind!r} is not simulated by the local HPA")

    def _resource(self, source: Json, current: int, pods: list[Json],
                  tolerance: float) -> tuple[int, str, Json]:
        name = str(source.get("name", "cpu"))
        target = source.get("target") or {}
        if not pods:
            raise algo.MetricError("FailedGetResourceMetric", "no pods returned by selector "
                                   "while calculating replica count")
        group = algo.group_pods(pods, lambda p: self.metrics.pod_usage(p, name), name == "cpu")
        if target.get("averageValue") is not None:
            want = milli(target["averageValue"])
            proposal = algo.pod_metric_replicas(
                current, group, lambda s: sum(s.values()) / len(s) / want, lambda _: want,
                tolerance)
            average = sum(group.samples.values()) // len(group.samples)
            return proposal, f"{name} resource", {"type": "Resource", "resource": {
                "name": name, "current": {"averageValue": format_milli(average)}}}
        if target.get("averageUtilization") is None:
            raise algo.MetricError("FailedGetResourceMetric", "invalid resource metric source: "
                                   "neither a utilization target nor a value target was set")
        percent = int(target["averageUtilization"])
        requests = {p["metadata"]["name"]: _request(p, name) for p in pods}
        missing = sorted(pod for pod, value in requests.items() if value is None)
        if missing:
            raise algo.MetricError("FailedGetResourceMetric", f"missing request for {name}")
        known = {pod: int(value or 0) for pod, value in requests.items()}
        proposal = algo.pod_metric_replicas(
            current, group, lambda s: algo.utilization(s, known)[0] / percent,
            lambda pod: known[pod], tolerance)
        used, average = algo.utilization(group.samples, known)
        return proposal, f"{name} resource utilization (percentage of request)", {
            "type": "Resource", "resource": {"name": name, "current": {
                "averageUtilization": used, "averageValue": format_milli(average)}}}

    def _external(self, source: Json, namespace: str, current: int, status_replicas: int,
                  pods: list[Json], tolerance: float) -> tuple[int, str, Json]:
        metric = source.get("metric") or {}
        name = str(metric.get("name", ""))
        raw_selector = metric.get("selector")
        selector = (LabelSelector.from_label_selector(raw_selector) if raw_selector is not None
                    else LabelSelector())
        values = self.metrics.external(name, namespace, selector)
        if not values:
            raise algo.MetricError("FailedGetExternalMetric", f"unable to get external metric "
                                   f"{namespace}/{name}/{selector}: no metrics returned from "
                                   "external metrics API")
        total = sum(values)
        target = source.get("target") or {}
        described = f"external metric {name}({selector})"
        identity = {k: v for k, v in metric.items() if k in ("name", "selector")}
        if target.get("averageValue") is not None:
            proposal, average = algo.external_average_replicas(
                status_replicas, total, milli(target["averageValue"]), tolerance)
            current_value: Json = {"averageValue": format_milli(average)}
        elif target.get("value") is not None:
            ready = sum(1 for p in pods if algo.running_ready(p))
            proposal = algo.external_value_replicas(current, total, milli(target["value"]),
                                                    ready if pods else None, tolerance)
            current_value = {"value": format_milli(total)}
        else:
            raise algo.MetricError("FailedGetExternalMetric", "invalid external metric source: "
                                   "neither a value target nor an average value target was set")
        return proposal, described, {"type": "External", "external": {
            "metric": identity, "current": current_value}}


#: What an HPA without metrics scales on (the API's default).
_DEFAULT_CPU: Json = {"type": "Resource", "resource": {
    "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}


def _request(pod: Json, resource: str) -> int | None:
    """The pod's total request of `resource` (milli), None when a container requests none."""
    total = 0
    for container in (pod.get("spec") or {}).get("containers") or ():
        value = ((container.get("resources") or {}).get("requests") or {}).get(resource)
        if value is None:
            return None
        total += milli(value)
    return total
