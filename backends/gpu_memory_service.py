"""GPU Memory Service (`experimental.gpuMemoryService`, IntraPod): the component's GPUs come
from a DRA ResourceClaim shared by every GMS client of the pod, and a GMS server runs beside
the engine, holding the weights in GPU memory.

As the original renders it:

- a ResourceClaimTemplate `<graph>-<component>-gpu` (owned by the graph, or by a DCD of its
  own) asking the DeviceClass (`deviceClassName`, default `gpu.nvidia.com`) for exactly as
  many devices as `main` asks GPUs (request `gpus`);
- the pod claim `intrapod-shared-gpu` from that template; `main` loses its GPU resources
  (`nvidia.com/gpu`, a MIG shape...) and uses the claim instead; the toleration of
  `nvidia.com/gpu:NoSchedule` the device plugin would have given;
- the GMS server `gms-server`, a restartable init container (`restartPolicy: Always`) running
  `python3 -m gpu_memory_service.cli.server` in `main`'s image, with the claim;
- the UDS socket directory: an emptyDir `gms-intrapod-control` at `/gms-intrapod-control`,
  mounted in the server and every client, whose `GMS_SOCKET_DIR` names it;
- `extraClientContainers` present in the pod are wired as clients like `main` (the claim, the
  mount and the env; their own GPU resources dropped); a name the pod does not have is
  ignored.

InterPod (a weight-server pod per rank, in a Grove scaling group) is rendered by
`backends.inter_pod_gms`, on the Grove path only: elsewhere `refusal` names the field, as the
original's admission does. GMS needs the cluster to serve DRA (`resource.k8s.io/v1`); without
it the component is refused with the original's message.
"""

from __future__ import annotations

from typing import Any

from api import v1beta1
from api.kube import copy_json
from backends import constants
from backends.component_spec import ComponentSpec
from backends.context import PodContext
from backends.errors import GenerationError
from backends.hub_component import HubComponent
from backends.hub_graph import HubGraph
from backends.settings import OperatorSettings

Json = dict[str, Any]

__all__ = [
    "CLAIM_NAME",
    "CLAIM_TEMPLATE_API_VERSION",
    "CLAIM_TEMPLATE_IMMUTABLE",
    "DEFAULT_DEVICE_CLASS",
    "INTER_POD",
    "INTRA_POD",
    "SERVER_CONTAINER",
    "SOCKET_DIR",
    "SOCKET_VOLUME",
    "apply_gpu_memory_service",
    "claim_template",
    "claim_template_name",
    "component_claim_template",
    "drop_gpus",
    "gms_of",
    "gpu_count",
    "graph_claim_templates",
    "is_gpu_resource",
    "refusal",
    "standalone_claim_templates",
    "wire_client",
]

INTRA_POD = "IntraPod"
INTER_POD = "InterPod"
CLAIM_NAME = "intrapod-shared-gpu"
CLAIM_TEMPLATE_API_VERSION = "resource.k8s.io/v1"
#: What the API server never changes in a claim template: a new one replaces it.
CLAIM_TEMPLATE_IMMUTABLE = ("spec",)
DEFAULT_DEVICE_CLASS = "gpu.nvidia.com"
#: The claim template's one device request.
REQUEST_NAME = "gpus"
SERVER_CONTAINER = "gms-server"
SERVER_MODULE = "gpu_memory_service.cli.server"
SOCKET_VOLUME = "gms-intrapod-control"
SOCKET_DIR = "/gms-intrapod-control"
SOCKET_DIR_ENV = "GMS_SOCKET_DIR"
GPU_TOLERATION: Json = {"key": constants.GPU_RESOURCE, "operator": "Exists",
                        "effect": "NoSchedule"}
NO_DRA = ("gpuMemoryService requires DRA (Dynamic Resource Allocation), but DRA is not "
          "available (either the resource.k8s.io/v1 API is not registered on this cluster, "
          "which requires Kubernetes 1.34+, or DRA has been explicitly disabled in the "
          "operator configuration)")


def gms_of(component: v1beta1.DynamoComponentDeploymentSharedSpec
           ) -> v1beta1.GPUMemoryServiceSpec | None:
    """The component's GMS settings, None when it does not use GMS."""
    experimental = component.experimental
    return experimental.gpu_memory_service if experimental is not None else None


def mode_of(gms: v1beta1.GPUMemoryServiceSpec) -> str:
    """The GMS mode; unset means IntraPod."""
    return gms.mode or INTRA_POD


def claim_template_name(parent: str, component: str) -> str:
    """`<parent>-<component>-gpu`: the ResourceClaimTemplate of a component's pods."""
    return f"{parent}-{component.lower()}-gpu"


def is_gpu_resource(name: str) -> bool:
    """A resource name that asks for GPUs (`nvidia.com/gpu`, a MIG profile, a vendor's gpu)."""
    lowered = name.lower()
    return (lowered in (constants.GPU_RESOURCE, "gpu") or lowered.endswith("/gpu")
            or "/mig-" in lowered or lowered.startswith("gpu."))


def _gpu_names(amounts: Json) -> list[str]:
    return sorted(name for name in amounts if is_gpu_resource(name))


def gpu_count(resources: Json | None) -> int:
    """The GPUs a container's resources ask (the first GPU resource of the limits, else of
    the requests, by name); 0 when none. GenerationError for a count that is not whole."""
    for part in ("limits", "requests"):
        amounts = (resources or {}).get(part) or {}
        names = _gpu_names(amounts)
        if names:
            value = str(amounts[names[0]]).strip()
            if not value.isdigit():
                raise GenerationError(f'GPU resource "{names[0]}" quantity "{value}" must be '
                                      "a whole number")
            return int(value)
    return 0


def claim_template(name: str, namespace: str, count: int, device_class: str | None) -> Json:
    """The ResourceClaimTemplate giving a pod `count` devices of `device_class`."""
    return {
        "apiVersion": CLAIM_TEMPLATE_API_VERSION,
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"spec": {"devices": {"requests": [{
            "name": REQUEST_NAME,
            "exactly": {"deviceClassName": device_class or DEFAULT_DEVICE_CLASS,
                        "allocationMode": "ExactCount", "count": count},
        }]}}},
    }


def component_claim_template(parent: str, namespace: str, name: str,
                             component: v1beta1.DynamoComponentDeploymentSharedSpec
                             ) -> Json | None:
    """The ResourceClaimTemplate of component `name` of `parent` (a graph, or a DCD of its
    own), sized by the GPUs `main` asks; None without GMS."""
    gms = gms_of(component)
    if gms is None or mode_of(gms) != INTRA_POD:
        return None
    main = v1beta1.main_container(component) or {}
    count = gpu_count(main.get("resources"))
    if count < 1:
        raise GenerationError(
            "experimental.gpuMemoryService: Forbidden: GPU memory service requires "
            "podTemplate.spec.containers[main].resources.limits.nvidia.com/gpu >= 1")
    return claim_template(claim_template_name(parent, name), namespace, count,
                          gms.device_class_name)


def graph_claim_templates(graph: HubGraph, settings: OperatorSettings, *,
                          grove: bool = False) -> list[Json]:
    """The ResourceClaimTemplates of a graph's GMS components, in component order (`grove`:
    the graph runs on Grove). GenerationError naming the field for GMS that cannot be
    rendered here."""
    templates = []
    for name, component in graph.components():
        refused = refusal(component, dra_enabled=settings.dra_enabled,
                          grove=_grove_state(grove, settings))
        if refused is not None:
            raise GenerationError(f"spec.components[{name}].{refused}"
                                  if refused.startswith("experimental.") else refused)
        template = component_claim_template(graph.name, graph.namespace, name, component)
        if template is not None:
            templates.append(template)
    return templates


def standalone_claim_templates(dcd: HubComponent, settings: OperatorSettings) -> list[Json]:
    """The ResourceClaimTemplate a DCD of its own makes for its GMS pods (a graph's DCD uses
    its graph's); GenerationError for GMS that cannot be rendered here."""
    if dcd.graph_name():
        return []
    refused = refusal(dcd.model.spec, dra_enabled=settings.dra_enabled, grove="standalone")
    if refused is not None:
        raise GenerationError(refused)
    template = component_claim_template(dcd.name, dcd.namespace, dcd.service, dcd.model.spec)
    return [template] if template is not None else []


def _grove_state(grove: bool, settings: OperatorSettings) -> str:
    return "grove" if grove else ("opted-out" if settings.grove_enabled else "disabled")


def refusal(component: v1beta1.DynamoComponentDeploymentSharedSpec, *,
            dra_enabled: bool, grove: str = "disabled") -> str | None:
    """Why the component's GMS cannot be rendered here, naming the field; None when it can
    (or uses no GMS). `grove`: "grove" when the component runs on Grove, "opted-out" when
    its graph turns Grove off, "disabled" when the operator runs without it, "standalone"
    for a DCD of its own."""
    gms = gms_of(component)
    if gms is None:
        return None
    if not dra_enabled:
        return NO_DRA
    if mode_of(gms) == INTER_POD and grove != "grove":
        why = {"opted-out": f'remove or unset the "{constants.ANNOTATION_ENABLE_GROVE}" annotation',
               "standalone": "which a DynamoComponentDeployment of its own does not take",
               }.get(grove, "but Grove is disabled in the operator configuration")
        joined = f"; {why}" if grove == "opted-out" else f", {why}"
        return f"experimental.gpuMemoryService.mode: Forbidden: requires the Grove pathway{joined}"
    return None


def apply_gpu_memory_service(pod: Json, spec: ComponentSpec, ctx: PodContext) -> None:
    """Wire an IntraPod GMS component's pod in place (nothing without GMS; an InterPod
    component's pods are wired by `backends.inter_pod_gms`, so one reaching here is not on
    Grove)."""
    gms = gms_of(spec.spec)
    if gms is None:
        return
    refused = refusal(spec.spec, dra_enabled=ctx.settings.dra_enabled,
                      grove=_grove_state(False, ctx.settings) if ctx.graph_name
                      else "standalone")
    if refused is not None:
        raise GenerationError(refused)
    containers = pod.get("containers") or []
    main = next((c for c in containers if c.get("name") == constants.MAIN_CONTAINER), None)
    if main is None:
        raise GenerationError('gpuMemoryService: the pod has no container "main" to wire')
    component = spec.spec.name or ctx.host_name
    _apply_claim(pod, main, claim_template_name(ctx.graph_name, component))
    wire_client(pod, main)
    inits = pod.setdefault("initContainers", [])
    if not any(c.get("name") == SERVER_CONTAINER for c in inits):
        inits.append(_server(main.get("image")))
    for name in gms.extra_client_containers or []:
        client = next((c for c in containers if c.get("name") == name), None)
        if client is not None:
            wire_client(pod, client)


def _apply_claim(pod: Json, main: Json, template: str) -> None:
    """The pod claim from `template`, `main`'s GPUs replaced by it, and the GPU toleration."""
    claims = pod.setdefault("resourceClaims", [])
    if any(c.get("name") == CLAIM_NAME for c in claims):
        return
    drop_gpus(main)
    _add_claim(main)
    pod["tolerations"] = [*(pod.get("tolerations") or []), dict(GPU_TOLERATION)]
    claims.append({"name": CLAIM_NAME, "resourceClaimTemplateName": template})


def wire_client(pod: Json, container: Json) -> None:
    """Make `container` a GMS client in place: the socket volume (on the pod), its mount,
    `GMS_SOCKET_DIR`, the shared claim instead of GPU resources."""
    volume = {"name": SOCKET_VOLUME, "emptyDir": {}}
    pod["volumes"] = [*(v for v in pod.get("volumes") or [] if v.get("name") != SOCKET_VOLUME),
                      volume]
    mount = {"name": SOCKET_VOLUME, "mountPath": SOCKET_DIR}
    container["volumeMounts"] = [*(m for m in container.get("volumeMounts") or []
                                   if m.get("name") != SOCKET_VOLUME), mount]
    env = {"name": SOCKET_DIR_ENV, "value": SOCKET_DIR}
    container["env"] = [*(e for e in container.get("env") or []
                          if e.get("name") != SOCKET_DIR_ENV), env]
    drop_gpus(container)
    _add_claim(container)


def drop_gpus(container: Json) -> None:
    """Remove the container's GPU resources (its GPUs come through a claim instead)."""
    resources = container.get("resources")
    if not isinstance(resources, dict):
        return
    for part in ("limits", "requests"):
        amounts = resources.get(part)
        if not isinstance(amounts, dict):
            continue
        for name in _gpu_names(amounts):
            del amounts[name]
        if not amounts:
            del resources[part]


def _add_claim(container: Json) -> None:
    resources = container.setdefault("resources", {})
    claims = resources.setdefault("claims", [])
    if not any(c.get("name") == CLAIM_NAME for c in claims):
        claims.append({"name": CLAIM_NAME})


def _server(image: Any) -> Json:
    """The GMS server: a restartable init container in `main`'s image."""
    server: Json = {
        "name": SERVER_CONTAINER,
        "command": ["python3", "-m", SERVER_MODULE],
        "env": [{"name": SOCKET_DIR_ENV, "value": SOCKET_DIR}],
        "volumeMounts": [{"name": SOCKET_VOLUME, "mountPath": SOCKET_DIR}],
        "resources": {"claims": [{"name": CLAIM_NAME}]},
        "restartPolicy": "Always",
    }
    if image:
        server["image"] = copy_json(image)
    return server
