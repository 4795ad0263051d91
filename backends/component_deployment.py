"""DynamoComponentDeployments of a graph (the DCD path): one per component, built as the hub
(`v1beta1`) from the graph's `v1beta1` component plus what the graph decides for it (name,
identity labels, Dynamo namespace, backendFramework, graph env under its own, the Planner's
account, a default ingress for a frontend, DYN_DEPLOYMENT_CONFIG, a worker's KV transfer policy:
`backends.kv_transfer_policy`).

What `v1beta1` cannot say of the child (its own labels and annotations, ingress,
dynamoNamespace, the componentType pair, the pod group as `v1alpha1` splits it...) is written
into it by `api.conversion.written_inputs.with_component_inputs`, in the spec payload the DCD's
own builders read back through `render_inputs`. The child carries the fields both versions
share and no `v1beta1`-only field of the component (roles, minAvailable, providerOverride...),
as the child built in `v1alpha1` did: so its `v1alpha1` form, and its spec hash, are that
child's, and an operator upgrade rewrites no DCD.

A component's `frontendSidecar` container is the exception, for graphs whose origin version
says so (`backends.origin_gates.FRONTEND_SIDECAR_LOSSLESS`): `v1alpha1`'s form of it is a
container named `sidecar-frontend` with its image, args, env and Secret only; such a graph's
child carries the container whole, under its own name
(`api.conversion.written_inputs.with_frontend_container`).

A multinode worker (a LeaderWorkerSet, which replaces its pods itself) keeps its one DCD
`<graph>-<component>`; for graphs `PROVIDER_GENERATION` covers, it carries the graph's
generation as the original's does (the worker-hash label, which reaches the LeaderWorkerSet's
templates, and the suffix in `main`), and the frontend sees every generation
(`backends.worker_generation.in_place_generation`).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from api.conversion import HUB
from api.conversion.written_inputs import with_component_inputs, with_frontend_container
from api.convert import dump
from api.kube import copy_json
from api.v1alpha1 import ExtraPodSpec, IngressSpec, IngressTLSSpec
from api.v1beta1 import DynamoComponentDeploymentSharedSpec
from backends import constants, labels, naming
from backends.component_spec import ComponentSpec
from backends.deployment_config import Configured, apply_deployment_config
from backends.discovery_mode import inherited_discovery_mode
from backends.dynamo_sidecar import with_graph_env
from backends.graph_metadata import stamp_metadata, with_graph_metadata
from backends.hub_graph import HubGraph
from backends.hub_only_fields import with_hub_only_fields
from backends.kv_transfer_policy import with_kv_transfer_policy
from backends.merge import merge_env
from backends.multinode import node_count
from backends.origin_gates import FRONTEND_SIDECAR_LOSSLESS
from backends.settings import OperatorSettings
from backends.worker_generation import (
    LEGACY,
    WorkerPlan,
    fresh_plan,
    generation_env,
    in_place_generation,
    provider_generations,
    worker_dcd_name,
    worker_hash,
)

Json = dict[str, Any]

__all__ = ["component_deployment", "component_deployments", "default_ingress"]

#: The component fields both versions share, which the child carries as they are.
_SHARED = ("replicas", "multinode", "modelRef", "globalDynamoNamespace", "eppConfig",
           "topologyConstraint")
#: The parts of `experimental` both versions share (`v1alpha1` has them at the top).
_EXPERIMENTAL = ("checkpoint", "gpuMemoryService", "failover")


def component_deployments(graph: HubGraph, settings: OperatorSettings,
                          tokens: Mapping[str, str | None] | None = None,
                          plan: WorkerPlan | None = None) -> list[Json]:
    """The DCDs rendered from the graph, in component name order: one per component, a rolled
    worker's in its target generation (`plan`; by default the graph's current one, for a graph
    with nothing running). `tokens`: the restart token each component's DCD carries."""
    tokens = tokens or {}
    if plan is None:
        plan = fresh_plan(graph, worker_hash(graph))
    out = []
    in_place = in_place_generation(graph)
    for name, spec in graph.components():
        if name not in plan.dcds:
            worker = (graph.component_type(name) in constants.WORKER_TYPES
                      and node_count(spec) > 1)
            out.append(component_deployment(
                graph, name, settings, token=tokens.get(name),
                namespace_prefix=plan.frontend_prefix or provider_generations(graph),
                in_place=in_place if worker else LEGACY))
            continue
        target = plan.target(name)
        if target is not None:
            out.append(component_deployment(graph, name, settings, token=tokens.get(name),
                                            generation=target.generation,
                                            replicas=target.replicas))
    return out


def component_deployment(graph: HubGraph, service: str, settings: OperatorSettings, *,
                         token: str | None = None, generation: str = LEGACY,
                         replicas: int | None = None, namespace_prefix: bool = False,
                         in_place: str = LEGACY) -> Json:
    """The DCD of one component of a graph, as the hub (JSON). A worker of a `generation`
    other than the legacy one is named after it, labelled with it and registers its workers in
    its own Dynamo namespace; `in_place`: a generation the worker is labelled with and
    registers in under its one name (a multinode worker); `replicas` replaces the graph's
    count; a frontend with `namespace_prefix` discovers workers of every generation."""
    name, namespace = graph.name, graph.namespace
    component = dict(graph.components())[service]
    inputs = with_graph_metadata(graph, graph.inputs.component(service))
    inputs = with_graph_env(component, inputs, graph.model.spec.env)
    inputs = with_kv_transfer_policy(graph, component, inputs, grove=False,
                                     grove_enabled=settings.grove_enabled)
    dyn_ns = naming.dynamo_namespace(
        namespace, name, global_namespace=bool(component.global_dynamo_namespace)
    )
    component_labels = {
        **(inputs.labels or {}),
        **labels.component_identity(name, service, dyn_ns),
    }
    if generation or in_place:
        component_labels[constants.LABEL_WORKER_HASH] = generation or in_place
    graph_annotations = graph.model.metadata.get("annotations") or {}
    annotations = _annotations(inputs.annotations, graph_annotations)
    for key, value in inherited_discovery_mode(graph).items():
        annotations.setdefault(key, value)
    if token:
        annotations[constants.ANNOTATION_RESTART_AT] = token
    pod = inputs.pod
    graph_env = graph.model.spec.env
    envs = pod.envs
    gen_env = generation_env(inputs.component_type, dyn_ns, generation or in_place,
                             namespace_prefix)
    if graph_env or pod.envs or gen_env:
        # The user's own value of these names wins, as over any default.
        envs = sorted(merge_env(gen_env, copy_json(graph_env or []), pod.envs or []),
                      key=lambda e: str(e.get("name", "")))
    extra = pod.extra_pod_spec
    if inputs.component_type == constants.PLANNER:
        extra = copy.deepcopy(extra) if extra is not None else ExtraPodSpec()
        extra.pod_spec["serviceAccountName"] = constants.PLANNER_SERVICE_ACCOUNT
    ingress = inputs.ingress
    if inputs.component_type == constants.FRONTEND and ingress is None:
        ingress = default_ingress(name, settings)
    configured = apply_deployment_config(
        Configured(envs, component.replicas, pod.resources), service, inputs.component_type)

    spec = _shared(dump(component))
    if replicas is not None:
        spec["replicas"] = replicas
    elif configured.replicas is not None:
        spec["replicas"] = configured.replicas
    if graph.model.spec.backend_framework is not None:
        spec["backendFramework"] = graph.model.spec.backend_framework
    spec["name"] = service
    child_inputs = inputs.replace(
        labels=component_labels,
        annotations=annotations or None,
        dynamo_namespace=dyn_ns,
        ingress=ingress,
        service_name=service,
        pod=pod.replace(envs=configured.envs, extra_pod_spec=extra,
                         resources=configured.resources),
    )
    child = {
        "apiVersion": HUB,
        "kind": "DynamoComponentDeployment",
        "metadata": {
            "name": worker_dcd_name(name, service, generation),
            "namespace": namespace,
            "labels": dict(component_labels),
        },
        "spec": spec,
    }
    built = with_component_inputs(child, child_inputs)
    if FRONTEND_SIDECAR_LOSSLESS.enabled_for(ComponentSpec(component, child_inputs)):
        sidecar = _frontend_container(component)
        if sidecar is not None:
            built = with_frontend_container(built, sidecar)
    built = with_hub_only_fields(built, component)
    return stamp_metadata(graph, built)


def _frontend_container(component: DynamoComponentDeploymentSharedSpec) -> Json | None:
    """The container of the component's template its `frontendSidecar` names, as written."""
    name = component.frontend_sidecar
    spec = (component.pod_template or {}).get("spec")
    for container in (spec.get("containers") if isinstance(spec, dict) else None) or []:
        if name and isinstance(container, dict) and container.get("name") == name:
            return container
    return None


def default_ingress(graph: str, settings: OperatorSettings) -> IngressSpec | None:
    """The ingress a frontend gets when it configures none: enabled when the operator has an
    ingress class or an Istio gateway, for host `<graph>`."""
    gateway = settings.virtual_service_gateway
    ingress_class = settings.ingress_controller_class_name
    if not gateway and not ingress_class:
        return None
    secret = settings.ingress_controller_tls_secret_name
    return IngressSpec(
        enabled=True,
        host=graph,
        use_virtual_service=bool(gateway) or None,
        virtual_service_gateway=gateway or None,
        ingress_controller_class_name=ingress_class or None,
        tls=IngressTLSSpec(secret_name=secret) if secret else None,
        host_suffix=settings.ingress_host_suffix or None,
    )


def _shared(component: Json) -> Json:
    """The fields of a component (JSON) that both versions share."""
    spec = {k: component[k] for k in _SHARED if k in component}
    experimental = component.get("experimental")
    if isinstance(experimental, dict):
        shared = {k: experimental[k] for k in _EXPERIMENTAL if k in experimental}
        if shared:
            spec["experimental"] = shared
    return spec


def _annotations(own: Mapping[str, str] | None,
                 graph_annotations: Mapping[str, str]) -> dict[str, str]:
    annotations = dict(own or {})
    for key in constants.INHERITED_GRAPH_ANNOTATIONS:
        if key in graph_annotations and key not in annotations:
            annotations[key] = graph_annotations[key]
    return annotations
