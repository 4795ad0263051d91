"""The autoscaling/v2 HorizontalPodAutoscaler algorithm, as kube-controller-manager runs it.

Pure functions over plain values: how many replicas one metric proposes (Resource and External
metrics), then how that proposal is bounded by minReplicas/maxReplicas, stabilized over recent
recommendations and rate-limited by the scaling policies of `spec.behavior`. Times are seconds
on the caller's clock; all the state is the per-HPA `History` the caller keeps.

The core rule: desired = ceil(current * currentValue / targetValue), unless the ratio is within
the tolerance of 1.0. Pods that are pending, unready (CPU) or have no metrics yet are left out
of the ratio and then counted so as to damp the move (0 % when scaling up, 100 % when scaling
down), and if that flips the direction the HPA does not scale at all.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .objects import pod_phase, pod_ready

Json = dict[str, Any]

SCALE_UP, SCALE_DOWN = "scaleUp", "scaleDown"
#: Defaults of behavior.scaleUp / scaleDown (autoscaling/v2 defaulting).
_DEFAULT_POLICIES = {
    SCALE_UP: (("Percent", 100, 15), ("Pods", 4, 15)),
    SCALE_DOWN: (("Percent", 100, 15),),
}


class MetricError(Exception):
    """A metric gave no proposal; `reason` is the HPA condition/event reason."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


# --- per-metric proposals ------------------------------------------------------------------


@dataclass(frozen=True)
class PodSamples:
    """The pods of the target grouped as the HPA groups them for one resource."""

    #: Metric (milli) of the pods that count: running, with metrics (and ready, for CPU).
    samples: dict[str, int]
    #: Pods left out because pending or, for CPU, not ready.
    ignored: frozenset[str]
    #: Running pods without metrics.
    missing: frozenset[str]


def running_ready(pod: Json) -> bool:
    """Running and Ready: the pods the HPA counts as serving."""
    return pod_phase(pod) == "Running" and pod_ready(pod)


def group_pods(pods: list[Json], usage: Callable[[Json], int | None],
               cpu: bool) -> PodSamples:
    """Split pods into samples, ignored and missing (deleted and failed pods never count)."""
    samples: dict[str, int] = {}
    ignored: set[str] = set()
    missing: set[str] = set()
    for pod in pods:
        name = pod["metadata"]["name"]
        phase = (pod.get("status") or {}).get("phase")
        if pod["metadata"].get("deletionTimestamp") or phase == "Failed":
            continue
        if phase in (None, "Pending"):
            ignored.add(name)
            continue
        value = usage(pod)
        if value is None:
            missing.add(name)
            continue
        # The CPU of a pod still starting up is not representative.
        if cpu and not running_ready(pod):
            ignored.add(name)
            continue
        samples[name] = value
    return PodSamples(samples, frozenset(ignored), frozenset(missing))


def _within(ratio: float, tolerance: float) -> bool:
    return abs(1.0 - ratio) <= tolerance


def pod_metric_replicas(current: int, group: PodSamples,
                        ratio_of: Callable[[dict[str, int]], float],
                        full_usage: Callable[[str], int], tolerance: float) -> int:
    """Replicas proposed by a per-pod metric (utilization or average value).

    `ratio_of` turns samples into the usage ratio; `full_usage(pod)` is what a pod without
    metrics is assumed to use on a scale-down (its request, or the target value).
    """
    if not group.samples:
        raise MetricError("FailedGetResourceMetric", "did not receive metrics for any ready pods")
    ratio = ratio_of(group.samples)
    rebalance = bool(group.ignored) and ratio > 1.0
    if not rebalance and not group.missing:
        return current if _within(ratio, tolerance) else math.ceil(ratio * len(group.samples))
    filled = dict(group.samples)
    for pod in group.missing:
        filled[pod] = full_usage(pod) if ratio < 1.0 else 0
    if rebalance:
        for pod in group.ignored:
            filled[pod] = 0
    new_ratio = ratio_of(filled)
    if _within(new_ratio, tolerance) or (ratio < 1.0) != (new_ratio < 1.0):
        return current  # too small a change, or the pods we guessed flipped the direction
    proposal = math.ceil(new_ratio * len(filled))
    if (new_ratio < 1.0 and proposal > current) or (new_ratio > 1.0 and proposal < current):
        return current
    return proposal


def utilization(samples: dict[str, int], requests: dict[str, int]) -> tuple[int, int]:
    """(utilization in percent of requests, truncated as the HPA does; average milli-usage)."""
    total_usage = sum(samples.values())
    total_requests = sum(requests[pod] for pod in samples)
    if total_requests <= 0:
        raise MetricError("FailedGetResourceMetric", "no pods with a request for the resource")
    return total_usage * 100 // total_requests, total_usage // len(samples)


def external_value_replicas(spec_replicas: int, total: int, target: int, ready_pods: int | None,
                            tolerance: float) -> int:
    """Replicas for an External metric with a `Value` target (the metric is for all pods)."""
    ratio = total / target
    if spec_replicas == 0:
        return math.ceil(ratio)  # scale from zero: the ratio alone decides
    if _within(ratio, tolerance):
        return spec_replicas
    if not ready_pods:
        raise MetricError("FailedGetExternalMetric",
                          "no pods returned by selector while calculating replica count")
    return math.ceil(ratio * ready_pods)


def external_average_replicas(status_replicas: int, total: int, target: int,
                              tolerance: float) -> tuple[int, int]:
    """(replicas, average per replica) for an External metric with an `AverageValue` target."""
    if status_replicas > 0 and _within(total / (target * status_replicas), tolerance):
        return status_replicas, math.ceil(total / status_replicas)
    average = math.ceil(total / status_replicas) if status_replicas else total
    return math.ceil(total / target), average


# --- behavior: stabilization and rate limits --------------------------------------------


@dataclass(frozen=True)
class Rules:
    """HPAScalingRules of one direction, with windows and periods in caller seconds."""

    stabilization: float
    select: str
    policies: tuple[tuple[str, int, float], ...]


def rules(behavior: Json | None, direction: str, downscale_window: float,
          time_scale: float) -> Rules:
    """The rules of one direction with the API's defaults filled in."""
    given = (behavior or {}).get(direction) or {}
    window = given.get("stabilizationWindowSeconds")
    if window is None:
        window = downscale_window if direction == SCALE_DOWN else 0
    policies = tuple((p.get("type", "Pods"), int(p.get("value", 0)),
                      float(p.get("periodSeconds", 15)) * time_scale)
                     for p in given.get("policies") or ()) or tuple(
        (kind, value, period * time_scale) for kind, value, period in _DEFAULT_POLICIES[direction])
    return Rules(float(window) * time_scale, str(given.get("selectPolicy") or "Max"), policies)


@dataclass
class History:
    """What the HPA controller remembers of one HPA (in memory, as kube-controller-manager)."""

    #: (replicas recommended, when), newest last.
    recommendations: list[tuple[int, float]] = field(default_factory=list)
    #: (replicas added / removed, when) of past scale events.
    ups: list[tuple[int, float]] = field(default_factory=list)
    downs: list[tuple[int, float]] = field(default_factory=list)

    def record_scale(self, old: int, new: int, now: float, keep: float) -> None:
        """Remember a scale event; events older than `keep` seconds are dropped."""
        events = self.ups if new > old else self.downs
        events[:] = [e for e in events if e[1] > now - keep]
        events.append((abs(new - old), now))


@dataclass(frozen=True)
class Outcome:
    """The normalized desired replicas and the conditions the steps leave behind."""

    replicas: int
    #: (reason, message) of AbleToScale=True after stabilization.
    able: tuple[str, str]
    #: (limited, reason, message) of ScalingLimited.
    limited: tuple[bool, str, str]


def _changed_within(events: list[tuple[int, float]], period: float, now: float) -> int:
    return sum(change for change, at in events if at > now - period)


def _up_limit(current: int, history: History, r: Rules, now: float) -> int:
    if r.select == "Disabled":
        return current
    pick = min if r.select == "Min" else max
    limit: int | None = None
    for kind, value, period in r.policies:
        start = current - _changed_within(history.ups, period, now)
        proposed = start + value if kind == "Pods" else math.ceil(start * (1 + value / 100))
        limit = proposed if limit is None else pick(limit, proposed)
    return current if limit is None else limit


def _down_limit(current: int, history: History, r: Rules, now: float) -> int:
    if r.select == "Disabled":
        return current
    pick = max if r.select == "Min" else min
    limit: int | None = None
    for kind, value, period in r.policies:
        start = current + _changed_within(history.downs, period, now)
        proposed = start - value if kind == "Pods" else int(start * (1 - value / 100))
        limit = proposed if limit is None else pick(limit, proposed)
    return current if limit is None else limit


def normalize_with_behavior(history: History, now: float, current: int, proposal: int,
                            minimum: int, maximum: int, up: Rules, down: Rules) -> Outcome:
    """Stabilize `proposal` over the windows of `up`/`down`, then limit the rate of change."""
    scaling_up = proposal >= current
    window = up.stabilization if scaling_up else down.stabilization
    better = min if scaling_up else max
    stabilized = proposal
    for replicas, at in history.recommendations:
        if at > now - window:
            stabilized = better(stabilized, replicas)
    keep = max(up.stabilization, down.stabilization)
    history.recommendations[:] = [r for r in history.recommendations if r[1] > now - keep]
    history.recommendations.append((proposal, now))
    if stabilized != proposal:
        able = (("ScaleUpStabilized", "recent recommendations were lower than current one, "
                 "applying the lowest recent recommendation") if scaling_up else
                ("ScaleDownStabilized", "recent recommendations were higher than current one, "
                 "applying the highest recent recommendation"))
    else:
        able = ("ReadyForNewScale", "recommended size matches current size")
    desired, reason, message = stabilized, "DesiredWithinRange", (
        "the desired count is within the acceptable range")
    if stabilized > current:
        ceiling = max(_up_limit(current, history, up, now), current)
        if maximum > ceiling:
            bound, reason, message = ceiling, "ScaleUpLimit", (
                "the desired replica count is increasing faster than the maximum scale rate")
        else:
            bound, reason, message = maximum, "TooManyReplicas", (
                "the desired replica count is more than the maximum replica count")
        desired = min(stabilized, bound)
    elif stabilized < current:
        floor = min(_down_limit(current, history, down, now), current)
        if minimum < floor:
            bound, reason, message = floor, "ScaleDownLimit", (
                "the desired replica count is decreasing faster than the maximum scale rate")
        else:
            bound, reason, message = minimum, "TooFewReplicas", (
                "the desired replica count is less than the minimum replica count")
        desired = max(stabilized, bound)
    if desired == stabilized:
        reason, message = "DesiredWithinRange", "the desired count is within the acceptable range"
    return Outcome(desired, able, (desired != stabilized, reason, message))


def normalize_legacy(history: History, now: float, current: int, proposal: int, minimum: int,
                     maximum: int, downscale_window: float) -> Outcome:
    """Without `behavior`: the highest recommendation of the downscale window, then at most
    double (or 4) the replicas, within min/max."""
    stabilized = max([proposal] + [r for r, at in history.recommendations
                                   if at > now - downscale_window])
    history.recommendations[:] = [r for r in history.recommendations
                                  if r[1] > now - downscale_window]
    history.recommendations.append((proposal, now))
    able = (("ScaleDownStabilized", "recent recommendations were higher than current one, "
             "applying the highest recent recommendation") if stabilized != proposal else
            ("ReadyForNewScale", "recommended size matches current size"))
    ceiling = max(2 * current, 4)
    if maximum > ceiling:
        top, reason, message = ceiling, "ScaleUpLimit", (
            "the desired replica count is increasing faster than the maximum scale rate")
    else:
        top, reason, message = maximum, "TooManyReplicas", (
            "the desired replica count is more than the maximum replica count")
    if stabilized < minimum:
        return Outcome(minimum, able, (True, "TooFewReplicas",
                                       "the desired replica count is less than the minimum "
                                       "replica count"))
    if stabilized > top:
        return Outcome(top, able, (True, reason, message))
    return Outcome(stabilized, able, (False, "DesiredWithinRange",
                                      "the desired count is within the acceptable range"))
