"""Shadow-engine failover (`experimental.failover`, IntraPod): the worker's `main` becomes an
active and a standby engine in one pod, both attached to the weights the GMS server holds.

As the original renders it, on top of the GMS wiring (`backends.gpu_memory_service`, which
runs first, so both engines have the shared claim, the socket mount and `GMS_SOCKET_DIR`):

- `main` is replaced by `engine-0` and `engine-1` (one primary and `numShadows` = 1 shadow),
  clones of it; every other container of the pod stays;
- engine `i` serves its system port `9090 + i` (port `system-<i>`, its HTTP probes aimed at
  it) and the forward-pass metrics on `20380 + i`; it is told `ENGINE_ID`, its own
  `CONTAINER_NAME` (workers register per container: the graph carries
  `nvidia.com/dynamo-kube-discovery-mode: container`), the flock both engines race for
  (`FAILOVER_LOCK_PATH` in the socket directory), that engine 0 is the primary and takes the
  lock before it initializes, shadow mode, and that it starts not ready; the endpoint-health
  list of the worker defaults is dropped;
- the frontend sidecar, when the component has one, is told the fast-failover timings;
- per backend: vLLM engines get `DYN_VLLM_GMS_SHADOW_MODE`, their own NIXL side-channel port
  (`5600 + i`) and a torch.distributed master port 100 apart (29500 + 100 i), plus `NNODES`
  when multinode; SGLang engines `--disable-piecewise-cuda-graph`; multinode TRT-LLM shadows
  their own SSH port (2222 + i). Another backend is refused, as the original refuses it.

InterPod failover (the primary and its shadows as pods of one engine clique per rank, on
Grove) is rendered with the inter-pod GMS layout it must match, by `backends.inter_pod_gms`;
this module leaves such pods alone.
"""

from __future__ import annotations

import re
from typing import Any

from api import v1beta1
from api.kube import copy_json
from backends import command, constants
from backends.errors import GenerationError
from backends.gpu_memory_service import INTRA_POD, SOCKET_DIR, gms_of

Json = dict[str, Any]

__all__ = ["ENGINES", "apply_failover", "engine_names", "failover_of"]

#: The primary and its one shadow.
ENGINES = 2
FPM_BASE_PORT = 20380
NIXL_BASE_PORT = 5600
MASTER_PORT = 29500
MASTER_PORT_FLAG = "--master-port"
MASTER_PORT_STRIDE = 100
SSH_PORT = 2222
SGLANG_NO_PIECEWISE_GRAPH = "--disable-piecewise-cuda-graph"
LOCK_FILE = f"{SOCKET_DIR}/failover.lock"
#: The worker defaults each engine states anew (or, for the endpoint health list, drops).
_REPLACED = ("DYN_SYSTEM_USE_ENDPOINT_HEALTH_STATUS", "DYN_SYSTEM_PORT", "DYN_SYSTEM_ENABLED",
             "DYN_HEALTH_CHECK_ENABLED", "CONTAINER_NAME", "DYN_FORWARDPASS_METRIC_PORT")
#: What the frontend sidecar of a failover pod is told, to route around a dying engine fast.
_FRONTEND_ENV = (("DYN_KUBE_DISCOVERY_DEBOUNCE_MS", "25"),
                 ("DYN_BULWARK_GATEWAY_NOTREADY_GRACE_MS", "1000"),
                 ("DYN_MIGRATION_RETRY_CONCURRENCY", "2"),
                 ("DYN_MIGRATION_FIRST_CHUNK_TIMEOUT_MS", "500"),
                 ("DYN_MIGRATION_RECENT_FAILOVER_WINDOW_MS", "1500"))
_PROBES = ("startupProbe", "livenessProbe", "readinessProbe")


def failover_of(component: v1beta1.DynamoComponentDeploymentSharedSpec
                ) -> v1beta1.FailoverSpec | None:
    """The component's failover settings, None when it does not fail over."""
    experimental = component.experimental
    return experimental.failover if experimental is not None else None


def engine_names() -> list[str]:
    """The engine containers a failover pod runs `main` as."""
    return [f"engine-{i}" for i in range(ENGINES)]


def apply_failover(pod: Json, component: v1beta1.DynamoComponentDeploymentSharedSpec,
                   backend: str, nodes: int) -> None:
    """Run `main` as the active and standby engines, in place (nothing without failover).
    `backend`: the framework the component runs; `nodes`: its node count."""
    failover = failover_of(component)
    if failover is None:
        return
    gms = gms_of(component)
    if gms is None:
        raise GenerationError("experimental.failover: Forbidden: gpuMemoryService is required "
                              f'when failover mode is "{failover.mode or INTRA_POD}"')
    if (failover.mode or INTRA_POD) != (gms.mode or INTRA_POD):
        raise GenerationError(
            f'experimental.failover.mode: Invalid value: "{failover.mode}": must match '
            f'gpuMemoryService.mode "{gms.mode or INTRA_POD}"')
    containers = pod.get("containers") or []
    main = next((c for c in containers if c.get("name") == constants.MAIN_CONTAINER), None)
    if main is None:
        raise GenerationError('failover: the pod has no container "main" to clone')
    others = [c for c in containers if c is not main]
    engines = [_engine(main, i) for i in range(ENGINES)]
    sidecar = component.frontend_sidecar
    for container in others:
        if sidecar and container.get("name") == sidecar:
            _set_env(container, [{"name": k, "value": v} for k, v in _FRONTEND_ENV])
    pod["containers"] = [*engines, *others]
    if backend == "vllm":
        _vllm(engines, nodes)
    elif backend == "sglang":
        for engine in engines:
            if SGLANG_NO_PIECEWISE_GRAPH not in _command_line(engine):
                command.inject_flags(engine, "sglang", [SGLANG_NO_PIECEWISE_GRAPH],
                                     needs_shell=False)
    elif backend == "trtllm":
        if nodes > 1:
            for i, engine in enumerate(engines[1:], start=1):
                _retarget_ssh(engine, SSH_PORT, SSH_PORT + i)
    else:
        raise GenerationError(f"failover is not supported for backend framework {backend}")


def _engine(main: Json, index: int) -> Json:
    """`main` cloned as engine `index`."""
    engine = copy_json(main)
    name = f"engine-{index}"
    port_name = f"system-{index}"
    system_port = constants.SYSTEM_PORT + index
    engine["name"] = name
    engine["ports"] = [{"name": port_name, "containerPort": system_port, "protocol": "TCP"}]
    engine["env"] = [e for e in engine.get("env") or [] if e.get("name") not in _REPLACED]
    first = "1" if index == 0 else "0"
    _set_env(engine, [
        {"name": "ENGINE_ID", "value": str(index)},
        {"name": "CONTAINER_NAME", "value": name},
        {"name": "FAILOVER_LOCK_PATH", "value": LOCK_FILE},
        {"name": "DYN_GMS_FAILOVER_PRIMARY_ENGINE_ID", "value": "0"},
        {"name": "DYN_GMS_FAILOVER_SHADOW_MODE", "value": "true"},
        {"name": "DYN_SYSTEM_STARTING_HEALTH_STATUS", "value": "notready"},
        {"name": "DYN_SYSTEM_PORT", "value": str(system_port)},
        {"name": "DYN_SYSTEM_ENABLED", "value": "true"},
        {"name": "DYN_KUBE_DISCOVERY_DEBOUNCE_MS", "value": "25"},
        {"name": "DYN_VLLM_GMS_LOCK_BEFORE_INIT", "value": first},
        {"name": "DYN_SGLANG_GMS_LOCK_BEFORE_INIT", "value": first},
        {"name": "DYN_TRTLLM_GMS_LOCK_BEFORE_INIT", "value": first},
        {"name": "DYN_FORWARDPASS_METRIC_PORT", "value": str(FPM_BASE_PORT + index)},
    ])
    for probe in _PROBES:
        http = (engine.get(probe) or {}).get("httpGet")
        if isinstance(http, dict):
            http["port"] = port_name
    return engine


def _set_env(container: Json, env: list[Json]) -> None:
    """Each of `env` replaces a variable of its name, at the end."""
    names = {e["name"] for e in env}
    container["env"] = [*(e for e in container.get("env") or [] if e.get("name") not in names),
                        *env]


def _vllm(engines: list[Json], nodes: int) -> None:
    for index, engine in enumerate(engines):
        env = [{"name": "DYN_VLLM_GMS_SHADOW_MODE", "value": "true"},
               {"name": "VLLM_NIXL_SIDE_CHANNEL_PORT", "value": str(NIXL_BASE_PORT + index)}]
        if nodes > 1:
            env.append({"name": "NNODES", "value": str(nodes)})
        _set_env(engine, env)
        if index == 0:
            continue  # the primary keeps torch.distributed's default master port
        offset = index * MASTER_PORT_STRIDE
        if not _stagger_flag(engine, MASTER_PORT_FLAG, offset):
            engine["args"] = [*(engine.get("args") or []), MASTER_PORT_FLAG,
                              str(MASTER_PORT + offset)]


def _command_line(container: Json) -> str:
    return " ".join([*(container.get("command") or []), *(container.get("args") or [])])


def _stagger_flag(container: Json, flag: str, offset: int) -> bool:
    """Add `offset` to the number following `flag` (its own argument, or inside a shell
    line); False when the container does not give the flag."""
    args: list[str] = list(container.get("args") or [])
    for i, arg in enumerate(args[:-1]):
        if arg == flag and args[i + 1].isdigit():
            args[i + 1] = str(int(args[i + 1]) + offset)
            container["args"] = args
            return True
    pattern = re.compile(rf"{re.escape(flag)} (\d+)")
    for key in ("args", "command"):
        words: list[str] = list(container.get(key) or [])
        for i, word in enumerate(words):
            changed, count = pattern.subn(lambda m: f"{flag} {int(m[1]) + offset}", word, 1)
            if count:
                words[i] = changed
                container[key] = words
                return True
    # A flag without a number is still the user's: the original leaves it as it is.
    return any(w == flag or f"{flag} " in w for w in args) or any(
        f"{flag} " in w for w in container.get("command") or [])


def _retarget_ssh(container: Json, old: int, new: int) -> None:
    """The shadow's sshd and its readiness on a port of its own."""
    for key in ("args", "command"):
        words = container.get(key)
        if words:
            container[key] = [w.replace(f"Port {old}", f"Port {new}")
                               .replace(f"-p {old}", f"-p {new}") for w in words]
    tcp = (container.get("readinessProbe") or {}).get("tcpSocket")
    if isinstance(tcp, dict):
        tcp["port"] = new
