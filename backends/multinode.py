"""Multinode components: the roles their pods play and how pods find each other.

A component on N > 1 nodes runs one leader pod and N-1 worker pods per replica. The
orchestrator that runs them (Grove or LeaderWorkerSet) decides the host names and node ranks;
backends ask the `MultinodeDeployer` for them, so the same backend code serves both.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

from api import v1beta1
from backends import naming

__all__ = [
    "GROVE",
    "LEADER_ADDRESS_ENV",
    "LWS",
    "RANK_ENV",
    "GroveDeployer",
    "InterPodLayout",
    "LwsDeployer",
    "MultinodeDeployer",
    "Role",
    "node_count",
    "roles",
]

#: The portable topology variables a multinode engine pod may carry
#: (`backends.portable_topology`): its node rank and the leader's host name.
RANK_ENV = "DYNAMO_RANK"
LEADER_ADDRESS_ENV = "DYNAMO_LEADER_ADDRESS"

RoleKind = Literal["main", "leader", "worker", "gms"]
#: The inter-pod GPU memory service layout a role belongs to (`backends.inter_pod_gms`).
InterPodLayout = Literal["gms", "failover"]


@dataclass(frozen=True)
class Role:
    """One kind of pod of a component: `main` for single-node components, else `leader` or
    `worker`. `name` is the Grove clique name; `replicas` the pods of this role per replica
    set (Grove) and `nodes` the component's node count. Under the inter-pod GPU memory
    service layout (`inter_pod`), `gms` is a rank's weight server and `rank` the node rank
    of the role's pods."""

    kind: RoleKind
    name: str
    replicas: int
    nodes: int
    rank: int = 0
    inter_pod: InterPodLayout | None = None

    @property
    def multinode(self) -> bool:
        return self.nodes > 1


def node_count(spec: v1beta1.DynamoComponentDeploymentSharedSpec) -> int:
    """Nodes per replica: multinode.nodeCount (2 when the section is empty), else 1."""
    if spec.multinode is None:
        return 1
    count = spec.multinode.node_count
    return 2 if count is None else max(count, 1)


def roles(name: str, spec: v1beta1.DynamoComponentDeploymentSharedSpec) -> list[Role]:
    """The roles of a component whose pods are named from `name`."""
    nodes = node_count(spec)
    if nodes > 1:
        return [
            Role("leader", naming.leader_role(name), 1, nodes),
            Role("worker", naming.worker_role(name), nodes - 1, nodes),
        ]
    replicas = 1 if spec.replicas is None else spec.replicas
    return [Role("main", name, replicas, 1)]


class MultinodeDeployer(Protocol):
    """How pods of one multinode replica address each other under an orchestrator."""

    @property
    def name(self) -> str:
        """The orchestrator: "grove" or "lws"."""
        ...

    @property
    def needs_dns_wait(self) -> bool:
        """The leader must wait for the workers' DNS names before connecting to them."""
        ...

    @property
    def rank_variable(self) -> str:
        """The variable the orchestrator sets to a pod's 0-based rank in its replica (the
        leader's is 0)."""
        ...

    def leader_host(self, name: str) -> str:
        """Host name of the leader pod, as a string the kubelet or shell expands."""
        ...

    def hosts(self, name: str, nodes: int) -> list[str]:
        """Host names of all pods of a replica, leader first."""
        ...

    def worker_rank(self) -> tuple[str, bool]:
        """Node rank of a worker pod (1..N-1) and whether it needs a shell to evaluate."""
        ...


@dataclass(frozen=True)
class GroveDeployer:
    """Grove: pods of a scaling group resolve through the PodCliqueSet's headless Service."""

    name: str = "grove"
    needs_dns_wait: bool = False
    rank_variable: str = "GROVE_PCSG_POD_INDEX"

    def leader_host(self, name: str) -> str:
        return self._host(naming.leader_role(name.lower()), 0)

    def hosts(self, name: str, nodes: int) -> list[str]:
        workers = [self._host(naming.worker_role(name.lower()), i) for i in range(nodes - 1)]
        return [self.leader_host(name), *workers]

    def worker_rank(self) -> tuple[str, bool]:
        return "$((GROVE_PCLQ_POD_INDEX + 1))", True

    @staticmethod
    def _host(clique: str, index: int) -> str:
        return f"$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-{clique}-{index}.$(GROVE_HEADLESS_SERVICE)"


@dataclass(frozen=True)
class LwsDeployer:
    """LeaderWorkerSet: the leader address and worker index come from the env LWS injects;
    worker i's name is the leader's with `-i` before the first dot."""

    name: str = "lws"
    needs_dns_wait: bool = True
    rank_variable: str = "LWS_WORKER_INDEX"

    def leader_host(self, name: str) -> str:
        return "$(LWS_LEADER_ADDRESS)"

    def hosts(self, name: str, nodes: int) -> list[str]:
        workers = [
            f"$(echo \"$LWS_LEADER_ADDRESS\" | sed 's/\\./-{i}\\./')" for i in range(1, nodes)
        ]
        return [self.leader_host(name), *workers]

    def worker_rank(self) -> tuple[str, bool]:
        return "$(LWS_WORKER_INDEX)", False


GROVE = GroveDeployer()
LWS = LwsDeployer()
