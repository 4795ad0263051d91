"""The DynamoGraphDeploymentScalingAdapter controller: an adapter's replicas drive its service.

HPA, KEDA, the Planner or `kubectl scale` write the adapter's `spec.replicas` through its scale
subresource; this controller writes that number into the graph's component, reading and
writing the graph as the hub (`v1beta1`) holds it, in the cache too:
`spec.components[<i>].replicas`, with a JSON patch guarded by a `test` of the component's name
at that index and of the old value, so a concurrent writer makes the patch fail instead of
being overwritten, and the failure is retried like any conflict. The adapter's status reports
the applied count, the label selector of the service's pods (HPA reads pod metrics through
it) and when the service was last scaled. Who wins when the graph was edited directly is
decided in `ownership`, from the adapter's status and the graph's managedFields: the graph is
patched under the field manager `FIELD_MANAGER`, so a value this controller wrote is told
from a hand edit even when the status write after it never landed.

Nothing here runs when nothing changed: an adapter whose graph or service is missing gets a
Ready=False condition and waits for the graph to appear (the graph watch wakes it), without
retries; status and events are written only on change.
"""

from __future__ import annotations

from typing import Any

import structlog

from api.convert import ConversionError, load
from api.errors import InvalidObject
from api.load import load_valid
from api.v1alpha1 import (
    DynamoGraphDeploymentScalingAdapter,
    DynamoGraphDeploymentServiceRef,
)
from api.v1beta1 import DynamoComponentDeploymentSharedSpec
from backends import constants
from controller.errors import ApiError, Conflict, NotFound, lost_race
from controller.handlers import Mapper
from controller.managed_fields import owners_of
from controller.manager import Manager
from controller.reconcile import Request, Result
from reconcilers.machinery import hub
from reconcilers.machinery.conditions import get_condition, now, set_condition
from reconcilers.machinery.context import OperatorContext
from reconcilers.machinery.resources import GRAPH_DEPLOYMENTS, SCALING_ADAPTERS
from reconcilers.machinery.status_writer import write_status
from reconcilers.scaling_adapter import ownership as ownership

Json = dict[str, Any]
log = structlog.get_logger("reconcilers.scaling_adapter")

#: The event source component (and the child writer's). The controller is named after
#: the kind (SCALING_ADAPTERS.kind), as the original's `Named(...)`: the `controller`
#: label of controller-runtime's metrics, the work queue's name, the logs' controller.
NAME = "dynamographdeploymentscalingadapter"
#: Event source of the adapter controller (as the original operator names it).
COMPONENT = "dgdscalingadapter"
#: Adapter informer index: "<namespace>/<graph name>" of the graph each adapter scales.
BY_GRAPH = "scaling-adapter-graph"
READY = "Ready"
#: The field manager of the adapter controller's writes of a graph's replicas: the graph's
#: managedFields then tell our own earlier write from a hand edit.
FIELD_MANAGER = "dynamo-operator-scaling-adapter"


def graph_of(adapter: Json) -> list[str]:
    """Index function: the graph an adapter points at (by dgdRef, so hand-made adapters
    without our labels are found too)."""
    ref = (adapter.get("spec") or {}).get("dgdRef") or {}
    name = ref.get("name")
    namespace = (adapter.get("metadata") or {}).get("namespace", "")
    return [f"{namespace}/{name}"] if isinstance(name, str) and name else []


def selector_of(graph: str, service: str) -> str:
    """The label selector of a graph service's pods, as the scale subresource reports it."""
    return f"{constants.LABEL_GRAPH_NAME}={graph},{constants.LABEL_COMPONENT}={service}"


def component_pointer(index: int) -> str:
    """JSON pointer of a component of a graph in the hub (v1beta1)."""
    return f"/spec/components/{index}"


class ScalingAdapterReconciler:
    """Reconciles one adapter per call; holds no state between calls."""

    def __init__(self, ctx: OperatorContext) -> None:
        self.client = ctx.client
        self.cache = ctx.cache
        self.events = ctx.recorder(COMPONENT)

    async def reconcile(self, request: Request) -> Result | None:
        adapter = await self.cache.get_or_none(SCALING_ADAPTERS, request.namespace, request.name)
        if adapter is None or adapter["metadata"].get("deletionTimestamp"):
            return None
        try:
            model = load_valid(DynamoGraphDeploymentScalingAdapter, adapter)
        except InvalidObject as err:
            # The schema should have stopped this; say so and wait for a new spec.
            await self._write_status(adapter, None, False, ownership.INVALID_SPEC,
                                     f"invalid {err.kind}: {err}")
            return None
        ref = model.spec.dgd_ref
        graph = await self.cache.get_or_none(GRAPH_DEPLOYMENTS, request.namespace, ref.name)
        if graph is None:
            await self._write_status(adapter, ref, False, ownership.DGD_NOT_FOUND,
                                     f"DynamoGraphDeployment {ref.name} not found")
            return None
        if graph["metadata"].get("deletionTimestamp"):
            return None  # a graph on its way out is not scaled any more
        if _service(graph, ref.service_name) is None:
            await self._write_status(adapter, ref, False, ownership.SERVICE_NOT_FOUND,
                                     f"service {ref.service_name} not found in "
                                     f"DynamoGraphDeployment {ref.name}")
            return None
        decision = _plan(adapter, graph, ref.service_name)
        if decision.action is ownership.Action.ADOPT:
            # The caches of adapters and graphs are fed by separate watches: right after our
            # own scale the adapter's new status may be seen before the graph's new replicas.
            # Only adopt what the API server confirms.
            adapter, graph = await self._live(adapter, graph)
            if _service(graph, ref.service_name) is None:
                return None  # the cache is behind a change that is on its way to us

            decision = _plan(adapter, graph, ref.service_name, live=True)
        if decision.action is ownership.Action.SCALE:
            await self._scale(adapter, graph, ref.service_name, decision)
        elif decision.action is ownership.Action.ADOPT:
            adapter = await self._adopt(adapter, decision)
        await self._write_status(adapter, ref, decision.ready, decision.reason, decision.message,
                                 replicas=decision.target,
                                 scaled=decision.action is ownership.Action.SCALE)
        return None

    # --- graph and adapter writes ----------------------------------------------------------

    async def _live(self, adapter: Json, graph: Json) -> tuple[Json, Json]:
        meta = adapter["metadata"]
        fresh_adapter = await self.client.get(SCALING_ADAPTERS, meta["namespace"], meta["name"])
        fresh_graph = await self.client.get(GRAPH_DEPLOYMENTS, meta["namespace"],
                                            graph["metadata"]["name"])
        return fresh_adapter, fresh_graph

    async def _scale(self, adapter: Json, graph: Json, service: str,
                     decision: ownership.Plan) -> None:
        """Write the target into the graph, unless the service's replicas moved meanwhile."""
        index = _component_index(graph, service)
        if index is None:  # checked by the caller on the same object
            raise Conflict(409, "Conflict", f"service {service} not found in the components "
                           f"of DynamoGraphDeployment {graph['metadata']['name']}")
        component = component_pointer(index)
        path = f"{component}/replicas"
        spec = graph["spec"]["components"][index]
        # The index is the cache's: the test of the name makes a reordered list a conflict.
        guards: list[Json] = [{"op": "test", "path": f"{component}/name", "value": service}]
        if "replicas" in spec:
            guards.append({"op": "test", "path": path, "value": spec["replicas"]})
            change: Json = {"op": "replace", "path": path, "value": decision.target}
        else:
            # Nothing to test when replicas is left out: guard with the graph's version.
            guards.append({"op": "test", "path": "/metadata/resourceVersion",
                           "value": graph["metadata"]["resourceVersion"]})
            change = {"op": "add", "path": path, "value": decision.target}
        meta = graph["metadata"]
        try:
            await self.client.patch(GRAPH_DEPLOYMENTS, meta["namespace"], meta["name"],
                                    [*guards, change], patch_type="json",
                                    field_manager=FIELD_MANAGER)
        except ApiError as err:
            _raise_if_lost_race(err)
            await self.events.warning(adapter, "UpdateFailed",
                                      f"Failed to update DGD {meta['name']}: {err.message}")
            raise
        await self.events.normal(adapter, "Scaled", f"Scaled service {service} from "
                                 f"{decision.current} to {decision.target} replicas")
        log.info("service scaled", graph=meta["name"], service=service, old=decision.current,
                 new=decision.target)

    async def _adopt(self, adapter: Json, decision: ownership.Plan) -> Json:
        """Take over a replica count set on the graph directly; returns the adapter as written."""
        meta = adapter["metadata"]
        desired = adapter["spec"]["replicas"]
        if desired != decision.target:
            try:
                adapter = await self.client.patch(SCALING_ADAPTERS, meta["namespace"],
                                                  meta["name"], [
                    {"op": "test", "path": "/spec/replicas", "value": desired},
                    {"op": "replace", "path": "/spec/replicas", "value": decision.target},
                ], patch_type="json")
            except ApiError as err:
                _raise_if_lost_race(err)
                raise
        await self.events.normal(adapter, "Synced", "Synced adapter from DGD manual edit: "
                                 f"replicas={decision.target}")
        return adapter

    async def _write_status(self, adapter: Json, ref: DynamoGraphDeploymentServiceRef | None,
                            ready: bool, reason: str,
                            message: str, *, replicas: int | None = None,
                            scaled: bool = False) -> None:
        """Write the status when it changed; a Ready reason that changes to a problem is also
        reported as a Warning event (once per transition, so an idle adapter writes nothing)."""
        meta = adapter["metadata"]
        old: Json = adapter.get("status") or {}
        status = dict(old)
        generation = meta.get("generation")
        if generation is not None:
            status["observedGeneration"] = generation
        if ref is not None:
            status["selector"] = selector_of(ref.name, ref.service_name)
        if replicas is not None:
            status["replicas"] = replicas
        if scaled:
            status["lastScaleTime"] = now()
        previous = get_condition(old.get("conditions"), READY)
        status["conditions"] = set_condition(list(old.get("conditions") or []), READY, ready,
                                             reason, message, generation)
        try:
            if await write_status(self.client, SCALING_ADAPTERS, adapter, status) is None:
                return
        except NotFound:
            return
        if not ready and (previous is None or previous.get("reason") != reason):
            await self.events.warning(adapter, reason, message)


def _component_index(graph: Json, name: str) -> int | None:
    """Where the graph's `spec.components` (the hub's list, keyed by name) holds `name`."""
    components = (graph.get("spec") or {}).get("components")
    if not isinstance(components, list):
        return None
    return next((i for i, c in enumerate(components)
                 if isinstance(c, dict) and c.get("name") == name), None)


def _service(graph: Json, service: str) -> Json | None:
    """The graph's component named `service` (the adapter's dgdRef.serviceName)."""
    index = _component_index(graph, service)
    return None if index is None else graph["spec"]["components"][index]


def _plan(adapter: Json, graph: Json, service: str, *, live: bool = False) -> ownership.Plan:
    """The decision for an adapter; `live`: the graph was read from the API server, with its
    managedFields (the cache drops them), so who wrote its replicas is known."""
    spec = _service(graph, service) or {}
    current = spec.get("replicas")
    try:
        layout = load(DynamoComponentDeploymentSharedSpec, spec).multinode
    except ConversionError:
        layout = None  # the graph's own controller reports a bad component spec
    # As backends.multinode.node_count: an empty multinode section means 2 nodes.
    count = None if layout is None else layout.node_count
    multinode = layout is not None and (2 if count is None else count) > 1
    applied = (adapter.get("status") or {}).get("replicas")
    return ownership.plan(
        desired=int(adapter["spec"]["replicas"]),
        applied=applied if isinstance(applied, int) else None,
        current=current if isinstance(current, int) else ownership.DEFAULT_REPLICAS,
        service=service, multinode=multinode,
        # Written at v1alpha1 (before the hub was stored) or at v1beta1 (the patch above).
        written_by_us=live and FIELD_MANAGER in owners_of(
            graph, ("spec", "services", service, "replicas"),
            ("spec", "components", {"name": service}, "replicas")))


def _raise_if_lost_race(err: ApiError) -> None:
    """A failed `test` operation (422) means another writer got there first, and a 404 that
    the object went away meanwhile: both are conflicts, retried with backoff by the controller
    (the next look sees the new state) and not counted as errors."""
    conflict = lost_race(err)
    if conflict is not None:
        raise conflict


def register(manager: Manager, ctx: OperatorContext) -> None:
    """Add the adapter controller: woken by adapters and by the graphs they point at."""
    hub.require_views(manager.cache, GRAPH_DEPLOYMENTS)
    adapters = manager.cache.informer(SCALING_ADAPTERS, indexers={BY_GRAPH: graph_of})

    def adapters_of_graph(graph: Json) -> list[Request]:
        """Every adapter that points at the graph of an event."""
        meta = graph.get("metadata") or {}
        key = f"{meta.get('namespace', '')}/{meta.get('name', '')}"
        return [Request(a["metadata"]["namespace"], a["metadata"]["name"])
                for a in adapters.store.by_index(BY_GRAPH, key)]

    mapper: Mapper = adapters_of_graph
    manager.add_controller(SCALING_ADAPTERS.kind, ScalingAdapterReconciler(ctx).reconcile,
                           for_=SCALING_ADAPTERS, watches=[(GRAPH_DEPLOYMENTS, mapper)],
                           max_concurrent_reconciles=ctx.max_concurrent_reconciles(NAME))
