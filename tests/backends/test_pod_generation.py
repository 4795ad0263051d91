"""Pod-spec assembly: overrides, env precedence, resources, volumes, pull secrets, security
context and the error messages of specs that cannot become pods (spec/podgen.md section 5)."""

from __future__ import annotations

import base64
import json
from dataclasses import replace
from typing import Any

import pytest
from backend_cases import IMAGE, SETTINGS, containers, env, main_of, pod, worker_service

from backends.errors import GenerationError
from backends.merge import merge_env
from backends.pull_secrets import image_host, index_secrets, lookup, registry_host
from backends.settings import OperatorSettings

Json = dict[str, Any]


def _worker(**main: Any) -> Json:
    return {"componentType": "worker", "extraPodSpec": {"mainContainer": {"image": IMAGE, **main}}}


def test_worked_base_pod_spec_of_a_worker() -> None:
    # spec section 6, with the v0.8 env and the seeds' probe timings.
    service = _worker(
        command=["python3"], args=["-m", "dynamo.worker"],
        env=[{"name": "ANOTHER_CONTAINER_ENV", "value": "true"}],
    )  # fmt: skip
    service["envs"] = [{"name": "ANOTHER_COMPONENTENV", "value": "true"}]
    spec = pod(service, backend="sglang", settings=OperatorSettings())
    main = main_of(spec)
    assert [e["name"] for e in main["env"]] == [
        "ANOTHER_COMPONENTENV", "ANOTHER_CONTAINER_ENV", "DYN_COMPONENT", "DYN_DISCOVERY_BACKEND",
        "DYN_HEALTH_CHECK_ENABLED", "DYN_NAMESPACE", "DYN_PARENT_DGD_K8S_NAME",
        "DYN_PARENT_DGD_K8S_NAMESPACE", "DYN_SYSTEM_ENABLED", "DYN_SYSTEM_PORT",
        "DYN_SYSTEM_USE_ENDPOINT_HEALTH_STATUS", "POD_NAME", "POD_NAMESPACE", "POD_UID",
    ]  # fmt: skip
    assert env(main)["POD_UID"] == {"fieldRef": {"fieldPath": "metadata.uid"}}
    assert main["command"] == ["python3"]
    assert main["args"] == ["-m", "dynamo.worker"]
    assert "resources" not in main
    assert {k: spec[k] for k in ("restartPolicy", "terminationGracePeriodSeconds")} == {
        "restartPolicy": "Always",
        "terminationGracePeriodSeconds": 60,
    }
    assert "imagePullSecrets" not in spec


def test_env_merges_by_name_and_sorts() -> None:
    # spec case 7.
    assert merge_env([{"name": "FOO", "value": "BAR"}], [{"name": "FOO", "value": "QUX"}]) == [
        {"name": "FOO", "value": "QUX"}
    ]
    envs = [{"name": "FOO", "value": "BAR"}, {"name": "BAZ", "value": "QUX"}]
    spec = pod({**_worker(), "envs": envs})
    names = [e["name"] for e in main_of(spec)["env"]]
    assert names == sorted(names)
    assert names.index("BAZ") < names.index("FOO")


def test_env_precedence_platform_defaults_container_component() -> None:
    settings = replace(SETTINGS, nats_address="nats://default", prometheus_endpoint="http://prom")
    service = {
        "componentType": "frontend",
        "envs": [{"name": "DYN_HTTP_PORT", "value": "3000"}, {"name": "LAYER", "value": "envs"}],
        "extraPodSpec": {
            "mainContainer": {
                "image": IMAGE,
                "env": [
                    {"name": "NATS_SERVER", "value": "nats://mine"},
                    {"name": "DYNAMO_PORT", "value": "9000"},
                    {"name": "LAYER", "value": "container"},
                ],
            }
        },
    }
    values = env(main_of(pod(service, settings=settings)))
    assert values["DYN_HTTP_PORT"] == "3000"  # component envs over the type defaults
    assert values["DYNAMO_PORT"] == "9000"  # mainContainer env over the type defaults
    assert values["LAYER"] == "envs"  # component envs over mainContainer env
    assert values["NATS_SERVER"] == "nats://mine"  # anything over the platform addresses
    assert values["PROMETHEUS_ENDPOINT"] == "http://prom"
    assert "MODEL_EXPRESS_URL" not in values


def test_discovery_backend_env_is_kubernetes_unless_etcd() -> None:
    # spec case 20, v0.8 rule.
    key = "nvidia.com/dynamo-discovery-backend"
    assert env(main_of(pod(_worker())))["DYN_DISCOVERY_BACKEND"] == "kubernetes"
    etcd = pod({**_worker(), "annotations": {key: "etcd"}})
    assert "DYN_DISCOVERY_BACKEND" not in env(main_of(etcd))
    assert "serviceAccountName" not in etcd
    from_settings = pod(_worker(), settings=replace(SETTINGS, discovery_backend="etcd"))
    assert "DYN_DISCOVERY_BACKEND" not in env(main_of(from_settings))
    custom = pod({**_worker(), "annotations": {key: "test"}})
    assert env(main_of(custom))["DYN_DISCOVERY_BACKEND"] == "kubernetes"


def test_kubernetes_discovery_gives_pods_the_graph_discovery_account() -> None:
    assert pod(_worker())["serviceAccountName"] == "graph-k8s-service-discovery"
    own = {**_worker(), "extraPodSpec": {**_worker()["extraPodSpec"], "serviceAccountName": "me"}}
    assert pod(own)["serviceAccountName"] == "me"


def test_main_container_fields_override_and_only_given_ones() -> None:
    service = {
        "componentType": "frontend",
        "extraPodSpec": {"mainContainer": {"image": IMAGE, "name": "engine", "args": ["--x"]}},
    }
    main = containers(pod(service))["engine"]
    assert main["command"] == ["python3"]  # not given: the default stays
    assert main["args"] == ["--x"]


def test_a_user_command_drops_the_default_args() -> None:
    service = {"componentType": "frontend", "extraPodSpec": {"mainContainer": {"command": ["run"]}}}
    main = main_of(pod(service))
    assert main["command"] == ["run"]
    assert "args" not in main


def test_main_container_probes_replace_the_defaults_whole() -> None:
    exec_probe = {"exec": {"command": ["true"]}, "periodSeconds": 3}
    service = _worker(livenessProbe=exec_probe, readinessProbe=exec_probe)
    main = main_of(pod(service))
    assert main["livenessProbe"] == exec_probe
    assert main["readinessProbe"] == exec_probe


def test_top_level_probes_win_over_main_container_probes() -> None:
    service = {**_worker(livenessProbe={"exec": {"command": ["a"]}}),
               "livenessProbe": {"exec": {"command": ["b"]}}}  # fmt: skip
    assert main_of(pod(service))["livenessProbe"] == {"exec": {"command": ["b"]}}


def test_user_ports_and_mounts_keep_the_defaults_they_do_not_clash_with() -> None:
    service = _worker(
        ports=[{"name": "nixl", "containerPort": 19090}, {"name": "mine", "containerPort": 9090}],
        volumeMounts=[{"name": "data", "mountPath": "/dev/shm"}],
    )
    service["extraPodSpec"]["volumes"] = [{"name": "data", "emptyDir": {}}]
    main = main_of(pod(service))
    assert main["ports"] == [
        {"name": "mine", "containerPort": 9090},
        {"name": "nixl", "containerPort": 19090},
    ]
    assert main["volumeMounts"] == [
        {"name": "data", "mountPath": "/dev/shm"},
        {"name": "shared-memory", "mountPath": "/dev/shm"},
    ]


def test_extra_pod_spec_merges_over_the_defaults() -> None:
    service = _worker()
    service["extraPodSpec"].update(
        terminationGracePeriodSeconds=0,
        restartPolicy="",
        containers=[{"name": "aaa", "image": "x"}, {"name": "zzz", "image": "y"}],
        volumes=[{"name": "shared-memory", "emptyDir": {}}],
        hostIPC=True,
    )
    spec = pod(service)
    assert spec["terminationGracePeriodSeconds"] == 0
    assert spec["restartPolicy"] == "Always"
    assert [c["name"] for c in spec["containers"]] == ["aaa", "main", "zzz"]
    assert spec["volumes"] == [{"name": "shared-memory", "emptyDir": {}}]
    assert spec["hostIPC"] is True


def test_resources_translate_to_container_requests_and_limits() -> None:
    service = {
        **_worker(resources={"limits": {"cpu": "1", "example.com/fpga": "1"}}),
        "resources": {
            "requests": {"cpu": "300m", "memory": "500Mi", "gpu": "1", "custom": {"ex/a": "2"}},
            "limits": {"cpu": "10", "memory": "20Gi", "gpu": "1", "custom": {"ex/a": "2"}},
            "claims": [{"name": "gpu-claim"}],
        },
    }
    assert main_of(pod(service))["resources"] == {
        "requests": {"cpu": "300m", "memory": "500Mi", "ex/a": "2"},
        "limits": {
            "cpu": "10", "memory": "20Gi", "nvidia.com/gpu": "1", "ex/a": "2",
            "example.com/fpga": "1",
        },
        "claims": [{"name": "gpu-claim"}],
    }  # fmt: skip


def test_gpu_type_names_the_gpu_resource() -> None:
    service = {**_worker(), "resources": {"limits": {"gpu": "2", "gpuType": "gpu.intel.com/xe"}}}
    assert main_of(pod(service))["resources"] == {"limits": {"gpu.intel.com/xe": "2"}}


def test_a_gpu_count_given_only_as_request_becomes_the_limit() -> None:
    service = {**_worker(), "resources": {"requests": {"gpu": "2", "cpu": "1"}}}
    assert main_of(pod(service))["resources"] == {
        "requests": {"cpu": "1"},
        "limits": {"nvidia.com/gpu": "2"},
    }


@pytest.mark.parametrize(
    ("resources", "message"),
    [
        ({"limits": {"cpu": "ten"}}, "parse limits cpu quantity: "),
        ({"requests": {"memory": "1GB"}}, "parse requests memory quantity: "),
        ({"limits": {"gpu": "x"}}, "parse limits gpu quantity: "),
        ({"limits": {"custom": {"ex/a": "1..2"}}}, "parse limits ex/a quantity: "),
    ],
)
def test_a_bad_quantity_is_an_error(resources: Json, message: str) -> None:
    with pytest.raises(GenerationError) as err:
        pod({**_worker(), "resources": resources})
    value = next(iter(next(iter(resources.values())).values()))
    bad = value if isinstance(value, str) else next(iter(value.values()))
    assert str(err.value) == (
        f"{message}quantities must match the regular expression "
        f"'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$', got {bad!r}"
    )


def test_a_bad_shared_memory_size_is_an_error() -> None:
    with pytest.raises(GenerationError, match=r"^parse sharedMemory size quantity: "):
        pod({**_worker(), "sharedMemory": {"size": "lots"}})


def test_env_from_secret_is_appended_after_the_containers_own() -> None:
    service = {**_worker(envFrom=[{"configMapRef": {"name": "cm"}}]), "envFromSecret": "hf"}
    assert main_of(pod(service))["envFrom"] == [
        {"configMapRef": {"name": "cm"}},
        {"secretRef": {"name": "hf"}},
    ]


def test_pvc_mounts_become_volumes_and_mounts() -> None:
    # spec case 18.
    service = {**_worker(), "volumeMounts": [{"name": "test-pvc", "mountPoint": "/data"}]}
    spec = pod(service)
    assert main_of(spec)["volumeMounts"] == [
        {"name": "shared-memory", "mountPath": "/dev/shm"},
        {"name": "test-pvc", "mountPath": "/data"},
    ]
    assert {"name": "test-pvc", "persistentVolumeClaim": {"claimName": "test-pvc"}} in spec[
        "volumes"
    ]


@pytest.mark.parametrize("backend", ["sglang", "trtllm"])
def test_a_compilation_cache_without_mount_point_needs_a_backend_default(backend: str) -> None:
    service = worker_service(["python3", "-m", f"dynamo.{backend}"], [])
    service["volumeMounts"] = [{"name": "cache-pvc", "useAsCompilationCache": True}]
    with pytest.raises(GenerationError) as err:
        pod(service)
    assert str(err.value) == (
        "volumeMount with useAsCompilationCache=true requires an explicit mountPoint for "
        f"backend framework {backend} (no default available)"
    )
    service["volumeMounts"][0]["mountPoint"] = f"/custom/{backend}/cache"
    assert {"name": "cache-pvc", "mountPath": f"/custom/{backend}/cache"} in main_of(pod(service))[
        "volumeMounts"
    ]


def test_a_volume_mount_needs_a_name() -> None:
    with pytest.raises(GenerationError) as err:
        pod({**_worker(), "volumeMounts": [{"name": "", "mountPoint": "/data"}]})
    assert str(err.value) == "volumeMount.name is required when volumeMounts is set"


def test_a_volume_mount_needs_a_mount_point() -> None:
    with pytest.raises(GenerationError) as err:
        pod({**_worker(), "volumeMounts": [{"name": "data"}]})
    assert str(err.value) == (
        "volumeMount.mountPoint is required when useAsCompilationCache is false"
    )


def test_a_user_container_named_main_is_an_error() -> None:
    service = _worker()
    service["extraPodSpec"]["containers"] = [{"name": "main", "image": "x"}]
    with pytest.raises(GenerationError) as err:
        pod(service)
    assert str(err.value) == (
        'extraPodSpec.containers has a container named "main", the name of the main container; '
        "set its fields in extraPodSpec.mainContainer instead"
    )


# --- image pull secrets --------------------------------------------------------------------
DOCKER_CONFIG = "kubernetes.io/dockerconfigjson"


def _secret(namespace: str, name: str, *servers: str, kind: str = DOCKER_CONFIG) -> Json:
    config = json.dumps({"auths": {s: {"auth": "eDp5"} for s in servers}})
    return {
        "metadata": {"namespace": namespace, "name": name},
        "type": kind,
        "data": {".dockerconfigjson": base64.b64encode(config.encode()).decode()},
    }


def test_pull_secret_index_by_namespace_and_registry_host() -> None:
    # spec case 19.
    index, problems = index_secrets(
        [
            _secret("default", "secret1", "docker.io", ".com:5005/registry1"),
            _secret("default", "secret2", ".com:5005/registry2"),
            _secret("another-namespace", "secret3", ".com:5005/registry3"),
            _secret("default", "opaque", "docker.io", kind="Opaque"),
            {"metadata": {"namespace": "default", "name": "broken"},
             "type": "kubernetes.io/dockerconfigjson", "data": {".dockerconfigjson": "%%%"}},
        ]
    )  # fmt: skip
    assert index["default"]["docker.io"] == ["secret1"]
    assert index["default"][".com:5005"] == ["secret1", "secret2"]
    assert index["another-namespace"][".com:5005"] == ["secret3"]
    assert len(problems) == 1
    assert problems[0].startswith("secret default/broken: invalid base64")


@pytest.mark.parametrize(
    ("server", "host"),
    [
        ("docker.io", "docker.io"),
        ("https://index.docker.io/v1/", "docker.io"),
        ("nvcr.io", "nvcr.io"),
        ("Registry.Example.com:5000/team", "registry.example.com:5000"),
    ],
)
def test_registry_host_of_a_docker_config_key(server: str, host: str) -> None:
    assert registry_host(server) == host


@pytest.mark.parametrize(
    ("image", "host"),
    [
        ("test-registry/test-image:latest", "docker.io"),
        ("registry.local:5000/test-image:latest", "registry.local:5000"),
        ("nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.8.0", "nvcr.io"),
        ("ubuntu:22.04", "docker.io"),
        ("localhost/img", "localhost"),
    ],
)
def test_registry_host_of_an_image(image: str, host: str) -> None:
    assert image_host(image) == host


def test_discovered_pull_secrets_follow_the_users_without_duplicates() -> None:
    service = _worker()
    service["extraPodSpec"]["imagePullSecrets"] = [{"name": "zz-mine"}, {"name": "ngc"}]
    spec = pod(service, pull_secrets={"nvcr.io": ["ngc", "ngc-2"]})
    assert spec["imagePullSecrets"] == [{"name": "ngc"}, {"name": "ngc-2"}, {"name": "zz-mine"}]
    assert lookup({"nvcr.io": ["a"]}, "ubuntu") == []


def test_no_image_means_no_pull_secret_discovery() -> None:
    service = {"componentType": "worker", "extraPodSpec": {"mainContainer": {}}}
    assert "imagePullSecrets" not in pod(service, pull_secrets={"docker.io": ["hub"]})
