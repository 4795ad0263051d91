"""The Grove path: a whole graph as one PodCliqueSet (grove.io/v1alpha1), one clique per role
of each service, with a scaling group tying the leader and worker cliques of a multinode
service (or the weight-server and engine cliques of an inter-pod GPU memory service:
`backends.inter_pod_gms`); plus the Services, model Services and Ingresses the graph's
frontends need. The graph is taken as the hub (`HubGraph`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from api import v1beta1
from backends import constants, frameworks, labels, naming
from backends.component_deployment import default_ingress
from backends.component_spec import ComponentSpec
from backends.context import PodContext, discovery_backend
from backends.discovery_mode import inherited_discovery_mode
from backends.dynamo_sidecar import with_graph_env
from backends.errors import GenerationError
from backends.graph_metadata import (
    graph_annotations,
    graph_labels,
    stamp_metadata,
    with_priority_class,
)
from backends.hub_graph import HubGraph
from backends.ingress import ingress, virtual_service
from backends.inter_pod_gms import (
    FAILOVER_GROUP_LABEL,
    InterPodDeployer,
    claim_template_configs,
    finish_engine_pod,
    inter_pod_failover,
    inter_pod_gms,
    inter_pod_roles,
    main_gpus,
    resource_sharing,
    start_after,
    weight_server_pod,
)
from backends.kv_transfer_policy import with_kv_transfer_policy
from backends.merge import merge_env
from backends.multinode import GROVE, Role, node_count, roles
from backends.origin_gates import with_graph_origin
from backends.pod_spec import generate_pod_spec, main_container_of
from backends.role_templates import with_role_template
from backends.services import component_service, model_service
from backends.settings import OperatorSettings
from backends.topology import with_topology_constraints
from backends.worker_generation import (
    generation_env,
    in_place_generation,
    provider_generations,
)

Json = dict[str, Any]

__all__ = ["grove_objects", "grove_update_strategy", "pod_clique_set"]

ANY_ORDER = "CliqueStartupTypeAnyOrder"
EXPLICIT = "CliqueStartupTypeExplicit"
KAI_SCHEDULER = "kai-scheduler"
DEFAULT_KAI_QUEUE = "dynamo"


def pod_clique_set(
    dgd: HubGraph,
    settings: OperatorSettings,
    *,
    pull_secrets: Mapping[str, Sequence[str]] | None = None,
    topologies: Mapping[str, Sequence[str]] | None = None,
) -> Json:
    """The PodCliqueSet `<graph>` running every service of a graph. `topologies`: the levels
    of the cluster's ClusterTopologies by name (`backends.kv_transfer_policy`)."""
    graph, namespace = _identity(dgd)
    cliques: list[Json] = []
    groups: list[Json] = []
    claim_templates: list[Json] = []
    explicit = False
    generation = in_place_generation(dgd)
    for key, component in dgd.components():
        spec = _service_spec(dgd, key, component, settings, topologies)
        dyn_ns = _dynamo_namespace(dgd, spec)
        first = len(cliques)
        ctx = PodContext(
            namespace=namespace,
            graph_name=graph,
            dynamo_namespace=dyn_ns,
            host_name=key.lower(),
            backend_framework=dgd.model.spec.backend_framework,
            deployer=GROVE,
            settings=settings,
            pull_secrets=pull_secrets or {},
        )
        if inter_pod_gms(spec.spec):
            scaling, service_cliques, templates = _inter_pod(dgd, key, spec, dyn_ns, ctx)
            cliques += service_cliques
            groups.append(scaling)
            claim_templates += templates
            explicit = True
            _label_generation(dgd, key, generation, cliques[first:])
            continue
        service_roles = roles(key.lower(), spec.spec)
        # TRT-LLM's leader runs mpirun over SSH into the workers: start the workers first.
        ordered = len(service_roles) > 1 and _backend(dgd, spec) == "trtllm"
        explicit = explicit or ordered
        for role in service_roles:
            clique = _clique(dgd, key, spec, dyn_ns, role, ctx)
            if ordered and role.kind == "leader":
                clique["spec"]["startsAfter"] = [naming.worker_role(key.lower())]
            cliques.append(clique)
        _label_generation(dgd, key, generation, cliques[first:])
        if len(service_roles) > 1:
            group: Json = {
                "name": key.lower(),
                "cliqueNames": [r.name for r in service_roles],
                "minAvailable": _min_available(spec.spec.replicas),
            }
            if spec.spec.replicas is not None:
                group["replicas"] = spec.spec.replicas
            groups.append(group)
    _apply_kai(dgd, settings, cliques)
    template: Json = {
        "cliques": cliques,
        "cliqueStartupType": EXPLICIT if explicit else ANY_ORDER,
        "headlessServiceConfig": {"publishNotReadyAddresses": True},
    }
    if settings.grove_termination_delay_seconds > 0:
        template["terminationDelay"] = _go_duration(settings.grove_termination_delay_seconds)
    if groups:
        template["podCliqueScalingGroups"] = groups
    if claim_templates:
        template["resourceClaimTemplates"] = claim_templates
    with_topology_constraints(template, dgd)
    meta: Json = {
        "name": graph,
        "namespace": namespace,
        "labels": {constants.LABEL_GRAPH_NAME: graph},
    }
    pcs_spec: Json = {"replicas": 1, "template": template}
    strategy = grove_update_strategy(dgd)
    if strategy is not None:
        pcs_spec["updateStrategy"] = {"type": strategy}
    pcs = {
        "apiVersion": constants.GROVE_API_VERSION,
        "kind": "PodCliqueSet",
        "metadata": meta,
        "spec": pcs_spec,
    }
    return with_priority_class(dgd, stamp_metadata(dgd, pcs))


def _label_generation(dgd: HubGraph, key: str, generation: str, cliques: list[Json]) -> None:
    """A worker's cliques carry the graph's generation (`in_place_generation`), over the
    labels the service states, as the original's pod templates do; Grove copies it onto
    the pods."""
    if generation and dgd.component_type(key) in constants.WORKER_TYPES:
        for clique in cliques:
            clique["labels"][constants.LABEL_WORKER_HASH] = generation


def grove_update_strategy(dgd: HubGraph) -> str | None:
    """The PodCliqueSet's update strategy named by `nvidia.com/grove-update-strategy` (exact
    and case-sensitive, as the original), None without it (Grove's default, RollingRecreate).
    GenerationError for another value."""
    annotations = dgd.model.metadata.get("annotations") or {}
    value = annotations.get(constants.ANNOTATION_GROVE_UPDATE_STRATEGY)
    if value is None:
        return None
    if value not in constants.GROVE_UPDATE_STRATEGIES:
        raise GenerationError(
            f'unsupported {constants.ANNOTATION_GROVE_UPDATE_STRATEGY} "{value}": supported '
            f"values are {', '.join(constants.GROVE_UPDATE_STRATEGIES)}")
    return str(value)


def grove_objects(
    dgd: HubGraph,
    settings: OperatorSettings,
    *,
    pull_secrets: Mapping[str, Sequence[str]] | None = None,
    topologies: Mapping[str, Sequence[str]] | None = None,
) -> list[Json]:
    """The PodCliqueSet, then the Services (frontends, or every service under Kubernetes
    discovery), the model Services, and the frontends' Ingress or VirtualService."""
    graph, namespace = _identity(dgd)
    objects = [pod_clique_set(dgd, settings, pull_secrets=pull_secrets, topologies=topologies)]
    models: set[str] = set()
    for key, component in dgd.components():
        spec = _service_spec(dgd, key, component, settings, topologies)
        dyn_ns = _dynamo_namespace(dgd, spec)
        name = naming.component_name(graph, key)
        identity = labels.component_identity(graph, key, dyn_ns)
        discovery = discovery_backend(spec, settings) == constants.DISCOVERY_KUBERNETES
        frontend = spec.component_type == constants.FRONTEND
        if frontend or discovery:
            objects.append(
                component_service(
                    name,
                    namespace,
                    key,
                    spec,
                    dyn_ns,
                    object_labels=identity,
                    discovery=discovery,
                )
            )
        model_ref = spec.spec.model_ref
        if model_ref is not None and model_ref.name:
            models.add(model_ref.name)
        if frontend:
            exposure = spec.inputs.ingress or default_ingress(graph, settings)
            for exposed in (
                ingress(name, namespace, exposure, object_labels=identity),
                virtual_service(name, namespace, exposure, settings, object_labels=identity),
            ):
                if exposed is not None:
                    objects.append(exposed)
    objects += [model_service(model, namespace) for model in sorted(models)]
    return objects


def _identity(dgd: HubGraph) -> tuple[str, str]:
    return dgd.name, dgd.namespace


def _service_spec(dgd: HubGraph, key: str, spec: v1beta1.DynamoComponentDeploymentSharedSpec,
                  settings: OperatorSettings,
                  topologies: Mapping[str, Sequence[str]] | None) -> ComponentSpec:
    """Component `key` (`spec`) as the pods see it: graph env under its own, the generation's
    under both (`backends.worker_generation.in_place_generation`), and the graph's discovery
    backend and mode and origin version (`backends.origin_gates`) in its annotations."""
    inputs = with_graph_env(spec, dgd.inputs.component(key), dgd.model.spec.env)
    inputs = with_kv_transfer_policy(dgd, spec, inputs, grove=True, topologies=topologies)
    pod = inputs.pod
    graph_env = dgd.model.spec.env
    generation = in_place_generation(dgd)
    worker = dgd.component_type(key) in constants.WORKER_TYPES
    dyn_ns = naming.dynamo_namespace(dgd.namespace, dgd.name,
                                     global_namespace=bool(spec.global_dynamo_namespace))
    gen_env = generation_env(dgd.component_type(key), dyn_ns,
                             generation if worker else "",
                             provider_generations(dgd))
    if gen_env or graph_env or pod.envs:
        pod = pod.replace(envs=merge_env(gen_env or [], graph_env or [], pod.envs or []))
    graph_annotations = dgd.model.metadata.get("annotations") or {}
    resolved = graph_annotations.get(
        constants.ANNOTATION_DISCOVERY_BACKEND, settings.discovery_backend
    )
    annotations = with_graph_origin(inputs.annotations, graph_annotations)
    inherited = inherited_discovery_mode(dgd)
    if inherited:
        annotations = {**inherited, **(annotations or {})}
    if resolved:
        annotations = {constants.ANNOTATION_DISCOVERY_BACKEND: resolved, **(annotations or {})}
    return ComponentSpec(spec, inputs.replace(pod=pod, annotations=annotations))


def _dynamo_namespace(dgd: HubGraph, spec: ComponentSpec) -> str:
    graph, namespace = _identity(dgd)
    return naming.dynamo_namespace(
        namespace, graph, global_namespace=bool(spec.spec.global_dynamo_namespace)
    )


def _backend(dgd: HubGraph, spec: ComponentSpec) -> str:
    main = main_container_of(spec)
    return frameworks.resolve(
        spec.component_type,
        list(main.get("command") or []),
        list(main.get("args") or []),
        dgd.model.spec.backend_framework,
    ).name


def _clique(
    dgd: HubGraph,
    key: str,
    spec: ComponentSpec,
    dyn_ns: str,
    role: Role,
    ctx: PodContext,
) -> Json:
    graph, _ = _identity(dgd)
    spec = with_role_template(spec, role)
    # The graph's labels and annotations are under everything the clique states.
    return {
        "name": role.name,
        "labels": {**graph_labels(dgd), **labels.grove_clique_labels(
            graph, dgd.model.metadata.get("annotations") or {}, key, spec, dyn_ns
        )},
        "annotations": {**graph_annotations(dgd), **labels.grove_clique_annotations(spec)},
        "spec": {
            "roleName": role.name,
            "replicas": role.replicas,
            "minAvailable": _min_available(role.replicas),
            "podSpec": generate_pod_spec(spec, role, ctx),
        },
    }


def _inter_pod(dgd: HubGraph, key: str, spec: ComponentSpec, dyn_ns: str,
               ctx: PodContext) -> tuple[Json, list[Json], list[Json]]:
    """A service of the inter-pod GPU memory service layout (`backends.inter_pod_gms`): its
    scaling group, its cliques (per rank, the weight server then the engines) and the claim
    templates of its ranks."""
    service_roles = inter_pod_roles(key, spec.spec, node_count(spec.spec))
    after = start_after(service_roles)
    backend = _backend(dgd, spec)
    engines_fail_over = inter_pod_failover(spec.spec)
    gpus = main_gpus(spec.spec)
    cliques = []
    for role in service_roles:
        role_ctx = ctx
        if role.nodes > 1:
            role_ctx = dataclasses.replace(ctx, deployer=InterPodDeployer(role.rank))
        if role.kind == "gms":
            base = Role("main", role.name, 1, 1, rank=role.rank, inter_pod=role.inter_pod)
            clique = _clique(dgd, key, spec, dyn_ns, base, role_ctx)
            clique["name"] = clique["spec"]["roleName"] = role.name
            clique["spec"]["replicas"] = role.replicas
            pod = clique["spec"]["podSpec"]
            clique["spec"]["podSpec"] = weight_server_pod(pod, role, gpus, backend)
            # The weight servers run no Dynamo runtime: nothing for discovery to watch.
            for label in (constants.LABEL_DISCOVERY_BACKEND, constants.LABEL_DISCOVERY_ENABLED):
                clique["labels"].pop(label, None)
        else:
            clique = _clique(dgd, key, spec, dyn_ns, role, role_ctx)
            finish_engine_pod(clique["spec"]["podSpec"], role, key, backend)
            if engines_fail_over:
                clique["labels"][FAILOVER_GROUP_LABEL] = "true"
        clique["spec"]["minAvailable"] = 1
        if role.name in after:
            clique["spec"]["startsAfter"] = after[role.name]
        cliques.append(clique)
    group: Json = {
        "name": key.lower(),
        "cliqueNames": [r.name for r in service_roles],
        "minAvailable": _min_available(spec.spec.replicas),
        "resourceSharing": resource_sharing(key, service_roles),
    }
    if spec.spec.replicas is not None:
        group["replicas"] = spec.spec.replicas
    return group, cliques, claim_template_configs(key, spec.spec, service_roles)


def _apply_kai(dgd: HubGraph, settings: OperatorSettings, cliques: list[Json]) -> None:
    """Hand the cliques to the Kai scheduler, in the graph's queue (existence of the queue is
    checked by the reconciler, which can read the cluster)."""
    if not settings.kai_scheduler_enabled:
        return
    annotations = dgd.model.metadata.get("annotations") or {}
    queue = annotations.get(constants.ANNOTATION_KAI_QUEUE, "").strip() or DEFAULT_KAI_QUEUE
    for clique in cliques:
        pod = clique["spec"]["podSpec"]
        if pod.get("schedulerName") in (None, "", KAI_SCHEDULER):
            pod["schedulerName"] = KAI_SCHEDULER
            clique["labels"][constants.LABEL_KAI_QUEUE] = queue


def _min_available(replicas: int | None) -> int:
    # Grove refuses a minimum above the replicas, so a service scaled to zero needs none.
    return 1 if replicas is None else min(1, replicas)


def _go_duration(seconds: int) -> str:
    """A duration as Go's time.Duration prints it ("15m0s", "1h0m0s", "45s")."""
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes}m{secs}s"
    if minutes:
        return f"{minutes}m{secs}s"
    return f"{secs}s"
