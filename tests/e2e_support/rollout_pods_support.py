"""Hand-built pods for the rollout-invariant tests: worker and frontend pods shaped as the
operator shapes them."""

from __future__ import annotations

from typing import Any

Json = dict[str, Any]
NS, GRAPH = "default", "g"
BASE = f"{NS}-{GRAPH}"
A, B = "aaaa1111", "bbbb2222"
ROLES = {"P": "prefill", "D": "decode", "W": None}


def pod(name: str, component: str, generation: str | None, *, ready: bool = True,
        terminating: bool = False, phase: str = "Running", registers_in: str | None = None,
        kind: str = "worker") -> Json:
    """A worker pod as the operator shapes one (component P prefill, D decode, W aggregated)."""
    labels = {"nvidia.com/dynamo-graph-deployment-name": GRAPH,
              "nvidia.com/dynamo-component": component,
              "nvidia.com/dynamo-component-type": kind}
    if kind == "worker" and ROLES.get(component):
        labels["nvidia.com/dynamo-sub-component-type"] = str(ROLES[component])
    env = [{"name": "DYN_NAMESPACE", "value": BASE}]
    suffix = registers_in if registers_in is not None else generation
    if generation is not None:
        labels["nvidia.com/dynamo-worker-hash"] = generation
    if suffix:
        env.append({"name": "DYN_NAMESPACE_WORKER_SUFFIX", "value": suffix})
    meta: Json = {"name": name, "namespace": NS, "labels": labels}
    if terminating:
        meta["deletionTimestamp"] = "2025-01-01T00:00:00Z"
    return {"metadata": meta,
            "spec": {"containers": [{"name": "main", "env": env,
                                     "ports": [{"name": "system", "containerPort": 9090}]}]},
            "status": {"phase": phase, "conditions": [
                {"type": "Ready", "status": "True" if ready else "False"}]}}


def frontend() -> Json:
    p = pod("fe", "Frontend", None, kind="frontend")
    p["spec"]["containers"][0]["env"] = [{"name": "DYN_NAMESPACE_PREFIX", "value": BASE}]
    p["spec"]["containers"][0]["ports"] = [{"name": "http", "containerPort": 8000}]
    return p
