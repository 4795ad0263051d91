"""vLLM: the compilation cache, and multinode as Ray (tensor/pipeline parallel wider than a
node) or data parallel (replicas of the model spread over nodes)."""

from __future__ import annotations

from dataclasses import dataclass

from backends import command
from backends.frameworks.base import BackendContext, Json, remove_probes
from backends.frameworks.registry import register
from backends.resources import gpu_count

RAY_PORT = 6379
DATA_PARALLEL_RPC_PORT = 13445
CACHE_MOUNT = "/root/.cache/vllm"


@dataclass(frozen=True)
class VllmBackend:
    """Ray head/worker commands or data-parallel flags for multinode vLLM workers."""

    name: str = "vllm"
    default_cache_mount: str | None = CACHE_MOUNT

    def update_container(self, container: Json, ctx: BackendContext) -> None:
        if ctx.cache_mount is not None:
            env = container.setdefault("env", [])
            env[:] = [e for e in env if e.get("name") != "VLLM_CACHE_ROOT"]
            env.append({"name": "VLLM_CACHE_ROOT", "value": ctx.cache_mount})
        role = ctx.role
        if not role.multinode:
            return
        args = [word for arg in container.get("args") or [] for word in arg.split()]
        gpus = gpu_count(ctx.resources)
        world = _flag(args, "--tensor-parallel-size") * _flag(args, "--pipeline-parallel-size")
        data_parallel = _flag(args, "--data-parallel-size")
        if gpus > 0 and world > gpus:
            self._ray(container, ctx)
        elif gpus > 0 and world * data_parallel > gpus:
            self._data_parallel(container, ctx, args, gpus // world, data_parallel)
        if role.kind == "worker":
            remove_probes(container)

    def update_pod_spec(self, pod_spec: Json, ctx: BackendContext) -> None:
        pass

    @staticmethod
    def _ray(container: Json, ctx: BackendContext) -> None:
        if ctx.role.kind == "leader":
            line = _with_flags(container, ["--distributed-executor-backend", "ray"])
            script = f"ray start --head --port={RAY_PORT} && {line}"
        else:
            leader = ctx.deployer.leader_host(ctx.host_name)
            script = f"ray start --address={leader}:{RAY_PORT} --block"
        container["command"] = list(command.SHELL)
        container["args"] = [script]

    @staticmethod
    def _data_parallel(
        container: Json, ctx: BackendContext, args: list[str], local: int, total: int
    ) -> None:
        leader = ctx.role.kind == "leader"
        if leader:
            start_rank = "0"
        else:
            rank, _ = ctx.deployer.worker_rank()
            start_rank = f"$(( {local} * {rank} ))"
        flags = ["--data-parallel-hybrid-lb"]
        if "--data-parallel-size" not in args:
            flags += ["--data-parallel-size", str(total)]
        flags += [
            "--data-parallel-size-local", str(local),
            "--data-parallel-start-rank", start_rank,
            "--data-parallel-address", ctx.deployer.leader_host(ctx.host_name),
            "--data-parallel-rpc-port", str(DATA_PARALLEL_RPC_PORT),
        ]  # fmt: skip
        command.inject_flags(container, "vllm", flags, needs_shell=not leader)


def _flag(args: list[str], name: str) -> int:
    """The integer after the first `name` token; 1 when absent or not an integer."""
    try:
        return int(args[args.index(name) + 1])
    except (ValueError, IndexError):
        return 1


def _with_flags(container: Json, flags: list[str]) -> str:
    """The container's command line as a shell string, with `flags` added to the vLLM
    module (or at the end when no `dynamo.vllm` segment is found)."""
    cmd: list[str] = list(container.get("command") or [])
    args: list[str] = list(container.get("args") or [])
    if command.is_shell(cmd):
        probe = {"command": cmd, "args": args}
        command.inject_flags(probe, "vllm", flags, needs_shell=False)
        if probe["args"] != args:
            return command.shell_line(cmd, probe["args"])
    return f"{command.shell_line(cmd, args)} {' '.join(flags)}"


register(VllmBackend())
