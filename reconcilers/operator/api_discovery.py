"""Which optional APIs the cluster serves, read once at start from API discovery.

Grove (grove.io), LeaderWorkerSet (leaderworkerset.x-k8s.io), Volcano
(scheduling.volcano.sh), Istio (networking.istio.io), the Kai scheduler (scheduling.run.ai)
and the gateway-api-inference-extension (inference.networking.k8s.io) change what the operator
creates and which informers it runs. As in the
original operator, installing one later takes an operator restart.
"""

from __future__ import annotations

from dataclasses import dataclass

from controller.client import KubeClient

GROVE = "grove.io"
LWS = "leaderworkerset.x-k8s.io"
VOLCANO = "scheduling.volcano.sh"
ISTIO = "networking.istio.io"
KAI = "scheduling.run.ai"
INFERENCE_POOL = "inference.networking.k8s.io"


@dataclass(frozen=True)
class ServedApis:
    """The optional API groups the API server serves."""

    groups: frozenset[str]

    def serves(self, group: str) -> bool:
        return group in self.groups


async def served_apis(client: KubeClient) -> ServedApis:
    """The API groups of `/apis`."""
    listing = await client.request("GET", "/apis")
    return ServedApis(frozenset(str(g.get("name", "")) for g in listing.get("groups") or []))


class MissingApi(Exception):
    """A flag forces an optional API the cluster does not serve."""


def resolve(flag: str, name: str, group: str, apis: ServedApis) -> bool:
    """Whether to use an optional API: "auto" follows discovery; "true" requires it."""
    if flag == "auto":
        return apis.serves(group)
    if flag == "true" and not apis.serves(group):
        raise MissingApi(f"--{name}=true but the API server does not serve {group}")
    return flag == "true"
