"""Everything a DynamoComponentDeployment runs on: its Deployment (or LeaderWorkerSet, in the
layout `backends.leader_worker_set` describes), its Service, the headless Service of its model,
and its Ingress or VirtualService; and that as the desired set the child writer applies. The
DCD is taken as the hub (`HubComponent`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from backends import constants, labels, naming
from backends.children import Child, DesiredChildren, Kind, Write, owned, unowned
from backends.context import PodContext, discovery_backend, discovery_backend_of
from backends.deployment import deployment
from backends.epp import epp_objects, no_inference_pool
from backends.errors import GenerationError
from backends.gpu_memory_service import (
    CLAIM_TEMPLATE_API_VERSION,
    CLAIM_TEMPLATE_IMMUTABLE,
    standalone_claim_templates,
)
from backends.graph_objects import discovery_rbac_of
from backends.hub_component import HubComponent
from backends.ingress import ingress, virtual_service
from backends.leader_worker_set import LwsLayout, leader_worker_sets
from backends.mpi_secret import DIGEST_LABEL, mpi_secret_copy
from backends.multinode import LWS, node_count
from backends.services import component_service, model_service
from backends.settings import OperatorSettings
from backends.shared_rbac import epp_rbac

Json = dict[str, Any]

__all__ = ["component_children", "component_kinds", "component_objects", "component_pod_context"]


def component_pod_context(
    dcd: HubComponent,
    settings: OperatorSettings,
    pull_secrets: Mapping[str, Sequence[str]] | None = None,
) -> PodContext:
    """Pod-generation inputs of a DCD. A DCD made by a graph carries its Dynamo namespace; a
    DCD of its own is its own parent: it gets the Dynamo namespace, parent name and discovery
    account a graph of the same name would."""
    name, namespace = dcd.name, dcd.namespace
    graph = dcd.graph_name()
    dyn_ns = dcd.inputs.dynamo_namespace or naming.dynamo_namespace(
        namespace, graph or name, global_namespace=bool(dcd.model.spec.global_dynamo_namespace)
    )
    return PodContext(
        namespace=namespace,
        graph_name=graph or name,
        dynamo_namespace=dyn_ns,
        host_name=name,
        backend_framework=dcd.model.spec.backend_framework,
        deployer=LWS,
        settings=settings,
        pull_secrets=pull_secrets or {},
    )


def component_objects(
    dcd: HubComponent,
    settings: OperatorSettings,
    *,
    pull_secrets: Mapping[str, Sequence[str]] | None = None,
    service_account: str = "default",
    lws_layout: LwsLayout = LwsLayout.NATIVE,
) -> list[Json]:
    """The objects a DCD owns, workload first; `service_account` is used by pods that name
    none; `lws_layout`: a multinode DCD's (the legacy one only for a DCD found running it).
    They carry no owner reference: the child writer sets it when it creates them."""
    ctx = component_pod_context(dcd, settings, pull_secrets)
    name = dcd.name
    namespace = ctx.namespace
    component = dcd.component
    multinode = node_count(dcd.model.spec) > 1
    if multinode:
        if not settings.lws_enabled:
            raise GenerationError("no multinode orchestrator available")
        objects = leader_worker_sets(dcd, ctx, service_account=service_account,
                                     layout=lws_layout)
    else:
        objects = [deployment(dcd, ctx, service_account=service_account)]
    object_labels = labels.dcd_object_labels(dcd)
    objects.append(
        component_service(
            name,
            namespace,
            dcd.service,
            component,
            ctx.dynamo_namespace,
            object_labels=object_labels,
            annotations=labels.dcd_object_annotations(dcd),
            discovery=discovery_backend(component, settings) == constants.DISCOVERY_KUBERNETES,
            leader_only=multinode,
        )
    )
    model_ref = dcd.model.spec.model_ref
    if model_ref is not None and model_ref.name:
        objects.append(model_service(model_ref.name, namespace))
    exposure = dcd.inputs.ingress
    for exposed in (
        ingress(name, namespace, exposure, object_labels=object_labels),
        virtual_service(name, namespace, exposure, settings, object_labels=object_labels),
    ):
        if exposed is not None:
            objects.append(exposed)
    return objects


def component_children(
    dcd: HubComponent,
    settings: OperatorSettings,
    *,
    pull_secrets: Mapping[str, Sequence[str]] | None = None,
    service_account: str = "default",
    mpi_secret: Json | None = None,
    epp_cluster_role: str = "",
    lws_layout: LwsLayout = LwsLayout.NATIVE,
) -> DesiredChildren:
    """The DCD's desired set for the child writer: its objects (the model Service shared with
    every component serving the model) and the kinds it may own under these settings. A DCD
    of its own also gets what a graph would make for it: the discovery RBAC, an EPP's
    ConfigMap, InferencePool and account, and `mpi_secret` (another namespace's MPI SSH
    Secret) copied into its namespace; `epp_cluster_role`: the ClusterRole an EPP's account is
    bound to (else a Role of the namespace); `lws_layout` as for `component_objects`."""
    objects = component_objects(dcd, settings, pull_secrets=pull_secrets,
                                service_account=service_account, lws_layout=lws_layout)
    children = owned(objects)
    if not dcd.graph_name():
        children += _standalone(dcd, settings, epp_cluster_role)
        if mpi_secret is not None:
            children.append(Child(mpi_secret_copy(mpi_secret, dcd.namespace),
                                  Write.UNOWNED, drift_label=DIGEST_LABEL))
    return DesiredChildren(tuple(children), component_kinds(settings))


def _standalone(hub: HubComponent, settings: OperatorSettings,
                epp_cluster_role: str = "") -> list[Child]:
    name, namespace = hub.name, hub.namespace
    children = []
    children += [Child(t, immutable=CLAIM_TEMPLATE_IMMUTABLE)
                 for t in standalone_claim_templates(hub, settings)]
    if discovery_backend_of(hub.inputs.annotations, settings) == constants.DISCOVERY_KUBERNETES:
        children += owned(discovery_rbac_of(name, namespace))
    if hub.inputs.component_type == constants.EPP:
        if not settings.inference_pool_enabled:
            raise GenerationError(no_inference_pool([hub.service]))
        spec = hub.model.spec
        # A DCD of its own is its own parent (see component_pod_context).
        dyn_ns = hub.inputs.dynamo_namespace or naming.dynamo_namespace(
            namespace, name, global_namespace=bool(spec.global_dynamo_namespace))
        children += unowned(epp_rbac(namespace, epp_cluster_role))
        children += owned(epp_objects(name, namespace, hub.service, spec.epp_config,
                                      dynamo_namespace=dyn_ns, picker_service=name))
    return children


def component_kinds(settings: OperatorSettings) -> tuple[Kind, ...]:
    """Kinds a DCD may own under these settings (optional APIs only when installed); what it
    owns of them and no longer wants is deleted, such as the Deployment of a component that
    became multinode, the PodGroups of the legacy LeaderWorkerSet layout, or what the original
    operator made and we do not (its debug Services)."""
    kinds: list[Kind] = [("apps/v1", "Deployment"), ("v1", "Service"),
                         ("networking.k8s.io/v1", "Ingress"), ("v1", "ServiceAccount"),
                         ("rbac.authorization.k8s.io/v1", "Role"),
                         ("rbac.authorization.k8s.io/v1", "RoleBinding"), ("v1", "ConfigMap")]
    if settings.inference_pool_enabled:
        kinds.append((constants.INFERENCE_POOL_API_VERSION, "InferencePool"))
    if settings.lws_enabled:
        kinds.append((constants.LWS_API_VERSION, "LeaderWorkerSet"))
        if settings.volcano_enabled:
            kinds.append((constants.VOLCANO_API_VERSION, "PodGroup"))
    if settings.virtual_service_gateway:
        kinds.append((constants.ISTIO_API_VERSION, "VirtualService"))
    if settings.dra_enabled:
        kinds.append((CLAIM_TEMPLATE_API_VERSION, "ResourceClaimTemplate"))
    return tuple(kinds)
