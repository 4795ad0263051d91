"""The DCD path of a graph, read side: one DynamoComponentDeployment `<graph>-<service>` per
service.

`observe` reads what runs now (restart tokens and readiness, before anything is written);
`readiness` reads every service's readiness from the DCDs as the writer left them.
"""

from __future__ import annotations

from typing import Any

from backends import naming
from reconcilers.graph.path import WorkloadPath
from reconcilers.graph.readiness import ServiceReadiness, component_readiness, restart_token
from reconcilers.machinery.children import Synced, is_owned_by
from reconcilers.machinery.resources import COMPONENT_DEPLOYMENTS, DEPLOYMENTS

Json = dict[str, Any]

# The DCDs are built, written and cached as the hub.
_DCD = (COMPONENT_DEPLOYMENTS.api_version, COMPONENT_DEPLOYMENTS.kind)


class ComponentPath(WorkloadPath):
    """The DCDs of one graph, for one reconcile."""

    def _name(self, service: str) -> str:
        return naming.component_name(self.graph, service)

    async def _get(self, service: str) -> Json | None:
        """The service's DCD when it exists and is ours."""
        dcd = await self.ctx.cache.get_or_none(COMPONENT_DEPLOYMENTS, self.namespace,
                                               self._name(service))
        return dcd if dcd is not None and is_owned_by(dcd, self.live) else None

    async def observe(self) -> tuple[dict[str, str | None], list[ServiceReadiness]]:
        """Restart token of every service whose DCD exists, and readiness of all services."""
        tokens: dict[str, str | None] = {}
        readiness = []
        for service in sorted(self.services):
            dcd = await self._get(service)
            if dcd is not None:
                tokens[service] = restart_token(dcd)
            readiness.append(await self._readiness(service, dcd))
        return tokens, readiness

    async def readiness(self, synced: Synced) -> list[ServiceReadiness]:
        """Every service's readiness from its DCD as written."""
        return [await self._readiness(s, synced.get(_DCD, self._name(s)))
                for s in sorted(self.services)]

    async def _readiness(self, service: str, dcd: Json | None) -> ServiceReadiness:
        replicas = self.services[service].replicas
        desired = 1 if replicas is None else replicas
        return component_readiness(service, dcd, desired, await self._deployment(dcd))

    async def _deployment(self, dcd: Json | None) -> Json | None:
        """The DCD's Deployment when the cache holds it (multinode DCDs have none)."""
        if dcd is None:
            return None
        deployment = await self.ctx.cache.get_or_none(DEPLOYMENTS, self.namespace,
                                                      dcd["metadata"]["name"])
        return deployment if deployment is not None and is_owned_by(deployment, dcd) else None

