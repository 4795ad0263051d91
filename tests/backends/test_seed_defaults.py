"""Each default of the API reference's "Operator Default Values Injection" section, asserted
by a test that names it."""

from __future__ import annotations

from typing import Any

from backend_cases import IMAGE, env, main_of, pod, worker_service

Json = dict[str, Any]

FRONTEND: Json = {"componentType": "frontend", "extraPodSpec": {"mainContainer": {"image": IMAGE}}}
WORKER = worker_service(["python3", "-m", "dynamo.vllm"], ["--model", "m"], gpus="1")
PLANNER: Json = {"componentType": "planner", "extraPodSpec": {"mainContainer": {"image": IMAGE}}}


# --- pod specification -------------------------------------------------------------------
def test_termination_grace_period_is_60_seconds() -> None:
    assert pod(FRONTEND)["terminationGracePeriodSeconds"] == 60
    assert pod(WORKER)["terminationGracePeriodSeconds"] == 60


def test_restart_policy_is_always() -> None:
    assert pod(PLANNER)["restartPolicy"] == "Always"


# --- security context ----------------------------------------------------------------------
def test_security_context_fs_group_is_1000() -> None:
    assert pod(WORKER)["securityContext"] == {"fsGroup": 1000}


def test_any_user_security_context_disables_the_fs_group_default() -> None:
    given = {"runAsUser": 2000, "runAsGroup": 3000}
    service = {**FRONTEND, "extraPodSpec": {**FRONTEND["extraPodSpec"], "securityContext": given}}
    assert pod(service)["securityContext"] == given
    service["extraPodSpec"]["securityContext"] = {"fsGroup": 7000}
    assert pod(service)["securityContext"] == {"fsGroup": 7000}
    # Even an empty one: no fsGroup is injected.
    service["extraPodSpec"]["securityContext"] = {}
    assert pod(service).get("securityContext", {}) == {}


# --- shared memory -------------------------------------------------------------------------
def test_shared_memory_is_an_8gi_memory_empty_dir_at_dev_shm() -> None:
    spec = pod(FRONTEND)
    assert spec["volumes"] == [
        {"name": "shared-memory", "emptyDir": {"medium": "Memory", "sizeLimit": "8Gi"}}
    ]
    assert main_of(spec)["volumeMounts"] == [{"name": "shared-memory", "mountPath": "/dev/shm"}]


def test_shared_memory_can_be_resized_and_disabled() -> None:
    resized = pod({**WORKER, "sharedMemory": {"size": "64Gi"}})
    assert resized["volumes"][0]["emptyDir"]["sizeLimit"] == "64Gi"
    disabled = pod({**WORKER, "sharedMemory": {"disabled": True}})
    assert "volumes" not in disabled
    assert "volumeMounts" not in main_of(disabled)


def test_shared_memory_size_zero_means_the_default() -> None:
    spec = pod({**WORKER, "sharedMemory": {"size": "0"}})
    assert spec["volumes"][0]["emptyDir"]["sizeLimit"] == "8Gi"


# --- frontend probes -----------------------------------------------------------------------
def test_frontend_liveness_probe_is_http_get_health_on_port_http() -> None:
    probe = main_of(pod(FRONTEND))["livenessProbe"]
    assert probe["httpGet"] == {"path": "/health", "port": "http"}


def test_frontend_liveness_probe_timings_are_60_60_30_10() -> None:
    probe = main_of(pod(FRONTEND))["livenessProbe"]
    assert probe["initialDelaySeconds"] == 60
    assert probe["periodSeconds"] == 60
    assert probe["timeoutSeconds"] == 30
    assert probe["failureThreshold"] == 10


def test_frontend_readiness_probe_is_the_curl_jq_exec_command() -> None:
    probe = main_of(pod(FRONTEND))["readinessProbe"]
    assert probe["exec"]["command"] == [
        "/bin/sh",
        "-c",
        'curl -s http://localhost:${DYNAMO_PORT}/health | jq -e ".status == \\"healthy\\""',
    ]


def test_frontend_readiness_probe_timings_are_60_60_30_10() -> None:
    probe = main_of(pod(FRONTEND))["readinessProbe"]
    timings = ("initialDelaySeconds", "periodSeconds", "timeoutSeconds", "failureThreshold")
    assert [probe[k] for k in timings] == [60, 60, 30, 10]


def test_frontend_has_no_startup_probe() -> None:
    assert "startupProbe" not in main_of(pod(FRONTEND))


# --- worker probes -------------------------------------------------------------------------
def test_worker_liveness_probe_is_live_on_system_period_5_timeout_30_failure_1() -> None:
    assert main_of(pod(WORKER))["livenessProbe"] == {
        "httpGet": {"path": "/live", "port": "system"},
        "periodSeconds": 5,
        "timeoutSeconds": 30,
        "failureThreshold": 1,
    }


def test_worker_readiness_probe_is_health_on_system_period_10_timeout_30_failure_60() -> None:
    assert main_of(pod(WORKER))["readinessProbe"] == {
        "httpGet": {"path": "/health", "port": "system"},
        "periodSeconds": 10,
        "timeoutSeconds": 30,
        "failureThreshold": 60,
    }


def test_worker_startup_probe_allows_two_hours_720_failures_every_10_seconds() -> None:
    assert main_of(pod(WORKER))["startupProbe"] == {
        "httpGet": {"path": "/live", "port": "system"},
        "periodSeconds": 10,
        "timeoutSeconds": 5,
        "failureThreshold": 720,
    }


def test_prefill_and_decode_components_get_the_worker_defaults() -> None:
    for kind in ("prefill", "decode"):
        spec = main_of(pod({**WORKER, "componentType": kind}))
        assert spec["startupProbe"]["failureThreshold"] == 720
        assert env(spec)["DYN_SYSTEM_PORT"] == "9090"


def test_planner_has_no_probes() -> None:
    main = main_of(pod(PLANNER))
    assert not {"livenessProbe", "readinessProbe", "startupProbe"} & set(main)


# --- multinode probe changes ---------------------------------------------------------------
VLLM_RAY = worker_service(["python3", "-m", "dynamo.vllm"], ["--tensor-parallel-size", "8"])
VLLM_DP = worker_service(["python3", "-m", "dynamo.vllm"], ["--data-parallel-size", "8"])
SGLANG = worker_service(["python3", "-m", "dynamo.sglang"], ["--tp", "8"])
TRTLLM = worker_service(["python3", "-m", "dynamo.trtllm"], ["--model", "m"])
PROBES = {"livenessProbe", "readinessProbe", "startupProbe"}


def test_vllm_ray_leader_keeps_all_probes_and_worker_loses_them() -> None:
    assert set(main_of(pod(VLLM_RAY, role="leader", nodes=2))) >= PROBES
    assert not PROBES & set(main_of(pod(VLLM_RAY, role="worker", nodes=2)))


def test_vllm_data_parallel_leader_keeps_all_probes_and_worker_loses_them() -> None:
    assert set(main_of(pod(VLLM_DP, role="leader", nodes=2))) >= PROBES
    assert not PROBES & set(main_of(pod(VLLM_DP, role="worker", nodes=2)))


def test_sglang_worker_nodes_lose_all_probes() -> None:
    assert set(main_of(pod(SGLANG, role="leader", nodes=2))) >= PROBES
    assert not PROBES & set(main_of(pod(SGLANG, role="worker", nodes=2)))


def test_trtllm_leader_probes_are_unchanged() -> None:
    single = main_of(pod(TRTLLM))
    leader = main_of(pod(TRTLLM, role="leader", nodes=2))
    assert {p: leader[p] for p in PROBES} == {p: single[p] for p in PROBES}


def test_trtllm_worker_readiness_is_tcp_2222_with_20_20_5_10_and_no_other_probes() -> None:
    worker = main_of(pod(TRTLLM, role="worker", nodes=2))
    assert worker["readinessProbe"] == {
        "tcpSocket": {"port": 2222},
        "initialDelaySeconds": 20,
        "periodSeconds": 20,
        "timeoutSeconds": 5,
        "failureThreshold": 10,
    }
    assert "livenessProbe" not in worker
    assert "startupProbe" not in worker


# --- environment ---------------------------------------------------------------------------
def test_all_components_get_dyn_namespace_and_parent_graph_env() -> None:
    for service in (FRONTEND, WORKER, PLANNER, {"extraPodSpec": {"mainContainer": {}}}):
        values = env(main_of(pod(service)))
        assert values["DYN_NAMESPACE"] == "team-graph"
        assert values["DYN_PARENT_DGD_K8S_NAME"] == "graph"
        assert values["DYN_PARENT_DGD_K8S_NAMESPACE"] == "team"


def test_frontend_env_dynamo_port_and_dyn_http_port_are_8000() -> None:
    values = env(main_of(pod(FRONTEND)))
    assert values["DYNAMO_PORT"] == "8000"
    assert values["DYN_HTTP_PORT"] == "8000"


def test_worker_env_dyn_system_port_is_9090_and_enabled() -> None:
    values = env(main_of(pod(WORKER)))
    assert values["DYN_SYSTEM_PORT"] == "9090"
    assert values["DYN_SYSTEM_ENABLED"] == "true"


def test_worker_env_dyn_system_use_endpoint_health_status_is_generate() -> None:
    assert env(main_of(pod(WORKER)))["DYN_SYSTEM_USE_ENDPOINT_HEALTH_STATUS"] == '["generate"]'


def test_planner_env_planner_prometheus_port_is_9085() -> None:
    assert env(main_of(pod(PLANNER)))["PLANNER_PROMETHEUS_PORT"] == "9085"


def test_vllm_cache_root_is_the_compilation_cache_mount_point() -> None:
    explicit = {
        **WORKER,
        "volumeMounts": [{"name": "c", "mountPoint": "/cache", "useAsCompilationCache": True}],
    }
    assert env(main_of(pod(explicit, backend="vllm")))["VLLM_CACHE_ROOT"] == "/cache"
    defaulted = {**WORKER, "volumeMounts": [{"name": "c", "useAsCompilationCache": True}]}
    main = main_of(pod(defaulted, backend="vllm"))
    assert env(main)["VLLM_CACHE_ROOT"] == "/root/.cache/vllm"
    assert {"name": "c", "mountPath": "/root/.cache/vllm"} in main["volumeMounts"]


# --- service account -----------------------------------------------------------------------
def test_planner_service_account_is_planner_serviceaccount() -> None:
    assert pod(PLANNER)["serviceAccountName"] == "planner-serviceaccount"


# --- image pull secrets --------------------------------------------------------------------
def test_image_pull_secrets_are_discovered_by_registry_host() -> None:
    spec = pod(FRONTEND, pull_secrets={"nvcr.io": ["ngc"], "docker.io": ["hub"]})
    assert spec["imagePullSecrets"] == [{"name": "ngc"}]


def test_image_pull_secret_discovery_opt_out_annotation() -> None:
    service = {
        **FRONTEND,
        "annotations": {"nvidia.com/disable-image-pull-secret-discovery": "true"},
    }
    assert "imagePullSecrets" not in pod(service, pull_secrets={"nvcr.io": ["ngc"]})
    for value in ("false", "invalid"):
        service["annotations"]["nvidia.com/disable-image-pull-secret-discovery"] = value
        assert pod(service, pull_secrets={"nvcr.io": ["ngc"]})["imagePullSecrets"]


# --- autoscaling ---------------------------------------------------------------------------
def test_deprecated_autoscaling_field_changes_nothing() -> None:
    # The reference calls the field deprecated and ignored, so its CPU 80% default never
    # materialises: the pod is the same with or without it.
    scaled = {**WORKER, "autoscaling": {"enabled": True, "minReplicas": 1, "maxReplicas": 4}}
    assert pod(scaled) == pod(WORKER)


# --- ports ---------------------------------------------------------------------------------
def test_frontend_port_is_8000_tcp_named_http() -> None:
    assert main_of(pod(FRONTEND))["ports"] == [
        {"name": "http", "containerPort": 8000, "protocol": "TCP"}
    ]


def test_worker_port_is_9090_tcp_named_system() -> None:
    assert main_of(pod(WORKER))["ports"] == [
        {"name": "system", "containerPort": 9090, "protocol": "TCP"}
    ]


def test_planner_port_is_9085_tcp_named_metrics() -> None:
    assert main_of(pod(PLANNER))["ports"] == [
        {"name": "metrics", "containerPort": 9085, "protocol": "TCP"}
    ]


# --- backend-specific ports and env --------------------------------------------------------
def test_vllm_ray_head_port_is_6379() -> None:
    leader = main_of(pod(VLLM_RAY, role="leader", nodes=2))
    assert leader["args"][0].startswith("ray start --head --port=6379 && ")
    worker = main_of(pod(VLLM_RAY, role="worker", nodes=2))
    assert worker["args"] == [
        "ray start --address=$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-svc-ldr-0."
        "$(GROVE_HEADLESS_SERVICE):6379 --block"
    ]


def test_vllm_data_parallel_rpc_port_is_13445() -> None:
    args = main_of(pod(VLLM_DP, role="leader", nodes=2))["args"]
    assert args[args.index("--data-parallel-rpc-port") + 1] == "13445"


def test_sglang_dist_init_port_is_29500() -> None:
    args = main_of(pod(SGLANG, role="leader", nodes=2))["args"]
    assert args[args.index("--dist-init-addr") + 1].endswith(":29500")


def test_trtllm_ssh_port_is_2222_and_ompi_keeps_fqdn_hostnames() -> None:
    leader = main_of(pod(TRTLLM, role="leader", nodes=2))
    assert '--mca plm_rsh_args "-p 2222 ' in leader["args"][0]
    assert env(leader)["OMPI_MCA_orte_keep_fqdn_hostnames"] == "1"
    worker = main_of(pod(TRTLLM, role="worker", nodes=2))
    assert "Port 2222" in worker["args"][0]
    assert env(worker)["OMPI_MCA_orte_keep_fqdn_hostnames"] == "1"
