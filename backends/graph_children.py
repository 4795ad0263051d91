"""Everything a DynamoGraphDeployment should have, in one pure call.

`graph_children` returns the graph's whole desired set: the Planner's and the EPP's shared
RBAC, the copy of the MPI SSH Secret, the PVCs it asks to create (and those it only uses), the
scaling adapters, the RBAC of Kubernetes discovery, the EPP's ConfigMap and InferencePool, and
the workloads: one DCD per service, or on the Grove path one
PodCliqueSet with its Services and Ingresses and the replicas of its cliques. The reconciler
hands the set to the child writer once. The graph is taken as the hub (`HubGraph`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from api import v1beta1
from api.conversion import HUB
from backends import constants
from backends.children import Child, DesiredChildren, Kind, ObjectRef, Write, owned, unowned
from backends.component_deployment import component_deployments
from backends.epp import epp_services, graph_epp_objects, no_inference_pool
from backends.errors import GenerationError
from backends.gpu_memory_service import (
    CLAIM_TEMPLATE_API_VERSION,
    CLAIM_TEMPLATE_IMMUTABLE,
    graph_claim_templates,
)
from backends.graph_objects import (
    discovery_rbac,
    persistent_volume_claims,
    scaling_adapters,
    uses_discovery,
)
from backends.grove import grove_objects
from backends.hub_graph import HubGraph
from backends.inter_pod_gms import inter_pod_gms
from backends.mpi_secret import DIGEST_LABEL, mpi_secret_copy
from backends.multinode import node_count
from backends.settings import OperatorSettings
from backends.shared_rbac import epp_rbac, planner_rbac
from backends.worker_generation import WorkerPlan, graph_workers, worker_dcd_name, worker_hash
from backends.worker_revisions import worker_revisions

Json = dict[str, Any]

__all__ = ["NO_ORCHESTRATOR", "graph_children", "grove_workload", "pruned_kinds", "uses_grove"]

NO_ORCHESTRATOR = (
    "no multinode orchestrator available: service(s) {services} need several nodes; install "
    "LeaderWorkerSet (leaderworkerset.x-k8s.io) or Grove (grove.io) and restart the operator"
)


_V1, _RBAC = "v1", "rbac.authorization.k8s.io/v1"
_INFERENCE_POOL: Kind = (constants.INFERENCE_POOL_API_VERSION, "InferencePool")
_DCD: Kind = (HUB, "DynamoComponentDeployment")  # built as the hub, as it is stored
_ADAPTER: Kind = (constants.DYNAMO_API_VERSION, "DynamoGraphDeploymentScalingAdapter")
_POD_CLIQUE_SET: Kind = (constants.GROVE_API_VERSION, "PodCliqueSet")
_REVISION: Kind = ("apps/v1", "ControllerRevision")
_CLAIM_TEMPLATE: Kind = (CLAIM_TEMPLATE_API_VERSION, "ResourceClaimTemplate")


def uses_grove(graph: HubGraph, settings: OperatorSettings) -> bool:
    """Grove runs the graph when installed, unless the graph opts out by annotation."""
    annotations = graph.model.metadata.get("annotations") or {}
    opted_out = annotations.get(constants.ANNOTATION_ENABLE_GROVE, "").lower() == "false"
    return settings.grove_enabled and not opted_out


def graph_children(
    hub: HubGraph,
    settings: OperatorSettings,
    *,
    tokens: Mapping[str, str | None] | None = None,
    planner_cluster_role: str = "",
    epp_cluster_role: str = "",
    pull_secrets: Mapping[str, Sequence[str]] | None = None,
    mpi_secret: Json | None = None,
    workers: WorkerPlan | None = None,
    revisions: Sequence[Json] = (),
    topologies: Mapping[str, Sequence[str]] | None = None,
) -> DesiredChildren:
    """The graph's desired children. `tokens`: the restart token each service's workload
    carries; `planner_cluster_role`: bind the Planner's account to it (else to a Role of the
    namespace); `epp_cluster_role`: the same for the EPP's account; `pull_secrets`: registry
    host -> Secret names, for the pods of the Grove path; `mpi_secret`: the MPI SSH Secret of
    another namespace, to copy into the graph's; `workers`: the worker DCDs by generation (the
    rollout's plan; by default those of a graph with nothing running); `revisions`: the
    worker ControllerRevisions the graph owns (`backends.worker_revisions`: the current one
    and those within the history limit are kept, the rest pruned); `topologies`: the levels
    of the cluster's ClusterTopologies by name, for a KV transfer policy naming one.
    Raises GenerationError for a graph that cannot run under these settings."""
    tokens = tokens or {}
    namespace = hub.namespace
    children: list[Child] = []
    # Shared by the namespace: the planner's is made for every graph once a ClusterRole is
    # configured (as the original does), else for graphs that run a planner.
    if planner_cluster_role or any(hub.component_type(name) == constants.PLANNER
                                   for name, _ in hub.components()):
        children += unowned(planner_rbac(namespace, planner_cluster_role))
    epps = epp_services(hub)
    if epps:
        children += unowned(epp_rbac(namespace, epp_cluster_role))
    if mpi_secret is not None:
        children.append(Child(mpi_secret_copy(mpi_secret, namespace), Write.UNOWNED,
                              drift_label=DIGEST_LABEL))
    # A claim of that name that exists already is used as it is, whoever made it.
    children += [Child(c, Write.CREATE_ONLY, shared_labels=())
                 for c in persistent_volume_claims(hub)]
    children += [Child(a, Write.CREATE_ONLY) for a in scaling_adapters(hub)]
    if uses_discovery(hub, settings.discovery_backend):
        children += [Child(o) for o in discovery_rbac(hub)]
    children += _epp_objects(hub, settings, epps)
    # GPU memory service: the claim templates exist before the pods that use them.
    grove = uses_grove(hub, settings)
    children += [Child(t, immutable=CLAIM_TEMPLATE_IMMUTABLE)
                 for t in graph_claim_templates(hub, settings, grove=grove)]
    if grove:
        children += _grove(hub, settings, tokens, pull_secrets, topologies)
        # Grove replaces the pods itself; the history still lets `rollout undo` go back.
        grove_workers = graph_workers(hub)
        children += [Child(r) for r in worker_revisions(
            hub, revisions, {worker_hash(hub, grove_workers)}, workers=grove_workers)]
    else:
        children += _components(hub, settings, tokens, workers)
        running = {d.generation for dcds in (workers.dcds if workers else {}).values()
                   for d in dcds}
        children += [Child(r) for r in worker_revisions(hub, revisions, running)]
    required = tuple(ObjectRef(_V1, "PersistentVolumeClaim", p.name) for p in hub.inputs.pvcs
                     if p.name and not p.create)
    return DesiredChildren(tuple(children), pruned_kinds(settings), required)


def pruned_kinds(settings: OperatorSettings) -> tuple[Kind, ...]:
    """Kinds a graph may own under these settings: whatever of them it owns and no longer
    wants is deleted (the DCDs after a switch to Grove, the PodCliqueSet after a switch back)."""
    kinds = [_ADAPTER, (_V1, "ServiceAccount"), (_RBAC, "Role"), (_RBAC, "RoleBinding"),
             (_V1, "ConfigMap"), _DCD, _REVISION]
    if settings.inference_pool_enabled:
        kinds.append(_INFERENCE_POOL)
    if settings.dra_enabled:
        kinds.append(_CLAIM_TEMPLATE)
    if settings.grove_enabled:
        kinds += [_POD_CLIQUE_SET, (_V1, "Service"), ("networking.k8s.io/v1", "Ingress")]
        if settings.virtual_service_gateway:
            kinds.append(("networking.istio.io/v1beta1", "VirtualService"))
    return tuple(kinds)


def _epp_objects(hub: HubGraph, settings: OperatorSettings,
                 epps: list[tuple[str, v1beta1.DynamoComponentDeploymentSharedSpec]]
                 ) -> list[Child]:
    """Each EPP service's ConfigMap (inline config) and InferencePool, owned by the graph."""
    if not epps:
        return []
    if not settings.inference_pool_enabled:
        raise GenerationError(no_inference_pool([k for k, _ in epps]))
    return [Child(o) for key, spec in epps for o in graph_epp_objects(hub, key, spec)]


def grove_workload(graph: str, service: str,
                   spec: v1beta1.DynamoComponentDeploymentSharedSpec) -> Kind:
    """The Grove object that runs a service, `<graph>-0-<service>`: a PodClique, or a
    PodCliqueScalingGroup when the service spans several nodes or runs the inter-pod GPU
    memory service; (kind, name)."""
    name = f"{graph}-0-{service.lower()}"
    group = node_count(spec) > 1 or inter_pod_gms(spec)
    return ("PodCliqueScalingGroup" if group else "PodClique"), name


def _components(hub: HubGraph, settings: OperatorSettings,
                tokens: Mapping[str, str | None], plan: WorkerPlan | None) -> list[Child]:
    if not settings.lws_enabled:
        multinode = [name for name, spec in hub.components() if node_count(spec) > 1]
        if multinode:
            raise GenerationError(NO_ORCHESTRATOR.format(services=", ".join(multinode)))
    children = [Child(obj) for obj in component_deployments(hub, settings, tokens, plan)]
    for service, dcds in sorted((plan.dcds if plan is not None else {}).items()):
        # Older generations are kept as they were written: only their replicas move.
        children += [Child({
            "apiVersion": HUB, "kind": "DynamoComponentDeployment",
            "metadata": {"name": worker_dcd_name(hub.name, service, d.generation),
                         "namespace": hub.namespace},
            "spec": {"replicas": d.replicas or 0},
        }, Write.REPLICAS) for d in dcds if not d.target]
    return children


def _grove(hub: HubGraph, settings: OperatorSettings, tokens: Mapping[str, str | None],
           pull_secrets: Mapping[str, Sequence[str]] | None,
           topologies: Mapping[str, Sequence[str]] | None) -> list[Child]:
    objects = grove_objects(hub, settings, pull_secrets=pull_secrets, topologies=topologies)
    for obj in objects:
        if obj["kind"] == "PodCliqueSet":
            _set_tokens(obj, tokens)
    children = owned(objects)
    graph, namespace = hub.name, hub.namespace
    # Grove creates the cliques; their replicas belong to whoever scales them, so the graph's
    # replicas reach them through the scale subresource.
    for service, spec in hub.components():
        if spec.replicas is None:
            continue
        kind, name = grove_workload(graph, service, spec)
        children.append(Child({
            "apiVersion": constants.GROVE_API_VERSION, "kind": kind,
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"replicas": spec.replicas},
        }, Write.SCALE))
    return children


def _set_tokens(pcs: Json, tokens: Mapping[str, str | None]) -> None:
    for clique in ((pcs.get("spec") or {}).get("template") or {}).get("cliques") or []:
        token = tokens.get((clique.get("labels") or {}).get(constants.LABEL_COMPONENT, ""))
        if token:
            clique["annotations"] = {**(clique.get("annotations") or {}),
                                     constants.ANNOTATION_RESTART_AT: token}

