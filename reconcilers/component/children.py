"""What a DynamoComponentDeployment's children need from the cluster: the image pull Secrets of
its namespace and the ServiceAccount its pods run as; and the kinds it owns.

The backends render the desired set (pure); the child writer applies it and prunes owned
objects that are no longer desired: an Ingress that was disabled, the legacy layout's
LeaderWorkerSets beyond the replica count (and all of them but the first, with their PodGroups,
once the DCD moves to the native layout: `lws_layout`), the Deployment of a component that
became multinode, the model Service of a changed modelRef.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from backends.children import DesiredChildren
from backends.component_workload import component_children, component_kinds
from backends.hub_component import HubComponent
from backends.leader_worker_set import LwsLayout
from backends.settings import OperatorSettings
from controller.cache import Cache
from controller.resource import Resource
from controller.store import index_by_label
from reconcilers.component.pull_secrets import pull_secrets_of
from reconcilers.machinery.resources import SERVICE_ACCOUNTS, resource_for

#: ServiceAccounts so labelled are used by component pods that name none.
COMPONENT_POD_SA_LABEL = "nvidia.com/dynamo-component-pod"
COMPONENT_POD_SA_INDEX = "component-pod-service-account"
DEFAULT_SERVICE_ACCOUNT = "default"
Json = dict[str, Any]
_BY_COMPONENT_POD_LABEL = index_by_label(COMPONENT_POD_SA_LABEL)


def owned_resources(settings: OperatorSettings) -> list[Resource]:
    """Kinds a DCD may own under these settings (optional APIs only when installed)."""
    return [resource_for(kind) for kind in component_kinds(settings)]


def index_service_accounts(cache: Cache) -> None:
    """Index ServiceAccounts by the component-pod label (before the cache starts)."""
    cache.informer(SERVICE_ACCOUNTS, indexers={COMPONENT_POD_SA_INDEX: _BY_COMPONENT_POD_LABEL})


async def component_service_account(cache: Cache, namespace: str) -> str:
    """The first ServiceAccount of the namespace labelled for component pods, else default."""
    labelled = await cache.by_index(SERVICE_ACCOUNTS, COMPONENT_POD_SA_INDEX, "true")
    names = sorted(str(sa["metadata"]["name"]) for sa in labelled
                   if sa["metadata"].get("namespace") == namespace)
    return names[0] if names else DEFAULT_SERVICE_ACCOUNT


@dataclass(frozen=True)
class ClusterInputs:
    """What a DCD's desired set reads of its namespace besides the DCD: the image pull
    Secrets by registry host, and the ServiceAccount its pods run as."""

    pull_secrets: dict[str, list[str]]
    service_account: str


async def cluster_inputs(cache: Cache, namespace: str) -> ClusterInputs:
    """The namespace's pull Secrets and component ServiceAccount, from the cache."""
    return ClusterInputs(pull_secrets=await pull_secrets_of(cache, namespace),
                         service_account=await component_service_account(cache, namespace))


def desired_children(settings: OperatorSettings, dcd: HubComponent, inputs: ClusterInputs, *,
                     mpi_secret: Json | None = None,
                     epp_cluster_role: str = "",
                     lws_layout: LwsLayout = LwsLayout.NATIVE) -> DesiredChildren:
    """The DCD's desired set, from the DCD as the hub (`mpi_secret`: the MPI SSH
    Secret to copy into the namespace; `epp_cluster_role`: the ClusterRole an EPP's account
    is bound to; `lws_layout`: a multinode DCD's, `lws_layout.choose_layout`); GenerationError
    for a spec the backends cannot render."""
    return component_children(
        dcd, settings, pull_secrets=inputs.pull_secrets,
        service_account=inputs.service_account,
        mpi_secret=mpi_secret, epp_cluster_role=epp_cluster_role, lws_layout=lws_layout)
