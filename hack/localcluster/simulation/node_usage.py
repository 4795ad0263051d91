"""What the active pods bound to each node request, kept as running sums for the scheduler.

The scheduler feeds it every pod change; a pod's requests are parsed once (again only when
its containers or overhead change) and added to or taken from its node's sums. Quantities
are exact fractions, so the sums equal a fresh `fit.usage` over the node's pods.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from .fit import Resources, pod_requests, scoring_requests
from .objects import pod_active

Json = dict[str, Any]
ObjectKey = tuple[str, str]


@dataclass(frozen=True)
class _Share:
    """One bound pod's part of its node's sums, and what it was computed from."""

    node: str
    source: tuple[Any, Any, Any]
    requests: Resources
    scoring: Resources


def _source(pod: Json) -> tuple[Any, Any, Any]:
    spec = pod.get("spec") or {}
    return (spec.get("containers"), spec.get("initContainers"), spec.get("overhead"))


def _add(total: Resources, part: Resources, sign: int) -> None:
    for k, v in part.items():
        left = total.get(k, Fraction(0)) + sign * v
        if left:
            total[k] = left
        else:
            total.pop(k, None)


class NodeUsage:
    """Per node: the summed requests, scoring requests and count of its active pods."""

    def __init__(self) -> None:
        self._shares: dict[ObjectKey, _Share] = {}
        self._requests: dict[str, Resources] = {}
        self._scoring: dict[str, Resources] = {}
        self._count: dict[str, int] = {}
        #: Per node, how many times its sums changed: what the scheduler found weighing a
        #: node for a pod holds as long as this and the node object stay the same.
        self._versions: dict[str, int] = {}

    def observe(self, key: ObjectKey, pod: Json | None) -> None:
        """Account for the pod at `key` now being `pod` (None: deleted)."""
        node = (pod.get("spec") or {}).get("nodeName") if pod is not None else None
        current = self._shares.get(key)
        if pod is None or not node or not pod_active(pod):
            if current is not None:
                self._take(key, current)
            return
        source = _source(pod)
        if current is not None:
            if current.node == node and current.source == source:
                return
            self._take(key, current)
        share = _Share(node, source, pod_requests(pod), scoring_requests(pod))
        self._shares[key] = share
        _add(self._requests.setdefault(node, {}), share.requests, 1)
        _add(self._scoring.setdefault(node, {}), share.scoring, 1)
        self._count[node] = self._count.get(node, 0) + 1
        self._versions[node] = self._versions.get(node, 0) + 1

    def _take(self, key: ObjectKey, share: _Share) -> None:
        del self._shares[key]
        _add(self._requests[share.node], share.requests, -1)
        _add(self._scoring[share.node], share.scoring, -1)
        self._count[share.node] -= 1
        self._versions[share.node] = self._versions.get(share.node, 0) + 1

    def used(self, node: str) -> tuple[Resources, int]:
        """Like `fit.usage` of the node's active pods: summed requests and pod count."""
        return dict(self._requests.get(node, {})), self._count.get(node, 0)

    def scored(self, node: str) -> Resources:
        """The summed `scoring_requests` of the node's active pods."""
        return dict(self._scoring.get(node, {}))

    def version(self, node: str) -> int:
        """Changes so far to the node's sums (any pod bound there coming or going)."""
        return self._versions.get(node, 0)
