"""What a simulated Dynamo frontend can route to: worker generations and their serving pairs.

A Dynamo worker registers in a Dynamo namespace: its pod's `DYN_NAMESPACE`, plus
`-<DYN_NAMESPACE_WORKER_SUFFIX>` when that is set (a worker generation, the worker hash; see
`dynamo_namespace`). A frontend stays in the base namespace (`DYN_NAMESPACE_PREFIX`, else its
`DYN_NAMESPACE`) and sees every generation.

`frontend_view` answers, for one frontend pod, from the live pods of its graph (its Kubernetes
namespace and `nvidia.com/dynamo-graph-deployment-name`, or, without that label, the pods
whose `DYN_NAMESPACE` is the frontend's base):

- per Dynamo namespace (generation): the ready prefill, decode and aggregated workers, and the
  complete serving pairs: min(prefill, decode) plus aggregated workers. A worker is ready
  when its pod is Running, its Ready condition True and it is not terminating (a worker
  deregisters on SIGTERM);
- `misplaced`: worker pods of the graph registered where they must not be: outside the base
  and its generations, or in a generation other than their own `nvidia.com/dynamo-worker-hash`
  (the bare base being the unlabelled, legacy generation's), as a prefill of one generation
  must never pair with a decode of another;
- per generation `crossGenerationPairs`: the pairs that exist only thanks to misplaced workers
  (the pairs minus those of its own workers alone); any count above 0 is a broken isolation.

A worker's role comes from `nvidia.com/dynamo-component-type` (`prefill`, `decode`, `worker`)
and, for a `worker`, `nvidia.com/dynamo-sub-component-type` (`prefill`, `decode`); `worker`
without one is aggregated. Pure functions over pod JSON.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

Json = dict[str, Any]

GRAPH_LABEL = "nvidia.com/dynamo-graph-deployment-name"
COMPONENT_TYPE_LABEL = "nvidia.com/dynamo-component-type"
SUB_COMPONENT_TYPE_LABEL = "nvidia.com/dynamo-sub-component-type"
WORKER_HASH_LABEL = "nvidia.com/dynamo-worker-hash"
NAMESPACE_ENV = "DYN_NAMESPACE"
SUFFIX_ENV = "DYN_NAMESPACE_WORKER_SUFFIX"
PREFIX_ENV = "DYN_NAMESPACE_PREFIX"
#: The runtime's namespace when the pod names none.
DEFAULT_NAMESPACE = "dynamo"

PREFILL, DECODE, AGGREGATED = "prefill", "decode", "aggregated"
ROLES = (PREFILL, DECODE, AGGREGATED)


def pod_env(pod: Json) -> dict[str, str]:
    """The literal env of the pod's Dynamo container: the one serving the system or http port,
    else the first that sets DYN_NAMESPACE (values from references are not resolved)."""
    containers = list((pod.get("spec") or {}).get("containers") or ())
    served = [c for c in containers
              if any(p.get("name") in ("system", "http") for p in c.get("ports") or ())]
    named = [c for c in containers
             if any(e.get("name") == NAMESPACE_ENV for e in c.get("env") or ())]
    chosen = next(iter((*served, *named)), None)
    if chosen is None:
        return {}
    return {str(e.get("name")): str(e["value"]) for e in chosen.get("env") or ()
            if isinstance(e, dict) and "value" in e}


def dynamo_namespace(pod: Json) -> str:
    """The Dynamo namespace the pod's runtime registers in, as the runtime composes it."""
    env = pod_env(pod)
    namespace = env.get(NAMESPACE_ENV) or DEFAULT_NAMESPACE
    suffix = env.get(SUFFIX_ENV)
    return f"{namespace}-{suffix}" if suffix else namespace


def base_namespace(frontend: Json) -> str:
    """The namespace a frontend discovers workers under (it sees every generation of it)."""
    env = pod_env(frontend)
    return env.get(PREFIX_ENV) or env.get(NAMESPACE_ENV) or DEFAULT_NAMESPACE


def worker_role(pod: Json) -> str | None:
    """prefill, decode or aggregated; None for a pod that is no worker."""
    labels = _labels(pod)
    kind = labels.get(COMPONENT_TYPE_LABEL)
    if kind in (PREFILL, DECODE):
        return kind
    if kind != "worker":
        return None
    sub = labels.get(SUB_COMPONENT_TYPE_LABEL)
    return sub if sub in (PREFILL, DECODE) else AGGREGATED


def ready_worker(pod: Json) -> bool:
    """Running, Ready and not terminating: registered and routable."""
    if (pod.get("metadata") or {}).get("deletionTimestamp"):
        return False
    status = pod.get("status") or {}
    return status.get("phase") == "Running" and any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in status.get("conditions") or ())


def _labels(pod: Json) -> dict[str, str]:
    return dict((pod.get("metadata") or {}).get("labels") or {})


def _of_graph(frontend: Json, pod: Json, base: str) -> bool:
    graph = _labels(frontend).get(GRAPH_LABEL)
    if graph and _labels(pod).get(GRAPH_LABEL):
        return _labels(pod).get(GRAPH_LABEL) == graph
    return (pod_env(pod).get(NAMESPACE_ENV) or DEFAULT_NAMESPACE) == base


def _placement(pod: Json, base: str) -> tuple[str, bool]:
    """The pod's Dynamo namespace and whether it belongs there (base, or its generation)."""
    namespace = dynamo_namespace(pod)
    own = _labels(pod).get(WORKER_HASH_LABEL)
    if namespace == base:
        # The base is the legacy generation's: a labelled worker there pairs across versions.
        return namespace, own is None
    if not namespace.startswith(base + "-"):
        return namespace, False
    return namespace, own is None or namespace == f"{base}-{own}"


def _pairs(counts: dict[str, int]) -> int:
    return min(counts[PREFILL], counts[DECODE]) + counts[AGGREGATED]


def frontend_view(frontend: Json, pods: Iterable[Json]) -> Json:
    """The generations a frontend pod sees and their complete pairs (see the module)."""
    meta = frontend.get("metadata") or {}
    base = base_namespace(frontend)
    counts: dict[str, dict[str, int]] = {}
    native: dict[str, dict[str, int]] = {}
    names: dict[str, dict[str, list[str]]] = {}
    misplaced: list[Json] = []
    for pod in pods:
        pmeta = pod.get("metadata") or {}
        role = worker_role(pod)
        if role is None or pmeta.get("namespace") != meta.get("namespace") or not _of_graph(
                frontend, pod, base):
            continue
        namespace, placed = _placement(pod, base)
        ready = ready_worker(pod)
        if not placed and (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed"):
            misplaced.append({"pod": pmeta.get("name"), "role": role,
                              "dynamoNamespace": namespace, "ready": ready,
                              "workerHash": _labels(pod).get(WORKER_HASH_LABEL)})
        if not ready or not (namespace == base or namespace.startswith(base + "-")):
            continue  # not routable by this frontend
        counts.setdefault(namespace, dict.fromkeys(ROLES, 0))[role] += 1
        native.setdefault(namespace, dict.fromkeys(ROLES, 0))[role] += int(placed)
        names.setdefault(namespace, {r: [] for r in ROLES})[role].append(str(pmeta.get("name")))
    generations: Json = {}
    for namespace in sorted(counts):
        c = counts[namespace]
        pairs = _pairs(c)
        generations[namespace] = {
            "workerSuffix": namespace[len(base) + 1:] if namespace != base else "",
            **c, "pairs": pairs, "crossGenerationPairs": pairs - _pairs(native[namespace]),
            "pods": {r: sorted(n) for r, n in names[namespace].items()},
        }
    return {
        "frontend": meta.get("name"), "namespace": meta.get("namespace"),
        "graph": _labels(frontend).get(GRAPH_LABEL), "dynamoNamespace": base,
        "generations": generations,
        "pairs": sum(g["pairs"] for g in generations.values()),
        "crossGenerationPairs": sum(g["crossGenerationPairs"] for g in generations.values()),
        "misplaced": sorted(misplaced, key=lambda m: str(m["pod"])),
    }
