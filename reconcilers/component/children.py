"""The objects a DynamoComponentDeployment owns: render, apply, prune.

The backends render the desired objects (pure); this module gathers what they need from the
cache (pull secrets, the component service account), applies each object through the
ChildWriter (create, or update only on drift) and deletes owned objects that are no longer
desired: an Ingress that was disabled, LeaderWorkerSets beyond the replica count, the
Deployment of a component that became multinode, the model Service of a changed modelRef.
Pruning goes by controller owner reference, so it also removes what an earlier version (or
the original operator) created and we no longer make, such as its debug Services.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from api.v1alpha1 import DynamoComponentDeployment
from backends import constants
from backends.component_workload import component_objects
from backends.settings import OperatorSettings
from controller.cache import Cache
from controller.informer import Informer
from controller.resource import Resource
from controller.store import OWNER_UID_INDEX, index_by_label
from reconcilers.component.pull_secrets import pull_secrets_of
from reconcilers.machinery.children import ChildWriter, Outcome
from reconcilers.machinery.resources import (
    DEPLOYMENTS,
    INGRESSES,
    LEADER_WORKER_SETS,
    SERVICE_ACCOUNTS,
    SERVICES,
    VIRTUAL_SERVICES,
    VOLCANO_POD_GROUPS,
)

Json = dict[str, Any]

#: ServiceAccounts so labelled are used by component pods that name none.
COMPONENT_POD_SA_LABEL = "nvidia.com/dynamo-component-pod"
COMPONENT_POD_SA_INDEX = "component-pod-service-account"
DEFAULT_SERVICE_ACCOUNT = "default"


def owned_resources(settings: OperatorSettings) -> list[Resource]:
    """Kinds a DCD may own under these settings (optional APIs only when installed)."""
    kinds = [DEPLOYMENTS, SERVICES, INGRESSES]
    if settings.lws_enabled:
        kinds.append(LEADER_WORKER_SETS)
        if settings.volcano_enabled:
            kinds.append(VOLCANO_POD_GROUPS)
    if settings.virtual_service_gateway:
        kinds.append(VIRTUAL_SERVICES)
    return kinds


def service_account_informer(cache: Cache) -> Informer:
    # Not trimmed: ServiceAccounts are small, and the graph controller applies some through
    # the ChildWriter, which needs their owner references and annotations.
    return cache.informer(SERVICE_ACCOUNTS,
                          indexers={COMPONENT_POD_SA_INDEX: index_by_label(COMPONENT_POD_SA_LABEL)})


async def component_service_account(cache: Cache, namespace: str) -> str:
    """The first ServiceAccount of the namespace labelled for component pods, else default."""
    labelled = await cache.by_index(SERVICE_ACCOUNTS, COMPONENT_POD_SA_INDEX, "true")
    names = sorted(str(sa["metadata"]["name"]) for sa in labelled
                   if sa["metadata"].get("namespace") == namespace)
    return names[0] if names else DEFAULT_SERVICE_ACCOUNT


@dataclass
class ChildrenState:
    """What applying the children left: live workload objects by name, and conflicts."""

    #: Live Deployment / LeaderWorkerSet objects by name (None: not there).
    workloads: dict[str, Json | None] = field(default_factory=dict)
    #: Workload names in the order the backends produced them.
    workload_names: list[str] = field(default_factory=list)
    #: "Kind name" of desired objects whose name is taken by an object we do not own.
    not_owned: list[str] = field(default_factory=list)


def _resource_of(obj: Json, kinds: list[Resource]) -> Resource:
    for resource in kinds:
        if resource.kind == obj["kind"] and resource.api_version == obj["apiVersion"]:
            return resource
    raise ValueError(f"no resource known for {obj['apiVersion']} {obj['kind']}")


def _shared_model_service(live: Json, desired: Json) -> bool:
    """The headless model Service is shared by every component serving the same model in a
    namespace: the first one owns it, the others use it as it is."""
    labels = live["metadata"].get("labels") or {}
    wanted = desired["metadata"].get("labels") or {}
    return (labels.get(constants.LABEL_MANAGED_BY) == constants.MANAGED_BY
            and constants.LABEL_BASE_MODEL_HASH in wanted
            and labels.get(constants.LABEL_BASE_MODEL_HASH)
            == wanted[constants.LABEL_BASE_MODEL_HASH])


async def sync_children(cache: Cache, writer: ChildWriter, settings: OperatorSettings,
                        parent: Json, dcd: DynamoComponentDeployment) -> ChildrenState:
    """Bring the DCD's children to the desired state; raises GenerationError for a spec the
    backends cannot render."""
    namespace = str(parent["metadata"]["namespace"])
    desired = component_objects(
        dcd, settings,
        pull_secrets=await pull_secrets_of(cache, namespace),
        service_account=await component_service_account(cache, namespace))
    kinds = owned_resources(settings)
    state = ChildrenState()
    wanted: set[tuple[str, str]] = set()
    for obj in desired:
        resource = _resource_of(obj, kinds)
        name = obj["metadata"]["name"]
        wanted.add((resource.kind, name))
        applied = await writer.apply(parent, resource, obj)
        ours = applied.outcome is not Outcome.NOT_OWNED
        if not ours and not (resource is SERVICES and applied.live is not None
                             and _shared_model_service(applied.live, obj)):
            state.not_owned.append(f"{resource.kind} {name}")
        if resource in (DEPLOYMENTS, LEADER_WORKER_SETS):
            state.workload_names.append(name)
            state.workloads[name] = applied.live if ours else None
    await _prune(cache, writer, parent, kinds, wanted)
    return state


async def _prune(cache: Cache, writer: ChildWriter, parent: Json, kinds: list[Resource],
                 wanted: set[tuple[str, str]]) -> None:
    uid = parent["metadata"]["uid"]
    namespace = parent["metadata"]["namespace"]
    for resource in kinds:
        for child in await cache.by_index(resource, OWNER_UID_INDEX, uid):
            name = child["metadata"]["name"]
            if (resource.kind, name) not in wanted:
                await writer.delete(parent, resource, namespace, name)
