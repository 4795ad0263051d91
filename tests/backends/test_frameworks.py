"""Backend strategies: which one a component gets, and what each does to multinode pods
(spec/podgen.md sections 7-8 and cases 9-16)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from backend_cases import IMAGE, env, main_of, pod, worker_service

from backends import command, frameworks
from backends.errors import GenerationError
from backends.frameworks import registry
from backends.frameworks.base import BackendContext
from backends.multinode import LWS

Json = dict[str, Any]
GROVE_LEADER = "$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-svc-ldr-0.$(GROVE_HEADLESS_SERVICE)"


# --- selection -----------------------------------------------------------------------------
def test_every_backend_module_is_registered() -> None:
    assert frameworks.names() == ["noop", "sglang", "trtllm", "vllm"]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("python -m dynamo.vllm.worker --model test", "vllm"),
        ("python3.11 -m dynamo.sglang", "sglang"),
        ("echo start && python -m dynamo.vllm.worker --model test | tee /tmp/log", "vllm"),
        ("python3 -m dynamo.trtllm --model-path m", "trtllm"),
        ("echo hello world", None),
    ],
)
def test_backend_is_detected_from_the_command(line: str, expected: str | None) -> None:
    assert frameworks.detect(["sh", "-c"], [line]) == expected


def test_two_frameworks_in_one_command_is_an_error() -> None:
    with pytest.raises(GenerationError) as err:
        frameworks.resolve(
            "worker",
            ["sh", "-c"],
            ["python -m dynamo.vllm.worker && python -m dynamo.sglang"],
            None,
        )
    assert str(err.value) == (
        "could not determine backend framework: multiple backend frameworks detected from "
        "command: sglang, vllm"
    )


def test_configured_backend_settles_an_ambiguous_command() -> None:
    both = ["python -m dynamo.vllm && python -m dynamo.sglang"]
    assert frameworks.resolve("worker", ["sh", "-c"], both, "sglang").name == "sglang"


def test_detected_and_configured_backends_must_agree() -> None:
    with pytest.raises(GenerationError) as err:
        frameworks.resolve("worker", ["python3", "-m", "dynamo.vllm"], [], "sglang")
    assert str(err.value) == (
        'backend framework mismatch: detected "vllm" from command but explicitly configured '
        'as "sglang"'
    )


def test_unknown_backend_framework_is_an_error() -> None:
    with pytest.raises(GenerationError) as err:
        frameworks.resolve("worker", ["python3"], ["serve.py"], "tgi")
    assert str(err.value) == "unsupported backend framework: tgi"


def test_configured_backend_applies_when_nothing_is_detected() -> None:
    assert frameworks.resolve("decode", ["python3"], ["serve.py"], "trtllm").name == "trtllm"
    assert frameworks.resolve("worker", ["python3"], ["serve.py"], None).name == "noop"


@pytest.mark.parametrize("component_type", ["frontend", "planner", "epp", None, "main"])
def test_non_workers_get_the_noop_backend(component_type: str | None) -> None:
    resolved = frameworks.resolve(component_type, ["python3", "-m", "dynamo.vllm"], [], "vllm")
    assert resolved.name == "noop"


@dataclass(frozen=True)
class _EchoBackend:
    name: str = "echo"
    default_cache_mount: str | None = "/echo-cache"

    def update_container(self, container: Json, ctx: BackendContext) -> None:
        container["env"].append({"name": "ECHO_ROLE", "value": ctx.role.kind})

    def update_pod_spec(self, pod_spec: Json, ctx: BackendContext) -> None:
        pod_spec["hostNetwork"] = True


@pytest.fixture
def echo_backend() -> Iterator[None]:
    registry.register(_EchoBackend())
    yield
    del registry._BACKENDS["echo"]


def test_a_registered_backend_is_detected_and_used(echo_backend: None) -> None:
    service = worker_service(["python3", "-m", "dynamo.echo"], [])
    service["volumeMounts"] = [{"name": "c", "useAsCompilationCache": True}]
    spec = pod(service, role="leader", nodes=2)
    assert spec["hostNetwork"] is True
    assert env(main_of(spec))["ECHO_ROLE"] == "leader"
    assert {"name": "c", "mountPath": "/echo-cache"} in main_of(spec)["volumeMounts"]


# --- command helpers -----------------------------------------------------------------------
@pytest.mark.parametrize(
    "word", ["python", "python3", "python2", "python3.11", "python2.7", "python3.12.1",
             "/usr/bin/python3.8"],
)  # fmt: skip
def test_python_interpreters_are_recognised(word: str) -> None:
    assert command.is_python([word])


@pytest.mark.parametrize("word", ["java", "sh", "node", "python-config", "", "python ", "pythonx"])
def test_other_programs_are_not_python(word: str) -> None:
    assert not command.is_python([word])
    assert not command.is_python([])


FLAGS = ["--dist-init-addr", "leader.example.com:29500", "--nnodes", "2", "--node-rank", "1"]


def test_flags_are_appended_to_a_python_exec_form() -> None:
    container = {"command": ["python3"], "args": ["-m", "dynamo.sglang.worker", "--model", "llama"]}
    command.inject_flags(container, "sglang", FLAGS, needs_shell=False)
    assert container["args"] == ["-m", "dynamo.sglang.worker", "--model", "llama", *FLAGS]


def test_flags_needing_a_shell_turn_the_exec_form_into_sh_c_exec() -> None:
    container = {"command": ["python3"], "args": ["-m", "dynamo.sglang.worker", "--model", "llama"]}
    flags = ["--dist-init-addr", "$(LEADER_HOST):29500", "--nnodes", "2"]
    flags += ["--node-rank", "$(WORKER_INDEX)"]
    command.inject_flags(container, "sglang", flags, needs_shell=True)
    assert container["command"] == ["sh", "-c"]
    assert container["args"] == [
        "exec python3 -m dynamo.sglang.worker --model llama --dist-init-addr $(LEADER_HOST):29500"
        " --nnodes 2 --node-rank $(WORKER_INDEX)"
    ]


def test_exec_form_arguments_are_quoted_in_the_shell_line() -> None:
    container = {"command": ["python3"], "args": ["-m", "dynamo.vllm", "--cfg", '{"a": 1}']}
    command.inject_flags(container, "vllm", ["--x", "$((1 + 1))"], needs_shell=True)
    assert container["args"] == ["exec python3 -m dynamo.vllm --cfg '{\"a\": 1}' --x $((1 + 1))"]


def test_non_python_commands_are_left_alone() -> None:
    container = {"command": ["java"], "args": ["-jar", "app.jar"]}
    command.inject_flags(container, "sglang", FLAGS, needs_shell=False)
    assert container == {"command": ["java"], "args": ["-jar", "app.jar"]}


def test_only_the_shell_argument_running_the_module_gets_the_flags() -> None:
    container = {
        "command": ["sh", "-c"],
        "args": ["echo start", "python -m dynamo.sglang.worker", "echo done"],
    }
    command.inject_flags(container, "sglang", FLAGS, needs_shell=False)
    assert container["args"] == [
        "echo start",
        "python -m dynamo.sglang.worker " + " ".join(FLAGS),
        "echo done",
    ]


# --- vLLM ----------------------------------------------------------------------------------
def test_vllm_ray_leader_and_worker_on_grove() -> None:
    # spec case 10: the user's probes stay on the leader; the worker only runs a Ray agent.
    args = ["--custom-flag", "custom-value", "--tensor-parallel-size", "4",
            "--pipeline-parallel-size", "1"]  # fmt: skip
    service = worker_service(["python3", "-m", "dynamo.vllm"], args, gpus="2")
    service["extraPodSpec"]["mainContainer"]["startupProbe"] = {
        "httpGet": {"path": "/startup", "port": 8080}
    }
    service["readinessProbe"] = {"httpGet": {"path": "/ready", "port": 8080}}
    service["livenessProbe"] = {"httpGet": {"path": "/health", "port": 8080}}
    leader = main_of(pod(service, role="leader", nodes=3))
    assert leader["command"] == ["/bin/sh", "-c"]
    assert leader["args"] == [
        "ray start --head --port=6379 && python3 -m dynamo.vllm --custom-flag custom-value "
        "--tensor-parallel-size 4 --pipeline-parallel-size 1 --distributed-executor-backend ray"
    ]
    assert leader["startupProbe"]["httpGet"]["path"] == "/startup"
    assert leader["readinessProbe"]["httpGet"]["path"] == "/ready"
    assert leader["livenessProbe"]["httpGet"]["path"] == "/health"
    worker = main_of(pod(service, role="worker", nodes=3))
    assert worker["args"] == [f"ray start --address={GROVE_LEADER}:6379 --block"]
    assert not {"livenessProbe", "readinessProbe", "startupProbe"} & set(worker)


def test_vllm_data_parallel_leader_in_shell_form() -> None:
    # spec case 11: flags right after the module, before the user's own flags.
    service = worker_service(["sh", "-c"], ["python3 -m dynamo.vllm --data-parallel-size 8"])
    leader = main_of(pod(service, role="leader", nodes=2))
    assert leader["command"] == ["sh", "-c"]
    assert leader["args"] == [
        "python3 -m dynamo.vllm --data-parallel-hybrid-lb --data-parallel-size-local 4 "
        f"--data-parallel-start-rank 0 --data-parallel-address {GROVE_LEADER} "
        "--data-parallel-rpc-port 13445 --data-parallel-size 8"
    ]


def test_vllm_data_parallel_flags_go_before_a_pipe() -> None:
    service = worker_service(
        ["sh", "-c"], ["python3 -m dynamo.vllm --data-parallel-size 8 | tee /tmp/log"]
    )
    args = main_of(pod(service, role="leader", nodes=2))["args"][0]
    assert args.endswith("--data-parallel-rpc-port 13445 --data-parallel-size 8 | tee /tmp/log")


def test_vllm_data_parallel_uses_the_lws_leader_address_on_lws() -> None:
    service = worker_service(["sh", "-c"], ["python3 -m dynamo.vllm --data-parallel-size 8"])
    args = main_of(pod(service, role="leader", nodes=2, deployer=LWS))["args"][0]
    assert "--data-parallel-address $(LWS_LEADER_ADDRESS) " in args


def test_vllm_data_parallel_worker_in_python_form() -> None:
    # spec case 12: the rank needs shell arithmetic, so the exec form becomes sh -c exec.
    service = worker_service(
        ["python3"], ["-m", "dynamo.vllm", "--data-parallel-size", "2"], gpus="1"
    )
    worker = main_of(pod(service, role="worker", nodes=2))
    assert worker["command"] == ["sh", "-c"]
    assert worker["args"] == [
        "exec python3 -m dynamo.vllm --data-parallel-size 2 --data-parallel-hybrid-lb "
        "--data-parallel-size-local 1 --data-parallel-start-rank "
        f"$(( 1 * $((GROVE_PCLQ_POD_INDEX + 1)) )) --data-parallel-address {GROVE_LEADER} "
        "--data-parallel-rpc-port 13445"
    ]


def test_vllm_that_fits_on_one_node_changes_no_command() -> None:
    fits = worker_service(["python3", "-m", "dynamo.vllm"], ["--model", "m"], gpus="4")
    assert main_of(pod(fits, role="leader", nodes=2))["args"] == ["--model", "m"]


def test_vllm_without_gpus_changes_no_command() -> None:
    service = worker_service(["python3", "-m", "dynamo.vllm"], ["--tensor-parallel-size", "8"])
    del service["resources"]
    assert main_of(pod(service, role="leader", nodes=2))["args"] == ["--tensor-parallel-size", "8"]


def test_vllm_ray_leader_in_shell_form_keeps_the_script() -> None:
    script = "python3 -m dynamo.vllm --tensor-parallel-size 8 | tee l"
    service = worker_service(["/bin/sh", "-c"], [script])
    leader = main_of(pod(service, role="leader", nodes=2))
    assert leader["args"] == [
        "ray start --head --port=6379 && python3 -m dynamo.vllm --distributed-executor-backend "
        "ray --tensor-parallel-size 8 | tee l"
    ]


def test_vllm_single_node_is_untouched() -> None:
    service = worker_service(["python3", "-m", "dynamo.vllm"], ["--tensor-parallel-size", "8"])
    main = main_of(pod(service))
    assert main["command"] == ["python3", "-m", "dynamo.vllm"]
    assert main["args"] == ["--tensor-parallel-size", "8"]


# --- SGLang --------------------------------------------------------------------------------
def test_sglang_grove_leader_and_worker_in_shell_form() -> None:
    # spec case 9.
    service = worker_service(
        ["/bin/sh", "-c"], ["python3 -m dynamo.sglang --custom-flag custom-value"], gpus="2"
    )
    prefix = f"python3 -m dynamo.sglang --dist-init-addr {GROVE_LEADER}:29500 --nnodes 3"
    leader = main_of(pod(service, role="leader", nodes=3))
    assert leader["args"] == [f"{prefix} --node-rank 0 --custom-flag custom-value"]
    assert "livenessProbe" in leader
    worker = main_of(pod(service, role="worker", nodes=3))
    assert worker["args"] == [
        f"{prefix} --node-rank $((GROVE_PCLQ_POD_INDEX + 1)) --custom-flag custom-value"
    ]
    assert "livenessProbe" not in worker


def test_sglang_worker_rank_on_lws_needs_no_shell() -> None:
    service = worker_service(["python3"], ["-m", "dynamo.sglang", "--model", "llama"])
    worker = main_of(pod(service, role="worker", nodes=2, deployer=LWS))
    assert worker["command"] == ["python3"]
    assert worker["args"][-6:] == [
        "--dist-init-addr", "$(LWS_LEADER_ADDRESS):29500", "--nnodes", "2",
        "--node-rank", "$(LWS_WORKER_INDEX)",
    ]  # fmt: skip


def test_sglang_single_node_is_untouched_even_with_a_multinode_section() -> None:
    service = worker_service(["python3", "-m", "dynamo.sglang"], ["--tp", "8"])
    assert main_of(pod(service))["args"] == ["--tp", "8"]


# --- TRT-LLM -------------------------------------------------------------------------------
TRT_SSH_SETUP = (
    "mkdir -p ~/.ssh && ls -la /ssh-pk/ && cp /ssh-pk/private.key ~/.ssh/id_rsa && "
    "cp /ssh-pk/private.key.pub ~/.ssh/id_rsa.pub && cp /ssh-pk/private.key.pub "
    "~/.ssh/authorized_keys && chmod 600 ~/.ssh/id_rsa ~/.ssh/authorized_keys && "
    "chmod 644 ~/.ssh/id_rsa.pub ~/.ssh/authorized_keys && printf 'Host *\\nIdentityFile "
    "~/.ssh/id_rsa\\nStrictHostKeyChecking no\\nPort 2222\\n' > ~/.ssh/config"
)


def test_trtllm_grove_leader_runs_mpirun_over_ssh() -> None:
    # spec case 14 (with the platform env of the test settings forwarded as well).
    service = {
        "componentType": "worker",
        "resources": {"requests": {"gpu": "2"}},
        "extraPodSpec": {"mainContainer": {"image": IMAGE, "args": ["python3", "--model", "test"]}},
    }
    spec = pod(service, role="leader", nodes=3, backend="trtllm")
    leader = main_of(spec)
    hosts = ",".join(
        [GROVE_LEADER]
        + [f"$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-svc-wkr-{i}.$(GROVE_HEADLESS_SERVICE)"
           for i in range(2)]
    )  # fmt: skip
    names = sorted(
        {e["name"] for e in leader["env"]}
        | {"CUDA_VISIBLE_DEVICES", "MODEL_PATH", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN",
           "HF_ENDPOINT", "TOKENIZERS_PARALLELISM", "NCCL_DEBUG", "NCCL_IB_DISABLE",
           "NCCL_P2P_DISABLE", "TENSORRT_LLM_CACHE_DIR", "HF_HOME", "TRANSFORMERS_CACHE",
           "HF_DATASETS_CACHE", "PATH", "LD_LIBRARY_PATH", "PYTHONPATH", "HOME", "USER"}
    )  # fmt: skip
    assert leader["command"] == ["/bin/sh", "-c"]
    assert leader["args"] == [
        f"{TRT_SSH_SETUP} && mpirun --allow-run-as-root --oversubscribe -n 6 -H {hosts} "
        '--mca pml ob1 --mca plm_rsh_args "-p 2222 -o StrictHostKeyChecking=no -i '
        '~/.ssh/id_rsa" '
        + " ".join(f"-x {n}" for n in names)
        + " bash -c 'trtllm-llmapi-launch python3 --model test'"
    ]
    assert env(leader)["OMPI_MCA_orte_keep_fqdn_hostnames"] == "1"
    assert {"name": "mpi-run-ssh-secret", "mountPath": "/ssh-pk", "readOnly": True} in leader[
        "volumeMounts"
    ]
    assert {
        "name": "mpi-run-ssh-secret",
        "secret": {"secretName": "mpi-run-ssh-secret", "defaultMode": 420},
    } in spec["volumes"]
    assert "livenessProbe" in leader


def test_trtllm_lws_leader_waits_for_worker_dns() -> None:
    # spec case 15, with the kubelet-expanded form of the LWS leader address.
    service = worker_service(["python3", "-m", "dynamo.trtllm"], [], gpus="1")
    args = main_of(pod(service, role="leader", nodes=2, deployer=LWS))["args"][0]
    hosts = "$(LWS_LEADER_ADDRESS),$(echo \"$LWS_LEADER_ADDRESS\" | sed 's/\\./-1\\./')"
    assert f"-n 2 -H {hosts} " in args
    assert f"for worker in $(echo \"{hosts}\" | tr ',' ' '); do" in args
    assert args.index("All workers DNS ready") < args.index("mpirun")
    assert args.endswith("bash -c 'trtllm-llmapi-launch python3 -m dynamo.trtllm'")


def test_trtllm_worker_runs_sshd() -> None:
    # spec case 16.
    service = worker_service(["python3", "-m", "dynamo.trtllm"], [])
    worker = main_of(pod(service, role="worker", nodes=3))
    script = worker["args"][0]
    assert script.startswith("mkdir -p ~/.ssh ~/.ssh/host_keys ~/.ssh/run && ls -la /ssh-pk/")
    assert "ssh-keygen -t ed25519 -f ~/.ssh/host_keys/ssh_host_ed25519_key -N ''" in script
    assert script.endswith(
        "AuthorizedKeysFile ~/.ssh/authorized_keys\\n' > ~/.ssh/sshd_config && "
        "/usr/sbin/sshd -D -f ~/.ssh/sshd_config"
    )


def test_trtllm_launch_line_keeps_single_quotes() -> None:
    service = worker_service(["sh", "-c"], ["python3 -m dynamo.trtllm --name 'a b'"])
    args = main_of(pod(service, role="leader", nodes=2))["args"][0]
    assert args.endswith(
        "bash -c 'trtllm-llmapi-launch python3 -m dynamo.trtllm --name '\"'\"'a b'\"'\"''"
    )


def test_trtllm_single_node_is_untouched() -> None:
    service = worker_service(["python3", "-m", "dynamo.trtllm"], ["--model", "m"])
    spec = pod(service)
    assert main_of(spec)["args"] == ["--model", "m"]
    assert [v["name"] for v in spec["volumes"]] == ["shared-memory"]


def test_the_mpi_secret_name_comes_from_the_settings() -> None:
    from dataclasses import replace

    from backend_cases import SETTINGS

    service = worker_service(["python3", "-m", "dynamo.trtllm"], [])
    spec = pod(service, role="worker", nodes=2, settings=replace(SETTINGS, mpi_run_secret_name="k"))
    assert {"name": "k", "mountPath": "/ssh-pk", "readOnly": True} in main_of(spec)["volumeMounts"]
