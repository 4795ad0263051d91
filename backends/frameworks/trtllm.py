"""TensorRT-LLM: a multinode replica is one `mpirun` launched by the leader over SSH; the
workers run only an SSH daemon (port 2222) with keys from a shared Secret."""

from __future__ import annotations

from dataclasses import dataclass

from backends import command
from backends.frameworks.base import BackendContext, Json, remove_probes
from backends.frameworks.registry import register
from backends.resources import gpu_count

SSH_PORT = 2222
KEY_MOUNT = "/ssh-pk"
# Variables every rank needs whether or not the container sets them.
FORWARDED_ENV = (
    "CUDA_VISIBLE_DEVICES", "MODEL_PATH", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_ENDPOINT",
    "TOKENIZERS_PARALLELISM", "NCCL_DEBUG", "NCCL_IB_DISABLE", "NCCL_P2P_DISABLE",
    "TENSORRT_LLM_CACHE_DIR", "HF_HOME", "TRANSFORMERS_CACHE", "HF_DATASETS_CACHE", "PATH",
    "LD_LIBRARY_PATH", "PYTHONPATH", "HOME", "USER",
)  # fmt: skip
_KEY_SETUP = [
    f"ls -la {KEY_MOUNT}/",
    f"cp {KEY_MOUNT}/private.key ~/.ssh/id_rsa",
    f"cp {KEY_MOUNT}/private.key.pub ~/.ssh/id_rsa.pub",
    f"cp {KEY_MOUNT}/private.key.pub ~/.ssh/authorized_keys",
    "chmod 600 ~/.ssh/id_rsa ~/.ssh/authorized_keys",
    "chmod 644 ~/.ssh/id_rsa.pub ~/.ssh/authorized_keys",
    "printf 'Host *\\nIdentityFile ~/.ssh/id_rsa\\nStrictHostKeyChecking no\\n"
    f"Port {SSH_PORT}\\n' > ~/.ssh/config",
]
_HOST_KEYS = ("rsa", "ecdsa", "ed25519")
_SSHD_CONFIG = (
    f"Port {SSH_PORT}\\n"
    + "".join(f"HostKey ~/.ssh/host_keys/ssh_host_{k}_key\\n" for k in _HOST_KEYS)
    + "PidFile ~/.ssh/run/sshd.pid\\nPermitRootLogin yes\\nPasswordAuthentication no\\n"
    "PubkeyAuthentication yes\\nAuthorizedKeysFile ~/.ssh/authorized_keys\\n"
)
_DNS_WAIT = (
    "TIMEOUT=300; START_TIME=$(date +%s); for worker in $(echo \"{hosts}\" | tr ',' ' '); "
    'do echo "Waiting for DNS: $worker"; until getent hosts $worker >/dev/null 2>&1; '
    "do CURRENT_TIME=$(date +%s); if [ $((CURRENT_TIME - START_TIME)) -gt $TIMEOUT ]; "
    'then echo "ERROR: Timeout waiting for DNS: $worker"; exit 1; fi; '
    'echo "DNS not ready for $worker, retrying..."; sleep 2; done; '
    'echo "✓ DNS resolved: $worker"; done; echo "All workers DNS ready"'
)


@dataclass(frozen=True)
class TrtllmBackend:
    """mpirun on the leader, sshd on the workers, for multinode TRT-LLM."""

    name: str = "trtllm"
    default_cache_mount: str | None = None

    def update_container(self, container: Json, ctx: BackendContext) -> None:
        role = ctx.role
        if not role.multinode:
            return
        mounts = container.setdefault("volumeMounts", [])
        mounts.append({"name": ctx.mpi_secret, "mountPath": KEY_MOUNT, "readOnly": True})
        env = container.setdefault("env", [])
        env[:] = [e for e in env if e.get("name") != "OMPI_MCA_orte_keep_fqdn_hostnames"]
        env.append({"name": "OMPI_MCA_orte_keep_fqdn_hostnames", "value": "1"})
        if role.kind == "leader":
            script = self._leader_script(container, ctx)
        else:
            remove_probes(container, "livenessProbe", "startupProbe")
            container["readinessProbe"] = {
                "tcpSocket": {"port": SSH_PORT},
                "initialDelaySeconds": 20,
                "periodSeconds": 20,
                "timeoutSeconds": 5,
                "failureThreshold": 10,
            }
            script = self._worker_script()
        container["command"] = list(command.SHELL)
        container["args"] = [script]

    def update_pod_spec(self, pod_spec: Json, ctx: BackendContext) -> None:
        if not ctx.role.multinode:
            return
        volume = {
            "name": ctx.mpi_secret,
            "secret": {"secretName": ctx.mpi_secret, "defaultMode": 0o644},
        }
        pod_spec["volumes"] = [*pod_spec.get("volumes", []), volume]

    @staticmethod
    def _leader_script(container: Json, ctx: BackendContext) -> str:
        hosts = ",".join(ctx.deployer.hosts(ctx.host_name, ctx.role.nodes))
        ranks = ctx.role.nodes * gpu_count(ctx.resources)
        names = {str(e.get("name")) for e in container.get("env", [])} | set(FORWARDED_ENV)
        forwarded = " ".join(f"-x {name}" for name in sorted(names))
        launch = "trtllm-llmapi-launch " + _original_line(container)
        mpirun = (
            f"mpirun --allow-run-as-root --oversubscribe -n {ranks} -H {hosts} "
            f'--mca pml ob1 --mca plm_rsh_args "-p {SSH_PORT} -o StrictHostKeyChecking=no '
            f'-i ~/.ssh/id_rsa" {forwarded} bash -c {_single_quoted(launch)}'
        )
        steps = ["mkdir -p ~/.ssh", *_KEY_SETUP]
        if ctx.deployer.needs_dns_wait:
            steps.append(_DNS_WAIT.format(hosts=hosts))
        return " && ".join([*steps, mpirun])

    @staticmethod
    def _worker_script() -> str:
        keygen = [
            f"ssh-keygen -t {k} -f ~/.ssh/host_keys/ssh_host_{k}_key -N ''" for k in _HOST_KEYS
        ]
        return " && ".join(
            [
                "mkdir -p ~/.ssh ~/.ssh/host_keys ~/.ssh/run",
                *_KEY_SETUP,
                *keygen,
                f"printf '{_SSHD_CONFIG}' > ~/.ssh/sshd_config",
                "/usr/sbin/sshd -D -f ~/.ssh/sshd_config",
            ]
        )


def _original_line(container: Json) -> str:
    """What the container ran before the rewrite, as a shell command line."""
    cmd: list[str] = list(container.get("command") or [])
    args: list[str] = list(container.get("args") or [])
    if command.is_python(cmd):
        return command.quote_join([*cmd, *args])
    return " ".join(args) if args else " ".join(cmd)


def _single_quoted(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"


register(TrtllmBackend())
