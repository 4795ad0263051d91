"""SGLang: multinode replicas join through a torch distributed rendezvous on the leader."""

from __future__ import annotations

from dataclasses import dataclass

from backends import command
from backends.frameworks.base import BackendContext, Json, remove_probes
from backends.frameworks.registry import register
from backends.multinode import LEADER_ADDRESS_ENV, RANK_ENV

DIST_INIT_PORT = 29500


@dataclass(frozen=True)
class SglangBackend:
    """Adds --dist-init-addr/--nnodes/--node-rank to multinode SGLang workers (from the
    portable topology variables where the pod carries them)."""

    name: str = "sglang"
    default_cache_mount: str | None = None

    def update_container(self, container: Json, ctx: BackendContext) -> None:
        role = ctx.role
        if not role.multinode:
            return
        if role.kind != "leader":
            remove_probes(container)
        if ctx.portable_topology:
            # The pod's own variables: one form on every role and orchestrator, no shell.
            rank, needs_shell = f"$({RANK_ENV})", False
            leader = f"$({LEADER_ADDRESS_ENV})"
        else:
            if role.kind == "leader":
                rank, needs_shell = "0", False
            else:
                rank, needs_shell = ctx.deployer.worker_rank()
            leader = ctx.deployer.leader_host(ctx.host_name)
        flags = [
            "--dist-init-addr", f"{leader}:{DIST_INIT_PORT}",
            "--nnodes", str(role.nodes),
            "--node-rank", rank,
        ]  # fmt: skip
        command.inject_flags(container, "sglang", flags, needs_shell=needs_shell)

    def update_pod_spec(self, pod_spec: Json, ctx: BackendContext) -> None:
        pass


register(SglangBackend())
