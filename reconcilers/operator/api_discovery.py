"""Which optional APIs the cluster serves, read once at start from API discovery.

Grove (grove.io), LeaderWorkerSet (leaderworkerset.x-k8s.io), Volcano
(scheduling.volcano.sh), Istio (networking.istio.io), the Kai scheduler (scheduling.run.ai)
and the gateway-api-inference-extension (inference.networking.k8s.io) change what the operator
creates and which informers it runs. As in the
original operator, installing one later takes an operator restart.

`unserved` finds the resources of the informers the controllers need that the cluster does
not serve in the version asked for (an older Kubernetes: 1.20 has no discovery.k8s.io/v1
EndpointSlices). The process then names each one once and leaves out the controllers that
need it, instead of retrying a 404 forever and never syncing.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from controller.client import KubeClient
from controller.errors import NotFound
from controller.resource import Resource

GROVE = "grove.io"
LWS = "leaderworkerset.x-k8s.io"
VOLCANO = "scheduling.volcano.sh"
ISTIO = "networking.istio.io"
KAI = "scheduling.run.ai"
INFERENCE_POOL = "inference.networking.k8s.io"
#: Dynamic Resource Allocation as Kubernetes 1.34 serves it (GA).
DRA = "resource.k8s.io/v1"


@dataclass(frozen=True)
class ServedApis:
    """The optional API groups the API server serves, and their versions ("group/version")."""

    groups: frozenset[str]
    versions: frozenset[str] = frozenset()

    def serves(self, group: str) -> bool:
        return group in self.groups

    def serves_version(self, group_version: str) -> bool:
        return group_version in self.versions


async def served_apis(client: KubeClient) -> ServedApis:
    """The API groups of `/apis`."""
    listing = await client.request("GET", "/apis")
    groups = listing.get("groups") or []
    return ServedApis(frozenset(str(g.get("name", "")) for g in groups),
                      frozenset(str(v.get("groupVersion", "")) for g in groups
                                for v in g.get("versions") or []))


class MissingApi(Exception):
    """A flag forces an optional API the cluster does not serve."""


def resolve(flag: str, name: str, group: str, apis: ServedApis) -> bool:
    """Whether to use an optional API: "auto" follows discovery; "true" requires it."""
    if flag == "auto":
        return apis.serves(group)
    if flag == "true" and not apis.serves(group):
        raise MissingApi(f"--{name}=true but the API server does not serve {group}")
    return flag == "true"


#: The Kubernetes release that first served a built-in API version the operator uses, for
#: the message that names a missing one.
SERVED_SINCE = {"discovery.k8s.io/v1": "1.21", "policy/v1": "1.21", "autoscaling/v2": "1.23",
                "batch/v1": "1.8", "coordination.k8s.io/v1": "1.14"}


async def unserved(client: KubeClient, resources: Iterable[Resource]) -> list[Resource]:
    """Those of `resources` that the API server does not serve in their group and version."""
    by_version: dict[str, list[Resource]] = {}
    for resource in resources:
        by_version.setdefault(resource.api_version, []).append(resource)
    missing: list[Resource] = []
    for version, wanted in sorted(by_version.items()):
        path = f"/apis/{version}" if "/" in version else f"/api/{version}"
        try:
            listing = await client.request("GET", path)
        except NotFound:
            missing += wanted
            continue
        served = {str(r.get("name", "")) for r in listing.get("resources") or []}
        missing += [r for r in wanted if r.plural not in served]
    return missing
