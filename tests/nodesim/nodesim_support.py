"""Shared by the nodesim tests: nodesim's quick pod delays."""

from __future__ import annotations

from hack.nodesim import PodDelays

#: Pods that start, become ready and stop within a fraction of a second.
QUICK_DELAYS = PodDelays(pod_start=0.05, ready_delay=0.1, container_stop=0.05,
                         pod_termination=0.05)
