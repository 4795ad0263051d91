"""The ClusterTopologies a graph's admission reads: the one read of the cluster our validating
webhook makes.

`api.validation.topology_levels` says which ClusterTopologies a graph names that admission
must judge it by (at its creation, on the Grove path) and what is wrong with it given what
was read; this reads them, one GET each (a graph names at most two, and a ClusterTopology
changes rarely: no informer), as the original's webhook reads them with its client. A
ClusterTopology that does not exist reads as such; one that cannot be read (the API server
failing, the webhook's time running out) is said so in the refusal, as the original does.
"""

from __future__ import annotations

import asyncio

import aiohttp

from api.kube import Json
from api.validation.topology_levels import ClusterTopologyRead, topologies_to_read
from controller.client import KubeClient
from controller.errors import ApiError, NotFound
from reconcilers.machinery.resources import CLUSTER_TOPOLOGIES

__all__ = ["READ_TIMEOUT", "read_topologies"]

#: Seconds one read may take: well inside the webhook's 10 seconds.
READ_TIMEOUT = 5.0


async def read_topologies(client: KubeClient, obj: Json, *, grove_enabled: bool
                          ) -> dict[str, ClusterTopologyRead]:
    """{name: what was read} of each ClusterTopology the graph's admission judges it by."""
    return {name: await _read(client, name)
            for name in topologies_to_read(obj, grove_enabled=grove_enabled)}


async def _read(client: KubeClient, name: str) -> ClusterTopologyRead:
    try:
        topology = await asyncio.wait_for(client.get(CLUSTER_TOPOLOGIES, None, name),
                                          READ_TIMEOUT)
    except NotFound:
        return ClusterTopologyRead(None)
    except ApiError as err:
        return ClusterTopologyRead(None, failure=str(err) or f"HTTP {err.code}")
    except (aiohttp.ClientError, OSError, TimeoutError) as err:
        return ClusterTopologyRead(None, failure=str(err) or type(err).__name__)
    levels = (topology.get("spec") or {}).get("levels") or []
    return ClusterTopologyRead(tuple(str(level.get("domain", "")) for level in levels
                                     if isinstance(level, dict)))
