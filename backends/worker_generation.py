"""Worker generations: which worker DCDs a graph should have, under which names.

The worker components (`worker`, `prefill`, `decode`) of the DCD path that run on one node
each are rolled out together, by generation, as the original operator does
(`upstream/concepts__system-architecture__rolling-updates.md`):

- `worker_hash` is the generation of the graph's workers as it stands: eight hex digits of a
  SHA-256 over what the graph states of its hashed workers (`hashed_workers`: the rolled ones,
  or every worker under `PROVIDER_GENERATION`), its env and backend framework, without their
  replica counts or scaling adapters, so scaling never starts a generation, nor a new
  operator version that renders differently;
- a generation's DCDs are named `<graph>-<component>-<hash>`, carry the
  `nvidia.com/dynamo-worker-hash` label (which reaches their pods) and register their workers in
  the Dynamo namespace `<base>-<hash>` (`DYN_NAMESPACE_WORKER_SUFFIX`); the frontend gets
  `DYN_NAMESPACE_PREFIX=<base>` and sees every generation;
- DCDs made before generations existed (`<graph>-<component>`, no label) are the legacy
  generation (`LEGACY`): adopted as they are while the workers do not change.

Where Grove (the whole graph) or LeaderWorkerSet (a multinode worker of the DCD path) replaces
the pods, the templates are updated in place: for graphs created at or after the origin gate
`PROVIDER_GENERATION` (`backends.origin_gates`), they carry the generation too, as the
original's do (`in_place_generation`: the label on each worker clique or multinode worker DCD,
the suffix in its `main`, the prefix in the frontend's), and the hash covers every worker, as
the original's does, so that the single-node and multinode workers of a graph register in one
namespace. Older and unstamped graphs render as before (no label, no suffix; the hash of the
rolled workers), so an operator upgrade restarts none of their pods.

A `WorkerPlan` says, per rolled worker, which DCDs to write: the target generation rendered
from the graph (with a replica count the rollout chose), and older generations kept as they are
with only their replicas set. The rollout (reconcilers.graph.rollout) makes the plan from what
runs; `fresh_plan` is that of a graph with nothing running.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from api.conversion import HUB
from api.conversion.written_inputs import with_component_inputs
from api.convert import dump
from api.origin_version import OriginVersion, origin_version
from backends import constants
from backends.hub_graph import HubGraph
from backends.multinode import node_count
from backends.origin_gates import OriginGate

Json = dict[str, Any]

__all__ = [
    "HASH_VERSION",
    "LEGACY",
    "PROVIDER_GENERATION",
    "WorkerDCD",
    "WorkerPlan",
    "fresh_plan",
    "generation_env",
    "graph_workers",
    "hashed_workers",
    "in_place_generation",
    "legacy_plan",
    "provider_generations",
    "rolled_workers",
    "worker_dcd_name",
    "worker_hash",
]

#: Part of every hash: a change of what the hash covers must change this, not old hashes.
HASH_VERSION = "dynamo-operator-worker-generation-v1"
#: The generation of worker DCDs made before generations existed: no suffix, no label.
LEGACY = ""
#: Grove cliques and multinode workers' LeaderWorkerSet templates carry the generation, and
#: the hash covers every worker. Above 0.2.0: builds of 0.2.0 before this rendering stamp
#: 0.2.0 too, and taking their graphs over must restart none of their pods.
PROVIDER_GENERATION = OriginGate("ProviderWorkerGeneration", OriginVersion((0, 3, 0)))


def rolled_workers(graph: HubGraph) -> list[str]:
    """The components rolled out by generation, in name order: the worker types that run on
    one node (multinode workers roll inside their LeaderWorkerSet)."""
    return [name for name, spec in graph.components()
            if graph.component_type(name) in constants.WORKER_TYPES and node_count(spec) <= 1]


def graph_workers(graph: HubGraph) -> list[str]:
    """Every worker component, in name order: what Grove replaces on its path, and what the
    revision history of a Grove graph covers."""
    return [name for name, _ in graph.components()
            if graph.component_type(name) in constants.WORKER_TYPES]


def provider_generations(graph: HubGraph) -> bool:
    """Whether the graph's origin version is at or above `PROVIDER_GENERATION`."""
    annotations = graph.model.metadata.get("annotations") or {}
    return PROVIDER_GENERATION.enabled(origin_version(annotations))


def hashed_workers(graph: HubGraph) -> list[str]:
    """The workers the graph's generation hashes: every worker for a graph the
    `PROVIDER_GENERATION` gate covers (as the original), else the rolled ones."""
    return graph_workers(graph) if provider_generations(graph) else rolled_workers(graph)


def in_place_generation(graph: HubGraph) -> str:
    """The generation the templates Grove or LeaderWorkerSet update in place carry (the
    graph's `worker_hash`); LEGACY (none) for a graph the gate does not cover, or without
    workers."""
    if not provider_generations(graph) or not graph_workers(graph):
        return LEGACY
    return worker_hash(graph)


def generation_env(component_type: str | None, dynamo_namespace: str, generation: str,
                   namespace_prefix: bool) -> list[Json]:
    """`main`'s variables for a generation: a worker's suffix (its Dynamo namespace is
    `<base>-<generation>`), or the frontend's prefix (it discovers every generation)."""
    if generation:
        return [{"name": constants.ENV_WORKER_SUFFIX, "value": generation}]
    if namespace_prefix and component_type == constants.FRONTEND:
        return [{"name": constants.ENV_NAMESPACE_PREFIX, "value": dynamo_namespace}]
    return []


def worker_dcd_name(graph: str, service: str, generation: str) -> str:
    """`<graph>-<component>-<hash>`, lowercased; the legacy generation keeps the plain name."""
    base = f"{graph}-{service.lower()}"
    return f"{base}-{generation}" if generation else base


def worker_hash(graph: HubGraph, workers: list[str] | None = None) -> str:
    """The generation of the graph's workers: a hash of what the user states of them (each
    hashed worker's component without its replicas and scaling adapter, in both versions'
    terms, the graph's env and backend), so that neither scaling nor a new operator version
    that renders differently starts a generation. `workers`: other components than the
    hashed ones (`hashed_workers`)."""
    names = hashed_workers(graph) if workers is None else workers
    key = ("worker_hash", tuple(names))
    known = graph.derived.get(key)
    if known is None:
        known = graph.derived[key] = _hash(graph, names)
    return str(known)


def _hash(graph: HubGraph, names: list[str]) -> str:
    spec = graph.model.spec
    basis = {
        "version": HASH_VERSION,
        "backendFramework": spec.backend_framework,
        "env": spec.env or [],
        "workers": {name: _stated(graph, name) for name in names},
    }
    text = json.dumps(basis, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:8]


def _stated(graph: HubGraph, service: str) -> Json:
    component = dump(dict(graph.components())[service])
    for scaling in ("replicas", "scalingAdapter"):
        component.pop(scaling, None)
    inputs = graph.inputs.component(service).replace(
        scaling_adapter=None, scaling_adapter_enabled=None, autoscaling=None)
    # What only v1alpha1 states, as conversion writes it down.
    written = with_component_inputs({"apiVersion": HUB, "kind": "DynamoComponentDeployment",
                                     "metadata": {}, "spec": {}}, inputs)
    return {"component": component, "inputs": written.get("metadata") or {}}


@dataclass(frozen=True)
class WorkerDCD:
    """One DCD of a rolled worker: its generation, and the replicas to write (None: the
    graph's own count). Only the target is rendered from the graph; any other generation's
    DCD is kept as it is, with only its replicas written."""

    generation: str
    replicas: int | None = None
    target: bool = True


@dataclass(frozen=True)
class WorkerPlan:
    """The DCDs of every rolled worker, and whether the frontend must look beyond the base
    Dynamo namespace (any generation but the legacy one runs)."""

    dcds: Mapping[str, tuple[WorkerDCD, ...]] = field(default_factory=dict)
    frontend_prefix: bool = True

    def target(self, service: str) -> WorkerDCD | None:
        """The DCD of the service rendered from the graph, if any."""
        return next((d for d in self.dcds.get(service, ()) if d.target), None)


def fresh_plan(graph: HubGraph, generation: str) -> WorkerPlan:
    """A graph with nothing running: each rolled worker at the graph's count, in `generation`."""
    return WorkerPlan({name: (WorkerDCD(generation),) for name in rolled_workers(graph)})


def legacy_plan(graph: HubGraph) -> WorkerPlan:
    """The graph as operators before generations wrote it: every worker in the legacy
    generation, the frontend in its base namespace alone."""
    return WorkerPlan({name: (WorkerDCD(LEGACY),) for name in rolled_workers(graph)},
                      frontend_prefix=False)
