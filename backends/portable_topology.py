"""The portable topology variables: `DYNAMO_RANK` and `DYNAMO_LEADER_ADDRESS` in `main` of a
multinode component's leader and worker pods, so a command can find its place in the replica
without naming Grove's or LeaderWorkerSet's own variables.

What they hold, by orchestrator (`backends.multinode`):
* Grove: `DYNAMO_RANK` is `$(GROVE_PCSG_POD_INDEX)`, the pod's index in its scaling group
  replica (the leader clique comes first, so 0 on the leader, 1..N-1 on the workers);
  `DYNAMO_LEADER_ADDRESS` the DNS name of the group's leader pod,
  `$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-<leader clique>-0.$(GROVE_HEADLESS_SERVICE)`.
* LeaderWorkerSet: `$(LWS_WORKER_INDEX)` and `$(LWS_LEADER_ADDRESS)`.

Both orchestrators put their own variables ahead of the template's, so the kubelet expands
the references. Under the inter-pod GPU memory service layout (`backends.inter_pod_gms`) the
scaling group also holds the weight servers, so the group-wide pod index is no rank: the rank
is the engine role's own (static), and the leader is the leader clique's pod of the same
index. The operator owns the two names: an entry of the same name in the pod template is
replaced. They are also what the generated SGLang launch uses (`--dist-init-addr
$(DYNAMO_LEADER_ADDRESS):29500 ... --node-rank $(DYNAMO_RANK)`, on both roles and with no
shell, `backends.frameworks.sglang`); vLLM's Ray and data-parallel launches and TRT-LLM's
mpirun keep their own forms (the original aliases vLLM's multiprocessing launch, which this
operator does not generate).

When: every multinode component of a graph created by an operator at or above
`PORTABLE_TOPOLOGY_ENV` (0.2.0; `backends.origin_gates`), and every role with a template of
its own (`backends.role_templates`, a `v1beta1` input no older graph has) whatever its origin.
A graph stamped below the gate, or not stamped, keeps its pods as they were: an operator
upgrade adds no variable and changes no command line, so it restarts no multinode pod.
"""

from __future__ import annotations

from typing import Any

from api.origin_version import OriginVersion
from backends.component_spec import ComponentSpec
from backends.multinode import LEADER_ADDRESS_ENV, RANK_ENV, MultinodeDeployer, Role
from backends.origin_gates import OriginGate
from backends.role_templates import authored

Json = dict[str, Any]

__all__ = [
    "LEADER_ADDRESS_ENV",
    "PORTABLE_TOPOLOGY_ENV",
    "RANK_ENV",
    "portable_topology",
    "topology_env",
]

PORTABLE_TOPOLOGY_ENV = OriginGate("PortableTopologyEnv", OriginVersion((0, 2, 0)))


def portable_topology(spec: ComponentSpec, role: Role) -> bool:
    """`role`'s pods carry the portable topology variables: an engine role of a multinode
    component whose graph passed the gate, or whose role has a template of its own."""
    if not role.multinode or role.kind not in ("leader", "worker"):
        return False
    return authored(spec, role) or PORTABLE_TOPOLOGY_ENV.enabled_for(spec)


def topology_env(deployer: MultinodeDeployer, host_name: str, role: Role) -> list[Json]:
    """The two variables of a `role` pod: the orchestrator's group-wide pod index (the
    engine role's rank under the inter-pod layout) and the leader's host name."""
    rank = str(role.rank) if role.inter_pod is not None else f"$({deployer.rank_variable})"
    return [{"name": RANK_ENV, "value": rank},
            {"name": LEADER_ADDRESS_ENV, "value": deployer.leader_host(host_name)}]
