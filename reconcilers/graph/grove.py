"""The Grove path of a graph, read side: one PodCliqueSet `<graph>`, whose cliques Grove
creates.

Restart tokens ride on the cliques' annotations (Grove passes them to the pods). A service's
readiness comes from its PodClique (single-node) or PodCliqueScalingGroup (multinode, or
the inter-pod GPU memory service) `<graph>-0-<service>`, once the PodCliqueSet has observed
its spec.
"""

from __future__ import annotations

from typing import Any

from backends import constants
from backends.graph_children import grove_workload
from reconcilers.graph.path import WorkloadPath
from reconcilers.graph.readiness import ServiceReadiness, clique_readiness
from reconcilers.machinery.children import Synced, is_owned_by
from reconcilers.machinery.resources import (
    POD_CLIQUE_SCALING_GROUPS,
    POD_CLIQUE_SETS,
    POD_CLIQUES,
)

Json = dict[str, Any]

_PCS = (POD_CLIQUE_SETS.api_version, POD_CLIQUE_SETS.kind)
_WORKLOADS = {r.kind: r for r in (POD_CLIQUES, POD_CLIQUE_SCALING_GROUPS)}


class GrovePath(WorkloadPath):
    """The Grove objects of one graph, for one reconcile."""

    async def observe(self) -> tuple[dict[str, str | None], list[ServiceReadiness]]:
        pcs = await self.ctx.cache.get_or_none(POD_CLIQUE_SETS, self.namespace, self.graph)
        if pcs is not None and not is_owned_by(pcs, self.live):
            pcs = None
        tokens: dict[str, str | None] = {}
        for clique in _cliques(pcs or {}):
            service = (clique.get("labels") or {}).get(constants.LABEL_COMPONENT)
            if service in self.services and service not in tokens:
                token = (clique.get("annotations") or {}).get(constants.ANNOTATION_RESTART_AT)
                tokens[service] = str(token) if token else None
        return tokens, await self._readiness(pcs)

    async def readiness(self, synced: Synced) -> list[ServiceReadiness]:
        return await self._readiness(synced.get(_PCS, self.graph))

    async def _readiness(self, pcs: Json | None) -> list[ServiceReadiness]:
        stale = pcs is None or _unobserved(pcs)
        readiness = []
        for service, spec in sorted(self.services.items()):
            kind, name = grove_workload(self.graph, service, spec)
            if stale:
                readiness.append(ServiceReadiness(
                    service, False, updating=pcs is not None,
                    detail="PodCliqueSet not created yet" if pcs is None
                    else "PodCliqueSet has not observed its spec yet"))
                continue
            workload = await self.ctx.cache.get_or_none(_WORKLOADS[kind], self.namespace, name)
            readiness.append(clique_readiness(service, kind, workload, spec.replicas))
        return readiness


def _cliques(pcs: Json) -> list[Json]:
    return list(((pcs.get("spec") or {}).get("template") or {}).get("cliques") or [])


def _unobserved(pcs: Json) -> bool:
    observed = (pcs.get("status") or {}).get("observedGeneration")
    return observed is None or int(observed) < int(pcs["metadata"].get("generation") or 0)
