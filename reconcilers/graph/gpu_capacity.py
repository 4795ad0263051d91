"""A graph's GPUs: what `status.gpus` counts, and the early `insufficient_capacity`.

`status.gpus` (the GPUS column of `kubectl get dgd -o wide`, the metric
`dynamo_operator_graph_gpus`) counts what the graph's pods take at its desired replicas,
multinode pods and DRA claims included (`backends.gpu_demand`, `backends.dra_demand`), plus,
while a worker rollout holds two generations, each rolled component's surge (`min(desired,
maxSurge)` replicas more; none with Recreate); and what its ready replicas take, those of every
generation during a rollout (each counted with the graph's current spec).

A pending graph whose remaining GPUs cannot fit gets the Ready reason `insufficient_capacity`
with the numbers, as soon as the operator can tell, before its pods sit Pending: per pool (an
extended resource or a DRA device class), what the graph needs (its desired replicas, plus the
surge of a rollout that cannot go on without it, maxUnavailable 0) less what its pods hold (the
extended resources of those bound to a node, the devices of the claims reserved for them),
against what the cluster has free (`gpu_supply`); or one pod asking more than the largest node
has. The numbers are in the message, which, as any message of a pending graph,
is not rewritten while only they move: the warning is written once, and goes when capacity
appears or the pods are placed (GPU pods, nodes and DRA objects wake the graphs that carry
it). A cluster-wide operator only: a namespace-restricted one cannot read nodes.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any

from backends.dra_demand import (
    ClaimContext,
    Pools,
    add_pools,
    gpu_class,
    is_device_class,
)
from backends.gpu_demand import gms_device_classes, pod_pools, replica_gpus
from controller.cache import Cache
from controller.controller import Controller
from controller.handlers import Predicate
from controller.manager import Manager
from controller.reconcile import Request
from reconcilers.graph.gpu_supply import (
    GPU_POD_INDEX,
    ClusterGpus,
    GpuLedger,
    finished,
    gpu_pod_keys,
    has_gpus,
    reserved_devices,
)
from reconcilers.graph.rollout import Rollout
from reconcilers.graph.status import (
    INSUFFICIENT_CAPACITY,
    NOT_READY,
    PENDING,
    READY,
    ROLLING_UPDATE,
    Verdict,
    graph_gpus,
)
from reconcilers.machinery.conditions import get_condition
from reconcilers.machinery.context import OperatorContext
from reconcilers.machinery.resources import (
    DEVICE_CLASSES,
    GRAPH_DEPLOYMENTS,
    NODES,
    PODS,
    RESOURCE_CLAIM_TEMPLATES,
    RESOURCE_CLAIMS,
    RESOURCE_SLICES,
)

Json = dict[str, Any]

__all__ = ["GraphGpus", "held_gpus", "shortfalls", "surge_replicas", "watch_gpus"]

#: Ready reasons the early warning may take the place of: a graph on its way, or one whose
#: pods already wait for capacity (the numbers join the scheduler's words).
_WARNABLE = frozenset({NOT_READY, ROLLING_UPDATE, INSUFFICIENT_CAPACITY})
WARNED_INDEX = "gpu-capacity-warned"
TEMPLATE_INDEX = "gpu-claim-templates"


def surge_replicas(rollout: Rollout | None, required: bool = False) -> dict[str, int]:
    """Extra replicas per rolled component while a rollout holds old generations; `required`:
    only those of components that cannot roll without them (maxUnavailable 0)."""
    if rollout is None or not rollout.step.rolling:
        return {}
    return {name: min(s.desired, s.budget.surge) for name, s in rollout.services.items()
            if not s.budget.recreate and (not required or s.budget.unavailable == 0)}


def held_gpus(bound_pods: Iterable[Json], claims: Iterable[Json], pods: Collection[str],
              context: ClaimContext) -> Pools:
    """What a graph's pods hold: the extended resources of those bound to a node, and the GPU
    devices of the claims reserved for any of them (`pods`, their names)."""
    held: Pools = {}
    for pod in bound_pods:
        add_pools(held, pod_pools(pod.get("spec") or {}))
    return add_pools(held, reserved_devices(claims, pods, context.is_gpu))


def shortfalls(graph: Json, context: ClaimContext, held: Mapping[str, int],
               surge: Mapping[str, int], cluster: ClusterGpus) -> list[str]:
    """What of the graph's GPUs cannot fit, in words, given what its pods hold (`held_gpus`);
    empty when nothing is known not to."""
    per_replica = replica_gpus(graph, context)
    desired = {str(c.get("name", "")): c.get("replicas", 1)
               for c in (graph.get("spec") or {}).get("components") or [] if isinstance(c, dict)}
    wanted: Pools = {}
    shared: dict[str, Mapping[str, int]] = {}
    counts = {}
    for name, gpus in per_replica.items():
        replicas = desired.get(name)
        counts[name] = (replicas if isinstance(replicas, int) and replicas > 0 else 0) + (
            surge.get(name, 0))
        add_pools(wanted, gpus.pools(), counts[name])
        if counts[name]:
            shared.update(gpus.shared)
    for pools in shared.values():
        add_pools(wanted, pools)
    out = []
    for pool in sorted(wanted):
        need = wanted[pool] - held.get(pool, 0)
        supply = cluster.supply(pool) if need > 0 else None
        if supply is None:
            continue
        label = f"DRA device class {pool}" if is_device_class(pool) else pool
        asked = f"needs {wanted[pool]} GPUs ({label})"
        if held.get(pool):
            asked += f", its pods hold {held[pool]}"
        if not supply.exists:
            out.append(f"{asked}, which no DeviceClass defines")
            continue
        if need > supply.free:
            unit = "devices" if is_device_class(pool) else "allocatable"
            out.append(f"{asked}, {supply.free} free of {supply.allocatable} {unit}")
            continue
        big = [(gpus.largest_pod(pool), name) for name, gpus in sorted(per_replica.items())
               if counts[name] and gpus.largest_pod(pool) > supply.largest]
        if big:
            size, name = max(big)
            out.append(f"a {name} pod needs {size} GPUs ({label}), the most one node has is "
                       f"{supply.largest}")
    return out


class GraphGpus:
    """Counts a graph's GPUs and says when they cannot fit, from the shared cache (and the
    ledger of what pods use per node that `watch_gpus` keeps)."""

    def __init__(self, ctx: OperatorContext) -> None:
        self.ctx = ctx
        self.ledger: GpuLedger | None = None

    @property
    def cluster_wide(self) -> bool:
        return self.ctx.namespace is None

    def cluster(self) -> ClusterGpus | None:
        """The cluster's GPUs as cached now; None when the operator cannot read nodes."""
        if not self.cluster_wide or self.ledger is None:
            return None
        cache, dra = self.ctx.cache, self.ctx.settings.dra_enabled
        return ClusterGpus(
            self.ledger,
            slices=_store(cache, RESOURCE_SLICES) if dra else list,
            claims=_store(cache, RESOURCE_CLAIMS) if dra else list,
            classes=_store(cache, DEVICE_CLASSES) if dra else list)

    async def claims(self, live: Json, pods: Iterable[Json] = (),
                     cluster: ClusterGpus | None = None) -> ClaimContext:
        """What counting the claims of the graph (and of its `pods`) needs."""
        named = gms_device_classes(live)
        if not self.ctx.settings.dra_enabled:
            return ClaimContext(is_gpu=lambda name: gpu_class(name, None, named))
        namespace = live["metadata"].get("namespace", "")
        specs = [*_pod_specs(live), *((p.get("spec") or {}) for p in pods)]
        templates: dict[str, Json] = {}
        claims: dict[str, Json] = {}
        for spec in specs:
            for entry in spec.get("resourceClaims") or ():
                template = entry.get("resourceClaimTemplateName")
                if template and template not in templates:
                    obj = await self.ctx.cache.get_or_none(RESOURCE_CLAIM_TEMPLATES, namespace,
                                                           template)
                    if obj is not None:
                        templates[template] = (obj.get("spec") or {}).get("spec") or {}
                claim = entry.get("resourceClaimName")
                if claim and claim not in claims and self.cluster_wide:
                    obj = await self.ctx.cache.get_or_none(RESOURCE_CLAIMS, namespace, claim)
                    if obj is not None:
                        claims[claim] = obj.get("spec") or {}
        if cluster is None:
            return ClaimContext(templates, claims,
                                is_gpu=lambda name: gpu_class(name, None, named))
        return ClaimContext(
            templates, claims,
            is_gpu=lambda name: gpu_class(name, cluster.classes.get(name), named),
            all_devices=cluster.most_devices)

    async def status(self, live: Json, readiness: Iterable[Any],
                     rollout: Rollout | None) -> Json:
        """`status.gpus` of the graph now."""
        cluster = self.cluster()
        context = await self.claims(live, cluster=cluster)
        # While a rollout runs, a service reports its target generation; its GPUs run in all.
        rolling = rollout is not None and rollout.step.rolling
        ready = {name: sum(g.ready for g in state.generations.values())
                 for name, state in (rollout.services if rollout and rolling else {}).items()}
        return graph_gpus(live, readiness, context, surge_replicas(rollout), ready)

    async def check(self, live: Json, verdict: Verdict, rollout: Rollout | None) -> Verdict:
        """`verdict`, or `insufficient_capacity` with the numbers when the graph's remaining
        GPUs cannot fit."""
        if verdict.state != PENDING or verdict.reason not in _WARNABLE:
            return verdict
        cluster = self.cluster()
        if cluster is None:
            return verdict
        meta = live["metadata"]
        namespace = meta.get("namespace", "")
        pods = [p for p in await self.ctx.cache.by_index(
            PODS, GPU_POD_INDEX, f"graph/{namespace}/{meta['name']}") if not finished(p)]
        bound = [p for p in pods if (p.get("spec") or {}).get("nodeName")]
        context = await self.claims(live, pods, cluster)
        claims = ([c for c in cluster.claims if c["metadata"].get("namespace") == namespace]
                  if any((p.get("spec") or {}).get("resourceClaims") for p in pods) else [])
        held = held_gpus(bound, claims, {p["metadata"]["name"] for p in pods}, context)
        missing = shortfalls(live, context, held, surge_replicas(rollout, required=True),
                             cluster)
        if not missing:
            return verdict
        return Verdict(PENDING, INSUFFICIENT_CAPACITY,
                       f"Not enough GPUs: {'; '.join(missing)}. {verdict.message}")


def _pod_specs(graph: Json) -> list[Json]:
    out = []
    for component in (graph.get("spec") or {}).get("components") or ():
        if not isinstance(component, dict):
            continue
        templates = [component.get("podTemplate"),
                     *((r or {}).get("podTemplate") for r in component.get("roles") or ())]
        out += [t["spec"] for t in templates
                if isinstance(t, dict) and isinstance(t.get("spec"), dict)]
    return out


def _store(cache: Cache, resource: Any) -> Callable[[], list[Json]]:
    informer = cache.informer(resource)
    return lambda: informer.store.list()


# --- what wakes a graph ------------------------------------------------------------------------

def _warned(graph: Json) -> list[str]:
    ready = get_condition((graph.get("status") or {}).get("conditions"), READY) or {}
    return ["warned"] if ready.get("reason") == INSUFFICIENT_CAPACITY else []


def _templates_named(graph: Json) -> list[str]:
    namespace = graph["metadata"].get("namespace", "")
    return sorted({f"{namespace}/{entry['resourceClaimTemplateName']}"
                   for spec in _pod_specs(graph) for entry in spec.get("resourceClaims") or ()
                   if isinstance(entry, dict) and entry.get("resourceClaimTemplateName")})


def _gpu_state(pod: Json) -> tuple[object, ...]:
    spec = pod.get("spec") or {}
    return (spec.get("nodeName"), finished(pod), has_gpus(pod))


#: A pod matters to capacity when it is bound, finishes or goes (its creation holds nothing).
_POD_CHANGES = Predicate(create=False, update=lambda old, new: _gpu_state(old) != _gpu_state(new))
#: Trimmed nodes and DRA objects matter whenever what is kept of them changes.
_KEPT_CHANGES = Predicate(update=lambda old, new: old != new)


def watch_gpus(manager: Manager, ctx: OperatorContext, controller: Controller,
               gpus: GraphGpus) -> None:
    """Index and tally what counting needs (`gpus` gets the ledger), and wake the graphs it
    concerns: those carrying the warning on changes of GPU pods, nodes and DRA objects
    (cluster-wide), those naming a claim template on its changes."""
    cache = manager.cache
    graphs = cache.informer(GRAPH_DEPLOYMENTS, indexers={WARNED_INDEX: _warned,
                                                         TEMPLATE_INDEX: _templates_named})

    def warned(obj: Json) -> list[Request]:
        return [Request(g["metadata"].get("namespace", ""), g["metadata"]["name"])
                for g in graphs.store.by_index(WARNED_INDEX, "warned")]

    def gpu_pod(pod: Json) -> list[Request]:
        return warned(pod) if has_gpus(pod) else []

    def naming(template: Json) -> list[Request]:
        meta = template.get("metadata") or {}
        key = f"{meta.get('namespace', '')}/{meta.get('name', '')}"
        return [Request(g["metadata"].get("namespace", ""), g["metadata"]["name"])
                for g in graphs.store.by_index(TEMPLATE_INDEX, key)]

    dra = ctx.settings.dra_enabled
    if dra:
        controller.watch(cache.informer(RESOURCE_CLAIM_TEMPLATES), naming)
    if ctx.namespace is not None:
        return
    pods = cache.informer(PODS, indexers={GPU_POD_INDEX: gpu_pod_keys})
    nodes = cache.informer(NODES)
    gpus.ledger = GpuLedger()
    nodes.add_handler(gpus.ledger.node_handler())
    pods.add_handler(gpus.ledger.pod_handler())
    controller.watch(pods, gpu_pod, _POD_CHANGES)
    for resource in (NODES, *((RESOURCE_SLICES, RESOURCE_CLAIMS, DEVICE_CLASSES) if dra
                              else ())):
        controller.watch(cache.informer(resource), warned, _KEPT_CHANGES)
