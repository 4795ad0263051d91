"""A component's replica counts as `v1beta1` reports them (`ComponentReplicaStatus`).

The readers of workloads build v1alpha1's shape (`componentName`, the workload's name, and
`componentNames`); the hub has the list alone (v1alpha1's `componentName` is its last entry),
and statuses are written in the hub's shape."""

from __future__ import annotations

from typing import Any

Json = dict[str, Any]

__all__ = ["on_hub"]


def on_hub(replica_status: Json) -> Json:
    """`replica_status` without `componentName`, its name in `componentNames` when that is
    missing."""
    out = {k: v for k, v in replica_status.items() if k != "componentName"}
    if "componentNames" not in out and "componentName" in replica_status:
        out["componentNames"] = [replica_status["componentName"]]
    return out
