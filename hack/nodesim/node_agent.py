"""The node side of the simulated kubelets: register each Node and keep it Ready.

Like a kubelet with node leases, each node is created with its capacity (GPUs included) and
posts a status with the NodeReady condition True; its Lease in kube-node-lease (owned by the
Node, so it goes with it) is renewed every `lease_renew` seconds, and an unchanged status is
posted again every `status_report` seconds. The real node-lifecycle controller then neither
taints nor evicts.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

import structlog

from controller.client import KubeClient
from controller.errors import AlreadyExists, ApiError, NotFound
from controller.resource import Resource
from hack.localcluster.simulation.clock import rfc3339, rfc3339_micro
from hack.localcluster.simulation.config import NodeSpec
from hack.localcluster.simulation.node_objects import SIMULATED_LABEL, new_node, node_status

from .config import NodeSimConfig

Json = dict[str, Any]
log = structlog.get_logger("nodesim.nodes")

NODES = Resource("", "v1", "nodes", "Node", namespaced=False)
LEASES = Resource("coordination.k8s.io", "v1", "leases", "Lease")
LEASE_NAMESPACE = "kube-node-lease"
#: Marks the nodes a nodesim runs, with the simulator's name as the value.
OWNER_LABEL = "nodesim.localcluster.dev/owner"


class NodeAgent:
    """The Nodes and Leases of one simulator; `run` keeps them fresh until cancelled."""

    def __init__(self, client: KubeClient, config: NodeSimConfig, owner: str,
                 kubelet_version: str) -> None:
        self.client = client
        self.config = config
        self.owner = owner
        self.kubelet_version = kubelet_version
        self.specs = {spec.name: (index, spec) for index, spec in enumerate(config.nodes)}
        self.statuses: dict[str, Json] = {}
        self.lease_renewals = 0

    def host_ip(self, node: str) -> str:
        status = self.statuses.get(node) or {}
        for address in status.get("addresses") or ():
            if address.get("type") == "InternalIP":
                return str(address["address"])
        return "127.0.0.1"

    async def register(self) -> None:
        """Create (or take over) every node, post its Ready status and its lease."""
        for name, (index, spec) in self.specs.items():
            node = new_node(spec, index)
            labels = node["metadata"]["labels"]
            # The in-process kubelet runs pods on nodes carrying its label: not on ours.
            labels.pop(SIMULATED_LABEL, None)
            labels[OWNER_LABEL] = self.owner
            try:
                created = await self.client.create(NODES, node)
            except AlreadyExists:
                created = await self.client.patch(
                    NODES, None, name, {"metadata": {"labels": node["metadata"]["labels"]}})
            await self._post_status(name, index, spec, created.get("status"))
            await self._renew(name, created["metadata"]["uid"])
        log.info("nodesim nodes registered", nodes=sorted(self.specs), owner=self.owner)

    async def run(self) -> None:
        """Renew the leases, and post the status heartbeat now and then."""
        uids: dict[str, str] = {}
        last_report = asyncio.get_running_loop().time()
        while True:
            await asyncio.sleep(self.config.lease_renew)
            now = asyncio.get_running_loop().time()
            report = now - last_report >= self.config.status_report
            if report:
                last_report = now
            for name, (index, spec) in self.specs.items():
                try:
                    if name not in uids:
                        uids[name] = (await self.client.get(NODES, None, name))["metadata"][
                            "uid"]
                    await self._renew(name, uids[name])
                    if report:
                        await self._post_status(name, index, spec, self.statuses.get(name),
                                                heartbeat=True)
                except NotFound:
                    uids.pop(name, None)
                    log.warning("nodesim node gone", node=name)
                except (ApiError, OSError, TimeoutError) as err:
                    log.warning("nodesim node heartbeat failed", node=name, error=str(err))

    async def unregister(self) -> None:
        for name in self.specs:
            try:
                await self.client.delete(NODES, None, name)
            except NotFound:
                pass
            except (ApiError, OSError, TimeoutError) as err:
                log.warning("nodesim node delete failed", node=name, error=str(err))

    async def _post_status(self, name: str, index: int, spec: NodeSpec, old: Json | None,
                           heartbeat: bool = False) -> None:
        status = node_status(spec, index, ready=True, now=rfc3339(), old=old)
        status["nodeInfo"]["kubeletVersion"] = self.kubelet_version
        status["nodeInfo"]["kubeProxyVersion"] = self.kubelet_version
        if heartbeat:
            for condition in status["conditions"]:
                condition["lastHeartbeatTime"] = rfc3339()
        written = await self.client.patch(NODES, None, name, {"status": status},
                                          subresource="status")
        self.statuses[name] = written.get("status") or status

    async def _renew(self, name: str, uid: str) -> None:
        now = rfc3339_micro(datetime.now(UTC))
        try:
            await self.client.patch(LEASES, LEASE_NAMESPACE, name,
                                    {"spec": {"holderIdentity": name, "renewTime": now}})
        except NotFound:
            await self.client.create(LEASES, {
                "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                "metadata": {"name": name, "namespace": LEASE_NAMESPACE,
                             "ownerReferences": [{"apiVersion": "v1", "kind": "Node",
                                                  "name": name, "uid": uid}]},
                "spec": {"holderIdentity": name,
                         "leaseDurationSeconds": self.config.lease_duration,
                         "renewTime": now}})
        self.lease_renewals += 1
