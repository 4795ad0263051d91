"""The DCD path of a graph: one DynamoComponentDeployment `<graph>-<service>` per service.

`observe` reads what runs now (restart tokens and readiness, before anything is written);
`apply` writes the DCDs, each carrying its restart token, deletes the DCDs of services that left
the graph, and returns the readiness of every service from the objects as written.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from api.convert import dump
from api.v1alpha1 import DynamoGraphDeployment
from backends import naming
from backends.component_deployment import component_deployments
from backends.constants import ANNOTATION_RESTART_AT
from controller.errors import NotFound
from reconcilers.graph.children import not_owned, prune
from reconcilers.graph.readiness import ServiceReadiness, component_readiness
from reconcilers.machinery.children import ChildWriter, Outcome, is_owned_by
from reconcilers.machinery.context import OperatorContext
from reconcilers.machinery.resources import COMPONENT_DEPLOYMENTS, DEPLOYMENTS

Json = dict[str, Any]


class ComponentPath:
    """The DCDs of one graph, for one reconcile."""

    def __init__(self, ctx: OperatorContext, writer: ChildWriter, live: Json,
                 dgd: DynamoGraphDeployment) -> None:
        self.ctx = ctx
        self.writer = writer
        self.live = live
        self.dgd = dgd
        self.namespace = str(live["metadata"]["namespace"])
        self.graph = str(live["metadata"]["name"])
        self.services = dgd.spec.services or {}

    def _name(self, service: str) -> str:
        return naming.component_name(self.graph, service)

    async def _get(self, service: str) -> Json | None:
        """The service's DCD when it exists and is ours."""
        try:
            dcd = await self.ctx.cache.get(COMPONENT_DEPLOYMENTS, self.namespace,
                                           self._name(service))
        except NotFound:
            return None
        return dcd if is_owned_by(dcd, self.live) else None

    async def observe(self) -> tuple[dict[str, str | None], list[ServiceReadiness]]:
        """Restart token of every service whose DCD exists, and readiness of all services."""
        tokens: dict[str, str | None] = {}
        readiness = []
        for service in sorted(self.services):
            dcd = await self._get(service)
            if dcd is not None:
                tokens[service] = _token(dcd)
            readiness.append(await self._readiness(service, dcd))
        return tokens, readiness

    async def apply(self, tokens: Mapping[str, str | None]) -> list[ServiceReadiness]:
        """Write every DCD (with its token), prune the others; readiness after the writes."""
        readiness = []
        taken = []
        for dcd in component_deployments(self.dgd, self.ctx.settings):
            obj = dump(dcd)
            service = str(obj["spec"]["serviceName"])
            token = tokens.get(service)
            if token:
                obj["spec"]["annotations"] = {**(obj["spec"].get("annotations") or {}),
                                              ANNOTATION_RESTART_AT: token}
            applied = await self.writer.apply(self.live, COMPONENT_DEPLOYMENTS, obj)
            if applied.outcome is Outcome.NOT_OWNED:
                taken.append(obj["metadata"]["name"])
                continue
            readiness.append(await self._readiness(service, applied.live))
        await prune(self.ctx, self.writer, self.live, COMPONENT_DEPLOYMENTS,
                    {self._name(s) for s in self.services})
        if taken:
            raise not_owned(COMPONENT_DEPLOYMENTS.kind, ", ".join(taken))
        return readiness

    async def _readiness(self, service: str, dcd: Json | None) -> ServiceReadiness:
        replicas = self.services[service].replicas
        desired = 1 if replicas is None else replicas
        return component_readiness(service, dcd, desired, await self._deployment(dcd))

    async def _deployment(self, dcd: Json | None) -> Json | None:
        """The DCD's Deployment when the cache holds it (multinode DCDs have none)."""
        if dcd is None:
            return None
        try:
            deployment = await self.ctx.cache.get(DEPLOYMENTS, self.namespace,
                                                  dcd["metadata"]["name"])
        except NotFound:
            return None
        return deployment if is_owned_by(deployment, dcd) else None


def _token(dcd: Json) -> str | None:
    annotations = (dcd.get("spec") or {}).get("annotations") or {}
    value = annotations.get(ANNOTATION_RESTART_AT)
    return str(value) if value else None
