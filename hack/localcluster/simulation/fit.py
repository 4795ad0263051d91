"""Whether a pod fits a node, and the scheduler's message when it fits nowhere.

Pure functions over JSON objects: resource requests (limits stand in for absent requests,
init containers count by their maximum), node allocatable minus what bound pods use, node
selectors and required node affinity, taints and tolerations, cordoned nodes.
"""

from __future__ import annotations

import functools
import json
from collections import Counter
from collections.abc import Iterable
from fractions import Fraction
from typing import Any

from api.quantity import QuantityError, parse_quantity

Json = dict[str, Any]
Resources = dict[str, Fraction]


def _quantity(value: Any) -> Fraction:
    if isinstance(value, str):
        return _parsed(value)
    try:
        return parse_quantity(value)
    except QuantityError:
        return Fraction(0)


@functools.lru_cache(maxsize=4096)
def _parsed(text: str) -> Fraction:
    # The scheduler weighs every node for every pod; the same few strings recur endlessly.
    try:
        return parse_quantity(text)
    except QuantityError:
        return Fraction(0)


def container_requests(container: Json) -> Resources:
    res = container.get("resources") or {}
    requests = dict(res.get("requests") or {})
    for name, value in (res.get("limits") or {}).items():
        requests.setdefault(name, value)  # a limit without a request is the request
    return {k: _quantity(v) for k, v in requests.items()}


def pod_requests(pod: Json) -> Resources:
    spec = pod.get("spec") or {}
    total: Resources = {}
    for c in spec.get("containers") or ():
        for k, v in container_requests(c).items():
            total[k] = total.get(k, Fraction(0)) + v
    for c in spec.get("initContainers") or ():
        for k, v in container_requests(c).items():
            total[k] = max(total.get(k, Fraction(0)), v)
    for k, v in (spec.get("overhead") or {}).items():
        total[k] = total.get(k, Fraction(0)) + _quantity(v)
    return total


def allocatable(node: Json) -> Resources:
    return {k: _quantity(v) for k, v in ((node.get("status") or {}).get("allocatable")
                                        or {}).items()}


def usage(pods: Iterable[Json]) -> tuple[Resources, int]:
    """Summed requests of the pods bound to a node, and how many there are."""
    total: Resources = {}
    count = 0
    for pod in pods:
        count += 1
        for k, v in pod_requests(pod).items():
            total[k] = total.get(k, Fraction(0)) + v
    return total, count


def _tolerates(tolerations: list[Json], taint: Json) -> bool:
    for t in tolerations:
        if t.get("effect") and t.get("effect") != taint.get("effect"):
            continue
        op = t.get("operator", "Equal")
        if not t.get("key") and op == "Exists":
            return True
        if t.get("key") != taint.get("key"):
            continue
        if op == "Exists" or t.get("value", "") == taint.get("value", ""):
            return True
    return False


def _term_matches(term: Json, labels: dict[str, str]) -> bool:
    for expr in term.get("matchExpressions") or ():
        key, op = expr.get("key", ""), expr.get("operator")
        values = [str(v) for v in expr.get("values") or ()]
        have = labels.get(key)
        if op == "In" and have not in values:
            return False
        if op == "NotIn" and have in values:
            return False
        if op == "Exists" and have is None:
            return False
        if op == "DoesNotExist" and have is not None:
            return False
        if op in ("Gt", "Lt"):
            try:
                ok = int(have or "") > int(values[0]) if op == "Gt" else \
                    int(have or "") < int(values[0])
            except (ValueError, IndexError):
                return False
            if not ok:
                return False
    return True


def _affinity_matches(pod: Json, labels: dict[str, str]) -> bool:
    spec = pod.get("spec") or {}
    for k, v in (spec.get("nodeSelector") or {}).items():
        if labels.get(k) != v:
            return False
    required = (((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution") or {})
    terms = required.get("nodeSelectorTerms") or []
    return not terms or any(_term_matches(t, labels) for t in terms)


def misfit_reasons(pod: Json, node: Json, used: Resources, pod_count: int) -> list[str]:
    """Why `pod` cannot go to `node` (empty when it fits), in the scheduler's words."""
    return PodFit(pod).misfit(node, allocatable(node), used, pod_count)


_ZERO = Fraction(0)
_DEFAULT_PODS = Fraction(110)


class PodFit:
    """What the scheduler weighs of one pod, read once for every node it weighs the pod on:
    the scheduler tries each pending pod on every node, and reading its requests again per
    node cost more than the rest of the fit and the score together."""

    __slots__ = ("_pod", "_requests", "_scoring", "_tolerations", "key")

    def __init__(self, pod: Json) -> None:
        self._pod = pod
        self._tolerations: list[Json] = (pod.get("spec") or {}).get("tolerations") or []
        self._requests = [(name, want) for name, want in sorted(pod_requests(pod).items())
                          if want > 0]
        self._scoring = scoring_requests(pod)
        spec = pod.get("spec") or {}
        placement = [spec.get("nodeSelector"), (spec.get("affinity") or {}).get("nodeAffinity"),
                     self._tolerations]
        #: Equal for pods that fit and score the same on every node: all the fit reads of them.
        self.key: tuple[Any, ...] = (tuple(self._requests), tuple(sorted(self._scoring.items())),
                                     json.dumps(placement, sort_keys=True, default=str))

    def misfit(self, node: Json, free: Resources, used: Resources,
               pod_count: int) -> list[str]:
        """`misfit_reasons` on `node`, whose `allocatable` is `free`."""
        meta = node.get("metadata") or {}
        labels = meta.get("labels") or {}
        spec = node.get("spec") or {}
        if spec.get("unschedulable"):
            return ["node(s) were unschedulable"]
        if not _affinity_matches(self._pod, labels):
            return ["node(s) didn't match Pod's node affinity/selector"]
        for taint in spec.get("taints") or ():
            if taint.get("effect") in ("NoSchedule", "NoExecute") and not _tolerates(
                    self._tolerations, taint):
                return [f"node(s) had untolerated taint {{{taint.get('key')}: "
                        f"{taint.get('value', '')}}}"]
        reasons = []
        if pod_count + 1 > int(free.get("pods", _DEFAULT_PODS)):
            reasons.append("Too many pods")
        for name, want in self._requests:
            if used.get(name, _ZERO) + want > free.get(name, _ZERO):
                reasons.append(f"Insufficient {name}")
        return reasons

    def score(self, free: Resources, scored_use: Resources) -> Fraction:
        """`score` on a node whose `allocatable` is `free`."""
        want = self._scoring
        total = _ZERO
        for name in ("cpu", "memory", "nvidia.com/gpu"):
            cap = free.get(name, _ZERO)
            if cap > 0:
                total += (cap - scored_use.get(name, _ZERO) - want.get(name, _ZERO)) / cap
        return total


#: Filter failures besides resource shortage that the scheduler answers by looking for
#: victims (Unschedulable, not UnschedulableAndUnresolvable): the DynamicResources plugin's.
_PREEMPTABLE = frozenset({"Too many pods", "cannot allocate all claims",
                          "resourceclaim not available on the node"})


def unschedulable_message(node_count: int, reasons: Iterable[list[str]]) -> str:
    """`0/4 nodes are available: 4 Insufficient nvidia.com/gpu. preemption: ...`"""
    if node_count == 0:
        return "no nodes available to schedule pods"
    histogram: Counter[str] = Counter()
    preemption: Counter[str] = Counter()
    for per_node in reasons:
        histogram.update(per_node)
        # Evicting pods can only help where resources are short.
        helpful = all(r.startswith("Insufficient") or r in _PREEMPTABLE for r in per_node)
        preemption["No preemption victims found for incoming pod" if helpful
                   else "Preemption is not helpful for scheduling"] += 1
    parts = ", ".join(f"{n} {reason}" for reason, n in sorted(histogram.items()))
    tail = ", ".join(f"{n} {reason}" for reason, n in sorted(preemption.items()))
    return (f"0/{node_count} nodes are available: {parts}. preemption: 0/{node_count} nodes are"
            f" available: {tail}.")


def prefilter_message(node_count: int, reason: str) -> str:
    """The FitError of a pod a PreFilter plugin rejected for every node (preemption cannot
    help): `0/4 nodes are available: <reason>. preemption: 0/4 nodes are available: 4
    Preemption is not helpful for scheduling.`"""
    if node_count == 0:
        return "no nodes available to schedule pods"
    return (f"0/{node_count} nodes are available: {reason}. preemption: 0/{node_count} nodes"
            f" are available: {node_count} Preemption is not helpful for scheduling.")


#: What the scheduler's scoring assumes a container without requests uses, so such pods
#: spread out instead of piling onto one node.
_NON_ZERO = {"cpu": Fraction(1, 10), "memory": Fraction(200 * 1024 * 1024)}


def scoring_requests(pod: Json) -> Resources:
    want = pod_requests(pod)
    for name, default in _NON_ZERO.items():
        if not want.get(name):
            want[name] = default * max(1, len((pod.get("spec") or {}).get("containers") or ()))
    return want


def score(pod: Json, node: Json, scored_use: Resources) -> Fraction:
    """Least-allocated scoring: the share of cpu, memory and GPUs left after placing the pod
    (`scored_use`: the `scoring_requests` of the pods already there)."""
    return PodFit(pod).score(allocatable(node), scored_use)
