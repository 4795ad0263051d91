"""Inter-pod GPU Memory Service (`experimental.gpuMemoryService.mode: InterPod`) and inter-pod
failover (`experimental.failover.mode: InterPod`), on the Grove path only.

As the original renders them, the component becomes a PodCliqueScalingGroup named after it,
whose cliques come in pairs, one pair per node rank:

- a weight-server clique `<component>-gms-<rank>` (one pod) and an engine clique: `<component>`
  on one node, else `<component>-ldr` for rank 0 and `<component>-wkr-<rank>` for the others;
  the engine clique runs one pod, or the primary and `numShadows` shadows under failover;
  engine cliques start after their rank's weight server (`startsAfter`, explicit startup);
- the GPUs: one ResourceClaimTemplate per rank in the PodCliqueSet
  (`resourceClaimTemplates`, `<component>-gpu-rank-<rank>`, request `gpu` for as many devices
  as `main` asks), shared per scaling-group replica by the rank's two cliques
  (`resourceSharing`, scope `PerReplica`); the pods lose their GPU resources and tolerate
  `nvidia.com/gpu:NoSchedule`;
- the sockets: a hostPath `/run/gms` mounted at `/run/gms/shared` with the sub-path
  `$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)/rank-<rank>` (volume `gms-shared`), opened to the
  non-root processes by the root init container `fix-gms-perms`;
- the weight-server pod is the engine's pod spec with its containers replaced by
  `gms-weights` and `gms-kv-cache` (clones of `main` running one GMS server group per tag,
  probed by counting the tag's sockets), and without discovery labels;
- the engine pods keep `main`, told `ENGINE_ID` (their pod index in the clique), the socket
  directory, the failover lock and to start not ready (the endpoint-health list dropped);
  under failover also the logical worker they share with their shadows, shadow mode, a fast
  shutdown, `restartPolicy: Never` and the clique label
  `nvidia.com/dynamo-failover-engine-group-member`;
- vLLM engines load with `--load-format gms` (added when absent) and, under failover,
  `DYN_VLLM_GMS_SHADOW_MODE`; multinode engines find their leader at the same pod index of
  the leader clique and know their rank statically (`InterPodDeployer`).

Another orchestrator refuses the mode (`backends.gpu_memory_service.refusal`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from api import v1beta1
from api.kube import copy_json
from backends import command, constants, naming
from backends.canonical import canonical_pod_spec
from backends.gpu_memory_service import (
    DEFAULT_DEVICE_CLASS,
    GPU_TOLERATION,
    INTER_POD,
    drop_gpus,
    gms_of,
    gpu_count,
)
from backends.multinode import InterPodLayout, Role

Json = dict[str, Any]

__all__ = [
    "FAILOVER_GROUP_LABEL",
    "GMS_SUFFIX",
    "InterPodDeployer",
    "claim_template_configs",
    "claim_template_name",
    "engine_pods",
    "finish_engine_pod",
    "inter_pod_failover",
    "inter_pod_gms",
    "inter_pod_roles",
    "main_gpus",
    "resource_sharing",
    "start_after",
    "weight_server_pod",
]

GMS_SUFFIX = "gms"
FAILOVER_GROUP_LABEL = "nvidia.com/dynamo-failover-engine-group-member"
VOLUME = "gms-shared"
HOST_PATH = "/run/gms"
SOCKET_DIR = "/run/gms/shared"
LOCK_FILE = f"{SOCKET_DIR}/failover.lock"
PERMISSIONS_INIT = "fix-gms-perms"
SERVER_MODULE = "gpu_memory_service.cli.server"
TAGS = ("weights", "kv_cache")
REQUEST_NAME = "gpu"
POD_INDEX_LABEL = "grove.io/podclique-pod-index"
LOGICAL_INSTANCE_ENV = "DYN_DISCOVERY_LOGICAL_INSTANCE_KEY"
VLLM_LOAD_FORMAT = ["--load-format", "gms"]
#: What a failover engine is told unless it says otherwise: exit at once when stopped.
_FAST_SHUTDOWN = (("DYN_GRACEFUL_SHUTDOWN_GRACE_PERIOD_SECS", "0"),
                  ("DYN_GMS_FAILOVER_FAST_EXIT_ON_SIGTERM", "1"))


def inter_pod_gms(component: v1beta1.DynamoComponentDeploymentSharedSpec) -> bool:
    """Whether the component asks for the inter-pod GMS layout."""
    gms = gms_of(component)
    return gms is not None and gms.mode == INTER_POD


def inter_pod_failover(component: v1beta1.DynamoComponentDeploymentSharedSpec) -> bool:
    """Whether the component fails over between engine pods."""
    experimental = component.experimental
    failover = experimental.failover if experimental is not None else None
    return failover is not None and failover.mode == INTER_POD


def engine_pods(component: v1beta1.DynamoComponentDeploymentSharedSpec) -> int:
    """Engine pods per rank: one, or the primary and its shadows (at least one)."""
    if not inter_pod_failover(component):
        return 1
    experimental = component.experimental
    shadows = experimental.failover.num_shadows if experimental and experimental.failover else 1
    return 1 + max(shadows or 1, 1)


def inter_pod_roles(key: str, component: v1beta1.DynamoComponentDeploymentSharedSpec,
                    nodes: int) -> list[Role]:
    """The cliques of an inter-pod GMS component `key` on `nodes` nodes: per rank, the
    weight server then the engines."""
    name = key.lower()
    layout: InterPodLayout = "failover" if inter_pod_failover(component) else "gms"
    engines = engine_pods(component)
    if nodes <= 1:
        return [Role("gms", f"{name}-{GMS_SUFFIX}-0", 1, 1, rank=0, inter_pod=layout),
                Role("main", name, engines, 1, rank=0, inter_pod=layout)]
    roles: list[Role] = []
    for rank in range(nodes):
        roles.append(Role("gms", f"{name}-{GMS_SUFFIX}-{rank}", 1, nodes, rank=rank,
                          inter_pod=layout))
        if rank == 0:
            roles.append(Role("leader", naming.leader_role(name), engines, nodes, rank=0,
                              inter_pod=layout))
        else:
            roles.append(Role("worker", f"{naming.worker_role(name)}-{rank}", engines, nodes,
                              rank=rank, inter_pod=layout))
    return roles


@dataclass(frozen=True)
class InterPodDeployer:
    """Grove under the inter-pod layout: each rank is a clique of its own whose pods (the
    primary and shadows) pair with the pods of the same index in the other ranks, so the
    leader is found at the pod's own index and the rank is static (`worker_rank`). No
    orchestrator variable holds that rank: `rank_variable` names the pod's index among its
    rank's primary and shadows, and `DYNAMO_RANK` states the rank itself
    (`backends.portable_topology`)."""

    rank: int
    name: str = "grove"
    needs_dns_wait: bool = False
    rank_variable: str = "GROVE_PCLQ_POD_INDEX"

    def leader_host(self, name: str) -> str:
        return self._host(naming.leader_role(name.lower()))

    def hosts(self, name: str, nodes: int) -> list[str]:
        workers = [self._host(f"{naming.worker_role(name.lower())}-{rank}")
                   for rank in range(1, nodes)]
        return [self.leader_host(name), *workers]

    def worker_rank(self) -> tuple[str, bool]:
        return str(self.rank), False

    @staticmethod
    def _host(clique: str) -> str:
        return (f"$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-{clique}-$(GROVE_PCLQ_POD_INDEX)."
                "$(GROVE_HEADLESS_SERVICE)")


def claim_template_name(key: str, rank: int) -> str:
    """`<component>-gpu-rank-<rank>`: the PodCliqueSet's claim template of one rank."""
    return f"{_kube_name(key)}-gpu-rank-{rank}"


def _kube_name(name: str) -> str:
    """A name as Kubernetes resources take it: lower case, dots as hyphens."""
    return name.replace(".", "-").lower()


def main_gpus(component: v1beta1.DynamoComponentDeploymentSharedSpec) -> int:
    """The GPUs `main` asks (each rank's claim gives that many)."""
    main = v1beta1.main_container(component) or {}
    return gpu_count(main.get("resources"))


def claim_template_configs(key: str, component: v1beta1.DynamoComponentDeploymentSharedSpec,
                           roles: list[Role]) -> list[Json]:
    """The PodCliqueSet's `resourceClaimTemplates` of the component: one per rank, each
    asking the DeviceClass for the GPUs `main` asks."""
    gms = gms_of(component)
    device_class = (gms.device_class_name if gms is not None else None) or DEFAULT_DEVICE_CLASS
    count = main_gpus(component)
    ranks = sorted({r.rank for r in roles})
    return [{
        "name": claim_template_name(key, rank),
        "templateSpec": {"spec": {"devices": {"requests": [{
            "name": REQUEST_NAME,
            "exactly": {"deviceClassName": device_class, "allocationMode": "ExactCount",
                        "count": count},
        }]}}},
    } for rank in ranks]


def resource_sharing(key: str, roles: list[Role]) -> list[Json]:
    """The scaling group's `resourceSharing`: each rank's claim, one per group replica, for
    the rank's weight server and engines only."""
    ranks: dict[int, list[str]] = {}
    for role in roles:
        ranks.setdefault(role.rank, []).append(role.name)
    return [{"name": claim_template_name(key, rank), "scope": "PerReplica",
             "filter": {"childCliqueNames": names}} for rank, names in ranks.items()]


def start_after(roles: list[Role]) -> dict[str, list[str]]:
    """Engine clique -> the weight-server clique of its rank it starts after."""
    servers = {r.rank: r.name for r in roles if r.kind == "gms"}
    return {r.name: [servers[r.rank]] for r in roles if r.kind != "gms" and r.rank in servers}


def _shared_volume(rank: int) -> tuple[Json, Json]:
    volume = {"name": VOLUME, "hostPath": {"path": HOST_PATH, "type": "DirectoryOrCreate"}}
    mount = {"name": VOLUME, "mountPath": SOCKET_DIR,
             "subPathExpr": f"$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)/rank-{rank}"}
    return volume, mount


def _permissions_init(rank: int, image: Any) -> Json:
    """The root init container opening the rank's socket directory to every user."""
    init: Json = {
        "name": PERMISSIONS_INIT,
        "command": ["sh", "-c", f"chmod 1777 {SOCKET_DIR}"],
        "securityContext": {"runAsUser": 0, "runAsNonRoot": False},
        "volumeMounts": [_shared_volume(rank)[1]],
    }
    if image:
        init["image"] = copy_json(image)
    return init


def _share(pod: Json, rank: int, image: Any) -> Json:
    """The socket volume, its permissions init and the GPU toleration on `pod`; the mount."""
    volume, mount = _shared_volume(rank)
    pod["volumes"] = [*(v for v in pod.get("volumes") or [] if v.get("name") != VOLUME), volume]
    pod["initContainers"] = [*(pod.get("initContainers") or []), _permissions_init(rank, image)]
    tolerations = pod.get("tolerations") or []
    if not any(t.get("key") == GPU_TOLERATION["key"] and t.get("effect") ==
               GPU_TOLERATION["effect"] for t in tolerations):
        pod["tolerations"] = [*tolerations, dict(GPU_TOLERATION)]
    return mount


def _drop_gpus(container: Json) -> None:
    drop_gpus(container)
    if not container.get("resources"):
        container.pop("resources", None)


def _set_env(container: Json, env: list[Json]) -> None:
    names = {e["name"] for e in env}
    container["env"] = [*(e for e in container.get("env") or [] if e.get("name") not in names),
                        *env]


def _main(pod: Json) -> Json:
    return next(c for c in pod.get("containers") or [] if c.get("name") ==
                constants.MAIN_CONTAINER)


def _socket_probe(tag: str, gpus: int) -> list[str]:
    return ["sh", "-c", f"test $(ls {SOCKET_DIR}/gms_*_{tag}.sock 2>/dev/null | wc -l) -ge {gpus}"]


def _server_script(tag: str) -> str:
    """One GMS server group for `tag` (a child server per GPU the claim gives), its stale
    sockets removed first, its exit code passed on."""
    return "\n".join([
        f"rm -f {SOCKET_DIR}/gms_*_{tag}.sock",
        "rc=1",
        'cleanup() { kill -- -$$ 2>/dev/null; exit "$rc"; }',
        "trap cleanup SIGTERM SIGINT",
        f"GMS_SERVER_TAGS={tag} python3 -m {SERVER_MODULE} &",
        f'echo "Started GMS {tag} server pid=$!"',
        "wait -n",
        "rc=$?",
        f'echo "GMS {tag} server exited (code=$rc), shutting down"',
        "cleanup",
    ])


def weight_server_pod(base: Json, role: Role, gpus: int, backend: str) -> Json:
    """The weight-server pod of `role`'s rank: the engine's pod spec `base` with its
    containers replaced by one GMS server container per tag, cloned from `main` (which, as
    in the original, carries the backend's failover switch)."""
    pod = copy_json(base)
    main = _main(pod)
    rank = role.rank
    if backend == "vllm" and role.inter_pod == "failover":
        _set_env(main, [{"name": "DYN_VLLM_GMS_SHADOW_MODE", "value": "true"}])
    mount = _share(pod, rank, main.get("image"))
    servers = []
    for tag in TAGS:
        server = copy_json(main)
        server["name"] = "gms-" + tag.replace("_", "-")
        server["command"] = ["bash", "-c"]
        server["args"] = [_server_script(tag)]
        server.pop("ports", None)
        _drop_gpus(server)
        probe = {"exec": {"command": _socket_probe(tag, gpus)}}
        server["startupProbe"] = {**probe, "periodSeconds": 2, "timeoutSeconds": 2,
                                  "failureThreshold": 150}
        server["readinessProbe"] = {**copy_json(probe), "periodSeconds": 5, "timeoutSeconds": 2}
        server["livenessProbe"] = {**copy_json(probe), "periodSeconds": 10, "timeoutSeconds": 2,
                                   "failureThreshold": 3}
        server["env"] = [*(server.get("env") or []),
                         {"name": "GMS_SOCKET_DIR", "value": SOCKET_DIR},
                         {"name": "GMS_SERVER_TAGS", "value": tag}]
        server["volumeMounts"] = [*(server.get("volumeMounts") or []), copy_json(mount)]
        servers.append(server)
    pod["containers"] = servers
    canonical_pod_spec(pod)
    return pod


def finish_engine_pod(pod: Json, role: Role, key: str, backend: str) -> None:
    """Wire an engine pod of the inter-pod layout in place (`key`: the component)."""
    main = _main(pod)
    failover = role.inter_pod == "failover"
    if backend == "vllm":
        _vllm(main, failover)
    env: list[Json] = [
        {"name": "ENGINE_ID",
         "valueFrom": {"fieldRef": {"fieldPath": f"metadata.labels['{POD_INDEX_LABEL}']"}}},
        {"name": "GMS_SOCKET_DIR", "value": SOCKET_DIR},
        {"name": "FAILOVER_LOCK_PATH", "value": LOCK_FILE},
        {"name": "DYN_SYSTEM_STARTING_HEALTH_STATUS", "value": "notready"},
    ]
    if failover:
        # Primary and shadows publish one logical worker: the key leaves the pod index out.
        logical = key + role.name[len(key):]
        env += [{"name": LOGICAL_INSTANCE_ENV,
                 "value": f"$(POD_NAMESPACE)/$(GROVE_PCSG_NAME)/$(GROVE_PCSG_INDEX)/{logical}"},
                {"name": "DYN_GMS_FAILOVER_SHADOW_MODE", "value": "true"}]
    _set_env(main, env)
    main["env"] = [e for e in main["env"]
                   if e.get("name") != "DYN_SYSTEM_USE_ENDPOINT_HEALTH_STATUS"]
    _drop_gpus(main)
    mount = _share(pod, role.rank, main.get("image"))
    main["volumeMounts"] = [*(main.get("volumeMounts") or []), mount]
    if failover:
        given = {e.get("name") for e in main["env"]}
        main["env"] += [{"name": n, "value": v} for n, v in _FAST_SHUTDOWN if n not in given]
        # A cohort cannot survive an engine restarted in place: the pods are replaced.
        pod["restartPolicy"] = "Never"
    canonical_pod_spec(pod)


def _vllm(main: Json, failover: bool) -> None:
    words = " ".join([*(main.get("command") or []), *(main.get("args") or [])]).split()
    loads_gms = any(w == "--load-format" and i + 1 < len(words) and words[i + 1] == "gms"
                    for i, w in enumerate(words)) or "--load-format=gms" in words
    if not loads_gms:
        command.inject_flags(main, "vllm", list(VLLM_LOAD_FORMAT), needs_shell=False)
    if failover:
        _set_env(main, [{"name": "DYN_VLLM_GMS_SHADOW_MODE", "value": "true"}])
