"""The Grove path of a graph: one PodCliqueSet `<graph>` plus the Services, Ingresses and model
Services its frontends need.

Restart tokens ride on the cliques' annotations (Grove passes them to the pods). Replicas of
existing cliques belong to whoever scales them, as in Grove itself: the graph's replicas reach
them through the scale subresource of PodClique (single-node) or PodCliqueScalingGroup
(multinode) `<graph>-0-<service>`, written only when they differ.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from api.v1alpha1 import DynamoGraphDeployment
from backends import constants
from backends.grove import grove_objects
from backends.multinode import node_count
from controller.errors import NotFound
from controller.resource import Resource
from reconcilers.graph.children import not_owned, prune
from reconcilers.graph.readiness import ServiceReadiness, clique_readiness
from reconcilers.machinery.children import ChildWriter, Outcome, is_owned_by
from reconcilers.machinery.context import OperatorContext
from reconcilers.machinery.resources import (
    INGRESSES,
    POD_CLIQUE_SCALING_GROUPS,
    POD_CLIQUE_SETS,
    POD_CLIQUES,
    SERVICES,
    VIRTUAL_SERVICES,
)

Json = dict[str, Any]

_RESOURCES = {r.kind: r for r in (POD_CLIQUE_SETS, SERVICES, INGRESSES, VIRTUAL_SERVICES)}


def exposure_resources(ctx: OperatorContext) -> list[Resource]:
    """Kinds the Grove path may create beside the PodCliqueSet (pruned on either path)."""
    kinds = [SERVICES, INGRESSES]
    if ctx.settings.virtual_service_gateway:
        kinds.append(VIRTUAL_SERVICES)
    return kinds


class GrovePath:
    """The Grove objects of one graph, for one reconcile."""

    def __init__(self, ctx: OperatorContext, writer: ChildWriter, live: Json,
                 dgd: DynamoGraphDeployment) -> None:
        self.ctx = ctx
        self.writer = writer
        self.live = live
        self.dgd = dgd
        self.namespace = str(live["metadata"]["namespace"])
        self.graph = str(live["metadata"]["name"])
        self.services = dgd.spec.services or {}

    async def _get(self, resource: Resource, name: str) -> Json | None:
        try:
            return await self.ctx.cache.get(resource, self.namespace, name)
        except NotFound:
            return None

    async def _clique_set(self) -> Json | None:
        pcs = await self._get(POD_CLIQUE_SETS, self.graph)
        return pcs if pcs is not None and is_owned_by(pcs, self.live) else None

    async def observe(self) -> tuple[dict[str, str | None], list[ServiceReadiness]]:
        pcs = await self._clique_set()
        tokens: dict[str, str | None] = {}
        if pcs is not None:
            for clique in _cliques(pcs):
                service = (clique.get("labels") or {}).get(constants.LABEL_COMPONENT)
                if service in self.services and service not in tokens:
                    token = (clique.get("annotations") or {}).get(constants.ANNOTATION_RESTART_AT)
                    tokens[service] = str(token) if token else None
        return tokens, await self._readiness(pcs)

    async def apply(self, tokens: Mapping[str, str | None]) -> list[ServiceReadiness]:
        objects = grove_objects(self.dgd, self.ctx.settings)
        pcs_live: Json | None = None
        kept: dict[str, set[str]] = {}
        for obj in objects:
            if obj["kind"] == "PodCliqueSet":
                _set_tokens(obj, tokens)
            resource = _RESOURCES[obj["kind"]]
            name = obj["metadata"]["name"]
            kept.setdefault(resource.kind, set()).add(name)
            applied = await self.writer.apply(self.live, resource, obj)
            if applied.outcome is Outcome.NOT_OWNED:
                if name.startswith("dynamo-model-"):
                    continue  # model Services are shared by the graphs serving a model
                raise not_owned(resource.kind, name)
            if resource is POD_CLIQUE_SETS:
                pcs_live = applied.live
        for resource in exposure_resources(self.ctx):
            await prune(self.ctx, self.writer, self.live, resource, kept.get(resource.kind, set()))
        await self._scale()
        return await self._readiness(pcs_live)

    async def _scale(self) -> None:
        """Carry each service's replicas to its clique or scaling group, when they differ."""
        for service, spec in sorted(self.services.items()):
            if spec.replicas is None:
                continue
            resource, name = self._workload(service)
            obj = await self._get(resource, name)
            if obj is None or (obj.get("spec") or {}).get("replicas") == spec.replicas:
                continue  # Grove creates them asynchronously; their creation wakes us
            try:
                await self.ctx.client.patch(resource, self.namespace, name,
                                            {"spec": {"replicas": spec.replicas}},
                                            subresource="scale")
            except NotFound:
                continue
            await self.writer.recorder.normal(
                self.live, f"Scale{resource.kind}",
                f"Scaled {resource.kind} {name} to {spec.replicas} replicas")

    def _workload(self, service: str) -> tuple[Resource, str]:
        name = f"{self.graph}-0-{service.lower()}"
        if node_count(self.services[service]) > 1:
            return POD_CLIQUE_SCALING_GROUPS, name
        return POD_CLIQUES, name

    async def _readiness(self, pcs: Json | None) -> list[ServiceReadiness]:
        stale = pcs is None or _unobserved(pcs)
        readiness = []
        for service in sorted(self.services):
            resource, name = self._workload(service)
            if stale:
                readiness.append(ServiceReadiness(
                    service, False, updating=pcs is not None,
                    detail="PodCliqueSet not created yet" if pcs is None
                    else "PodCliqueSet has not observed its spec yet"))
                continue
            replicas = self.services[service].replicas
            readiness.append(clique_readiness(service, resource.kind,
                                              await self._get(resource, name), replicas))
        return readiness


def _cliques(pcs: Json) -> list[Json]:
    return list(((pcs.get("spec") or {}).get("template") or {}).get("cliques") or [])


def _set_tokens(pcs: Json, tokens: Mapping[str, str | None]) -> None:
    for clique in _cliques(pcs):
        token = tokens.get((clique.get("labels") or {}).get(constants.LABEL_COMPONENT, ""))
        if token:
            clique["annotations"] = {**(clique.get("annotations") or {}),
                                     constants.ANNOTATION_RESTART_AT: token}


def _unobserved(pcs: Json) -> bool:
    observed = (pcs.get("status") or {}).get("observedGeneration")
    return observed is None or int(observed) < int(pcs["metadata"].get("generation") or 0)
