"""`dynamoSidecar` (`v1beta1`): the Dynamo runtime in a restartable init container of the
user's template, beside an engine that is not Dynamo's own.

The named init container (`restartPolicy: Always`) gets what `main` gets otherwise: the
runtime's environment (Dynamo namespace, component, graph and pod, discovery, the platform
addresses), the system port and its startup, liveness and readiness probes, and the graph's
env under its own; the user's fields win (env by name, probes whole), and its image keeps its
entrypoint unless the user gives a command. `main` runs the engine as the user wrote it: its
command, args, resources and env (with the graph's under it), plus the compilation cache and
/dev/shm, and none of the runtime's defaults.

As the original: only worker, prefill and decode components, and never multinode; the
reference also names enabled checkpointing, GPU memory service and failover as unsupported
in this mode, refused alike. A refusal is a `GenerationError` naming the field (the admission
rules refuse the same, `api.validation.v1beta1_shape`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from api.conversion.render_inputs import ComponentInputs
from api.kube import copy_json
from api.v1alpha1 import ExtraPodSpec
from api.v1beta1 import DynamoComponentDeploymentSharedSpec
from backends import constants
from backends.component_defaults import common_env, infrastructure_env
from backends.component_spec import ComponentSpec
from backends.context import PodContext
from backends.errors import GenerationError
from backends.merge import merge_env, merge_keyed, merge_over

Json = dict[str, Any]

__all__ = ["runtime_container", "runtime_name", "unsupported", "with_graph_env"]

_PROBES = ("livenessProbe", "readinessProbe", "startupProbe")


def runtime_name(spec: ComponentSpec) -> str | None:
    """The init container the component runs the runtime in, or None."""
    return spec.spec.dynamo_sidecar or None


def unsupported(component: DynamoComponentDeploymentSharedSpec) -> tuple[str, str] | None:
    """(field, reason) when the component may not run a dynamoSidecar, else None."""
    if component.type not in constants.WORKER_TYPES:
        return "dynamoSidecar", "is supported only for worker, prefill and decode components"
    if component.multinode is not None:
        return "multinode", ("is not supported with a dynamoSidecar (the runtime init "
                             "container); support is planned upstream")
    experimental = component.experimental
    if experimental is not None:
        if experimental.checkpoint is not None and experimental.checkpoint.enabled:
            return "experimental.checkpoint", "is not supported with a dynamoSidecar"
        if experimental.gpu_memory_service is not None:
            return "experimental.gpuMemoryService", "is not supported with a dynamoSidecar"
        if experimental.failover is not None:
            return "experimental.failover", "is not supported with a dynamoSidecar"
    return None


def runtime_container(spec: ComponentSpec, ctx: PodContext, given: Json) -> Json:
    """The runtime init container: its defaults with the user's `given` one merged over."""
    name = str(given.get("name"))
    if given.get("restartPolicy") != "Always":
        raise GenerationError(f'dynamoSidecar "{name}": the init container needs '
                              "restartPolicy Always")
    system = constants.SYSTEM_PORT_NAME
    default: Json = {
        "name": name,
        "restartPolicy": "Always",
        "ports": [{"name": system, "containerPort": constants.SYSTEM_PORT, "protocol": "TCP"}],
        "startupProbe": _probe("/live", period=2, timeout=1, failures=30),
        "livenessProbe": _probe("/live", period=5, timeout=4, failures=3),
        "readinessProbe": _probe("/health", period=5, timeout=4, failures=3),
    }
    container = merge_over(default, {k: v for k, v in given.items()
                                     if k not in ("env", "ports", *_PROBES)})
    for probe in _PROBES:
        if given.get(probe) is not None:
            container[probe] = copy_json(given[probe])
    container["ports"] = merge_keyed(default["ports"], given.get("ports") or [],
                                     "name", "containerPort")
    system_env = [{"name": "DYN_SYSTEM_ENABLED", "value": "true"},
                  {"name": "DYN_SYSTEM_PORT", "value": str(constants.SYSTEM_PORT)}]
    container["env"] = merge_env(infrastructure_env(ctx), common_env(spec, ctx), system_env,
                                 given.get("env") or [])
    return container


def with_graph_env(component: DynamoComponentDeploymentSharedSpec, inputs: ComponentInputs,
                   graph_env: Sequence[Json] | None) -> ComponentInputs:
    """A graph component's inputs with the graph's env under the runtime init container's
    own (the graph's env reaches `main` through `envs`; the runtime is a container of the
    template's init containers). The same inputs without a dynamoSidecar or a graph env."""
    name = component.dynamo_sidecar
    extra = inputs.pod.extra_pod_spec
    if not name or not graph_env or extra is None:
        return inputs
    pod_spec = copy_json(extra.pod_spec)
    for init in pod_spec.get("initContainers") or []:
        if isinstance(init, dict) and init.get("name") == name:
            init["env"] = merge_env(copy_json(list(graph_env)), init.get("env") or [])
    changed = ExtraPodSpec(main_container=extra.main_container, pod_spec=pod_spec)
    return inputs.replace(pod=inputs.pod.replace(extra_pod_spec=changed))


def _probe(path: str, *, period: int, timeout: int, failures: int) -> Json:
    return {"httpGet": {"path": path, "port": constants.SYSTEM_PORT_NAME},
            "periodSeconds": period, "timeoutSeconds": timeout, "failureThreshold": failures}
