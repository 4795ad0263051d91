"""The DCD path of a graph, read side: one DynamoComponentDeployment `<graph>-<service>` per
service, a rolled worker's in its target generation (`<graph>-<service>-<hash>`, see
`rollout`), beside the old generations' while a rollout runs.

`observe` reads what runs now (restart tokens and readiness, before anything is written);
`readiness` reads every service's readiness from the DCDs as the writer left them.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from backends import naming
from reconcilers.graph.path import WorkloadPath
from reconcilers.graph.readiness import ServiceReadiness, component_readiness, restart_token
from reconcilers.graph.rollout import Rollout
from reconcilers.machinery.children import Synced, is_owned_by
from reconcilers.machinery.resources import COMPONENT_DEPLOYMENTS, DEPLOYMENTS

Json = dict[str, Any]

# The DCDs are built, written and cached as the hub.
_DCD = (COMPONENT_DEPLOYMENTS.api_version, COMPONENT_DEPLOYMENTS.kind)


class ComponentPath(WorkloadPath):
    """The DCDs of one graph, for one reconcile."""

    #: The worker rollout of this reconcile (set before `observe`), if workers roll.
    rollout: Rollout | None = None

    def _name(self, service: str) -> str:
        if self.rollout is not None and service in self.rollout.names:
            return self.rollout.target_name(self.graph, service)
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
        readiness = component_readiness(service, dcd, desired, await self._deployment(dcd))
        rollout = self.rollout
        names = rollout.names.get(service, ()) if rollout is not None else ()
        if rollout is None or len(names) < 2:
            return readiness
        # Old generations still run: not ready until their last pod is gone.
        counts = dict(readiness.replica_status or {"componentKind": "Deployment"})
        counts["componentNames"] = list(names)
        counts["componentName"] = names[-1]
        return replace(readiness, ready=False, updating=True, replica_status=counts,
                       detail=f"rolling out worker generation {rollout.target or 'legacy'}"
                              f" ({len(names) - 1} older DCD(s) left)")

    async def _deployment(self, dcd: Json | None) -> Json | None:
        """The DCD's Deployment when the cache holds it (multinode DCDs have none)."""
        if dcd is None:
            return None
        deployment = await self.ctx.cache.get_or_none(DEPLOYMENTS, self.namespace,
                                                      dcd["metadata"]["name"])
        return deployment if deployment is not None and is_owned_by(deployment, dcd) else None

