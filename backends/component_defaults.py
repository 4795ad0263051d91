"""What a component's pod looks like before the user's overrides, by componentType.

Probe timings, ports, environment and service accounts are those of the API reference's
"Operator Default Values Injection" section; the rest follows the original operator.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from backends import command, constants
from backends.component_spec import ComponentSpec
from backends.context import PodContext, discovery_backend
from backends.runtime_features import apply_runtime_gates, parse_version

Json = dict[str, Any]

__all__ = ["common_env", "default_container", "default_pod_spec", "infrastructure_env"]

EPP_CONFIG_VOLUME = "epp-config"
EPP_CONFIG_KEY = "epp-config-dynamo.yaml"
EPP_CONFIG_DIR = "/etc/epp"
EPP_HF_CACHE_VOLUME = "hf-cache"
EPP_POOL_GROUP = constants.INFERENCE_POOL_GROUP
FRONTEND_READINESS_SCRIPT = (
    'curl -s http://localhost:${DYNAMO_PORT}/health | jq -e ".status == \\"healthy\\""'
)


def default_container(spec: ComponentSpec, ctx: PodContext) -> Json:
    """The generated main container of a component, before any user override."""
    container: Json = {
        "name": constants.MAIN_CONTAINER,
        "command": list(command.SHELL),
        "env": common_env(spec, ctx),
    }
    extra = _CONTAINERS.get(spec.component_type or "")
    if extra is not None:
        extra(container, spec, ctx)
    version = parse_version(spec.spec.runtime_version_override)
    apply_runtime_gates(container, spec.component_type, version)
    return container


def default_pod_spec(spec: ComponentSpec, ctx: PodContext) -> Json:
    """The generated pod spec of a component, without containers."""
    pod: Json = {
        "restartPolicy": "Always",
        "terminationGracePeriodSeconds": constants.TERMINATION_GRACE_SECONDS,
    }
    if spec.component_type == constants.PLANNER:
        pod["serviceAccountName"] = constants.PLANNER_SERVICE_ACCOUNT
    elif spec.component_type == constants.EPP:
        pod["serviceAccountName"] = constants.EPP_SERVICE_ACCOUNT
        pod["terminationGracePeriodSeconds"] = constants.EPP_TERMINATION_GRACE_SECONDS
        pod["volumes"] = _epp_volumes(spec, ctx)
    return pod


def infrastructure_env(ctx: PodContext) -> list[Json]:
    """Addresses of the platform services every component talks to (only those configured)."""
    settings = ctx.settings
    pairs = (
        ("NATS_SERVER", settings.nats_address),
        ("ETCD_ENDPOINTS", settings.etcd_address),
        ("MODEL_EXPRESS_URL", settings.model_express_url),
        ("PROMETHEUS_ENDPOINT", settings.prometheus_endpoint),
    )
    return [{"name": name, "value": value} for name, value in pairs if value]


def common_env(spec: ComponentSpec, ctx: PodContext) -> list[Json]:
    """What every container running the Dynamo runtime is told: its namespace, component,
    graph and pod, and the discovery backend."""
    env = [
        _var("DYN_NAMESPACE", ctx.dynamo_namespace),
        _var("DYN_COMPONENT", spec.component_type or ""),
        _var("DYN_PARENT_DGD_K8S_NAME", ctx.graph_name),
        _var("DYN_PARENT_DGD_K8S_NAMESPACE", ctx.namespace),
        _field("POD_NAME", "metadata.name"),
        _field("POD_NAMESPACE", "metadata.namespace"),
        _field("POD_UID", "metadata.uid"),
    ]
    if discovery_backend(spec, ctx.settings) != constants.DISCOVERY_ETCD:
        env.append(_var("DYN_DISCOVERY_BACKEND", constants.DISCOVERY_KUBERNETES))
    annotations = spec.inputs.annotations or {}
    if annotations.get(constants.ANNOTATION_KUBE_DISCOVERY_MODE) == "container":
        # Workers register per container (a failover pod's engines rename themselves).
        env += [_var("CONTAINER_NAME", constants.MAIN_CONTAINER),
                _var("DYN_KUBE_DISCOVERY_MODE", "container")]
    return env


def _frontend(container: Json, spec: ComponentSpec, ctx: PodContext) -> None:
    port = str(constants.FRONTEND_PORT)
    container["command"] = ["python3"]
    container["args"] = ["-m", "dynamo.frontend"]
    container["ports"] = [_port(constants.FRONTEND_PORT_NAME, constants.FRONTEND_PORT)]
    container["env"] += [_var("DYNAMO_PORT", port), _var("DYN_HTTP_PORT", port)]
    timings = {
        "initialDelaySeconds": 60,
        "periodSeconds": 60,
        "timeoutSeconds": 30,
        "failureThreshold": 10,
    }
    container["livenessProbe"] = {
        "httpGet": {"path": "/health", "port": constants.FRONTEND_PORT_NAME},
        **timings,
    }
    container["readinessProbe"] = {
        "exec": {"command": [*command.SHELL, FRONTEND_READINESS_SCRIPT]},
        **timings,
    }


def _worker(container: Json, spec: ComponentSpec, ctx: PodContext) -> None:
    system = constants.SYSTEM_PORT_NAME
    container["ports"] = [_port(system, constants.SYSTEM_PORT)]
    container["env"] += [
        _var("DYN_SYSTEM_ENABLED", "true"),
        _var("DYN_SYSTEM_USE_ENDPOINT_HEALTH_STATUS", '["generate"]'),
        _var("DYN_SYSTEM_PORT", str(constants.SYSTEM_PORT)),
        _var("DYN_HEALTH_CHECK_ENABLED", "false"),
    ]
    container["livenessProbe"] = {
        "httpGet": {"path": "/live", "port": system},
        "periodSeconds": 5,
        "timeoutSeconds": 30,
        "failureThreshold": 1,
    }
    container["readinessProbe"] = {
        "httpGet": {"path": "/health", "port": system},
        "periodSeconds": 10,
        "timeoutSeconds": 30,
        "failureThreshold": 60,
    }
    container["startupProbe"] = {
        "httpGet": {"path": "/live", "port": system},
        "periodSeconds": 10,
        "timeoutSeconds": 5,
        "failureThreshold": 720,
    }


def _planner(container: Json, spec: ComponentSpec, ctx: PodContext) -> None:
    container["ports"] = [_port(constants.METRICS_PORT_NAME, constants.PLANNER_METRICS_PORT)]
    container["env"] += [_var("PLANNER_PROMETHEUS_PORT", str(constants.PLANNER_METRICS_PORT))]


def _epp(container: Json, spec: ComponentSpec, ctx: PodContext) -> None:
    # The EPP image's entrypoint is the picker itself; it speaks gRPC, not HTTP.
    del container["command"]
    container["args"] = [
        "-pool-name", f"{ctx.graph_name}-pool",
        "-pool-namespace", ctx.namespace,
        "-pool-group", EPP_POOL_GROUP,
        "-v", "4",
        "--zap-encoder", "json",
        "-grpc-port", str(constants.EPP_GRPC_PORT),
        "-grpc-health-port", str(constants.EPP_HEALTH_PORT),
        "-config-file", f"{EPP_CONFIG_DIR}/{EPP_CONFIG_KEY}",
    ]  # fmt: skip
    container["ports"] = [
        _port(constants.EPP_GRPC_PORT_NAME, constants.EPP_GRPC_PORT),
        _port(constants.EPP_HEALTH_PORT_NAME, constants.EPP_HEALTH_PORT),
        _port(constants.METRICS_PORT_NAME, constants.SYSTEM_PORT),
    ]
    container["livenessProbe"] = {**_epp_health(), "initialDelaySeconds": 5, "periodSeconds": 10}
    container["readinessProbe"] = {**_epp_health(), "initialDelaySeconds": 5, "periodSeconds": 10}
    # The picker waits for workers to register; this is its only start-up deadline (30 min).
    container["startupProbe"] = {**_epp_health(), "periodSeconds": 10, "failureThreshold": 180}
    container["env"] += [
        _var("USE_STREAMING", "true"),
        # CPU-only: keep the NVIDIA runtime from requiring GPU drivers on the node.
        _var("NVIDIA_VISIBLE_DEVICES", "void"),
    ]
    container["volumeMounts"] = [
        {"name": EPP_CONFIG_VOLUME, "mountPath": EPP_CONFIG_DIR, "readOnly": True},
        {"name": EPP_HF_CACHE_VOLUME, "mountPath": "/home/nonroot/.cache"},
    ]


def _epp_health() -> Json:
    return {"grpc": {"port": constants.EPP_HEALTH_PORT, "service": "inference-extension"}}


def _epp_volumes(spec: ComponentSpec, ctx: PodContext) -> list[Json]:
    epp_config = spec.spec.epp_config
    ref = epp_config.config_map_ref if epp_config is not None else None
    name = f"{ctx.graph_name}-epp-config"
    key = EPP_CONFIG_KEY
    if ref is not None:
        name = ref.get("name") or name
        key = ref.get("key") or key
    return [
        {
            "name": EPP_CONFIG_VOLUME,
            "configMap": {"name": name, "items": [{"key": key, "path": EPP_CONFIG_KEY}]},
        },
        {"name": EPP_HF_CACHE_VOLUME, "emptyDir": {}},
    ]


_Extra = Callable[[Json, ComponentSpec, PodContext], None]
_CONTAINERS: dict[str, _Extra] = {
    constants.FRONTEND: _frontend,
    constants.WORKER: _worker,
    constants.PREFILL: _worker,
    constants.DECODE: _worker,
    constants.PLANNER: _planner,
    constants.EPP: _epp,
}


def _var(name: str, value: str) -> Json:
    return {"name": name, "value": value}


def _field(name: str, path: str) -> Json:
    return {"name": name, "valueFrom": {"fieldRef": {"fieldPath": path}}}


def _port(name: str, number: int) -> Json:
    return {"name": name, "containerPort": number, "protocol": "TCP"}
