"""The children of a graph besides its workloads: PVCs, scaling adapters, RBAC, and pruning.

Each function reads the cache, writes only what is missing or different, and raises
`GraphProblem` for what the user has to fix (a missing PVC, a name taken by an object we do not
own); API errors propagate for the caller to retry.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Collection, Iterable
from typing import Any

from api.v1alpha1 import DynamoGraphDeployment
from backends import constants
from backends.graph_objects import discovery_rbac, persistent_volume_claims, scaling_adapters
from backends.planner_rbac import planner_role_binding, planner_service_account
from controller.errors import AlreadyExists, NotFound
from controller.resource import Resource
from controller.store import OWNER_UID_INDEX
from reconcilers.machinery.children import ChildWriter, Outcome, is_owned_by, owner_reference
from reconcilers.machinery.context import OperatorContext
from reconcilers.machinery.resources import (
    PERSISTENT_VOLUME_CLAIMS,
    ROLE_BINDINGS,
    ROLES,
    SCALING_ADAPTERS,
    SERVICE_ACCOUNTS,
)

Json = dict[str, Any]

#: Seconds before looking again at a name taken by someone else's object (its deletion does
#: not wake us: it is not ours).
NOT_OWNED_RETRY = 30.0


class GraphProblem(Exception):
    """Something the user must fix; recorded in the graph's status instead of retried hot.

    `retry_after`: look again after that many seconds even without a change (None: only when
    something we watch changes)."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


def not_owned(kind: str, name: str) -> GraphProblem:
    return GraphProblem(f"{kind} {name} already exists and is not owned by this graph",
                        NOT_OWNED_RETRY)


def graph_name(live: Json) -> str:
    return str(live["metadata"]["name"])


async def _cached(ctx: OperatorContext, resource: Resource, namespace: str,
                  name: str) -> Json | None:
    try:
        return await ctx.cache.get(resource, namespace, name)
    except NotFound:
        return None


# --- PVCs -------------------------------------------------------------------------------------

async def ensure_claims(ctx: OperatorContext, writer: ChildWriter, live: Json,
                        dgd: DynamoGraphDeployment) -> None:
    """Create the PVCs marked `create: true` that are missing; existing claims are never
    updated or adopted. A claim to be used but absent is a GraphProblem naming it."""
    namespace = live["metadata"]["namespace"]
    wanted = {c["metadata"]["name"]: c for c in persistent_volume_claims(dgd)}
    missing = []
    for pvc in dgd.spec.pvcs or []:
        if not pvc.name or await _cached(ctx, PERSISTENT_VOLUME_CLAIMS, namespace, pvc.name):
            continue
        claim = wanted.get(pvc.name)
        if claim is None:
            missing.append(f'persistentvolumeclaims "{pvc.name}" not found')
            continue
        claim = copy.deepcopy(claim)
        claim["metadata"]["ownerReferences"] = [owner_reference(live)]
        try:
            await ctx.client.create(PERSISTENT_VOLUME_CLAIMS, claim)
        except AlreadyExists:
            continue  # the cache is behind; the claim is there
        await writer.recorder.normal(live, "CreatePersistentVolumeClaim",
                                     f"Created PersistentVolumeClaim {pvc.name}")
    if missing:
        raise GraphProblem("; ".join(missing))


def claimed_names(obj: Json) -> list[str]:
    """Index of graphs by the `<namespace>/<name>` of PVCs they use without creating them, so
    that such a PVC appearing wakes the graphs waiting for it."""
    namespace = obj["metadata"].get("namespace", "")
    return [f"{namespace}/{p['name']}" for p in (obj.get("spec") or {}).get("pvcs") or []
            if isinstance(p, dict) and p.get("name") and not p.get("create")]


# --- scaling adapters -------------------------------------------------------------------------

async def ensure_adapters(ctx: OperatorContext, writer: ChildWriter, live: Json,
                          dgd: DynamoGraphDeployment) -> None:
    """Create the adapters of services that opt in, seeded with the service's replicas.

    An existing adapter is never written: from then on the adapter owns the replicas and its
    controller copies them into the graph. Adapters of services that left the graph or opted
    out are deleted.
    """
    namespace = live["metadata"]["namespace"]
    desired = scaling_adapters(dgd)
    for adapter in desired:
        name = adapter["metadata"]["name"]
        existing = await _cached(ctx, SCALING_ADAPTERS, namespace, name)
        if existing is None:
            applied = await writer.apply(live, SCALING_ADAPTERS, adapter)
            existing = applied.live
        if existing is not None and not is_owned_by(existing, live):
            raise not_owned(SCALING_ADAPTERS.kind, name)
    services = set(dgd.spec.services or {})
    for adapter in await prune(ctx, writer, live, SCALING_ADAPTERS,
                               {a["metadata"]["name"] for a in desired}):
        service = ((adapter.get("spec") or {}).get("dgdRef") or {}).get("serviceName", "")
        if service not in services:
            await writer.recorder.normal(
                live, "AdapterDeleted",
                f"Deleted orphaned scaling adapter {adapter['metadata']['name']} for removed "
                f"service {service}")


# --- RBAC -------------------------------------------------------------------------------------

async def sync_discovery_rbac(ctx: OperatorContext, writer: ChildWriter, live: Json,
                              dgd: DynamoGraphDeployment, enabled: bool) -> None:
    """ServiceAccount, Role and RoleBinding of Kubernetes discovery, owned by the graph; deleted
    when the graph stops using Kubernetes discovery."""
    objects = discovery_rbac(dgd)
    kinds = {"ServiceAccount": SERVICE_ACCOUNTS, "Role": ROLES, "RoleBinding": ROLE_BINDINGS}
    for obj in objects:
        resource, name = kinds[obj["kind"]], obj["metadata"]["name"]
        if not enabled:
            await writer.delete(live, resource, obj["metadata"]["namespace"], name)
            continue
        if (await writer.apply(live, resource, obj)).outcome is Outcome.NOT_OWNED:
            raise not_owned(resource.kind, name)


async def ensure_planner_rbac(ctx: OperatorContext, writer: ChildWriter, live: Json) -> None:
    """The Planner's ServiceAccount and RoleBinding in the graph's namespace (cluster-wide mode).

    Shared by every graph of the namespace, so not owned: created when missing, the binding
    recreated when it points at another role (roleRef is immutable) and updated when only its
    subjects differ."""
    role = ctx.planner_cluster_role_name
    namespace = live["metadata"]["namespace"]
    if ctx.namespace is not None or not role:
        return
    account = planner_service_account(namespace)
    if await _cached(ctx, SERVICE_ACCOUNTS, namespace, account["metadata"]["name"]) is None:
        await _create_shared(ctx, writer, live, SERVICE_ACCOUNTS, account)
    binding = planner_role_binding(namespace, role)
    name = binding["metadata"]["name"]
    existing = await _cached(ctx, ROLE_BINDINGS, namespace, name)
    if existing is None:
        await _create_shared(ctx, writer, live, ROLE_BINDINGS, binding)
    elif existing.get("roleRef") != binding["roleRef"]:
        with contextlib.suppress(NotFound):
            await ctx.client.delete(ROLE_BINDINGS, namespace, name)
        await _create_shared(ctx, writer, live, ROLE_BINDINGS, binding)
    elif existing.get("subjects") != binding["subjects"]:
        await ctx.client.update(ROLE_BINDINGS, {**existing, "subjects": binding["subjects"]})
        await writer.recorder.normal(live, "UpdateRoleBinding", f"Updated RoleBinding {name}")


async def _create_shared(ctx: OperatorContext, writer: ChildWriter, live: Json,
                         resource: Resource, obj: Json) -> None:
    try:
        await ctx.client.create(resource, obj)
    except AlreadyExists:
        return
    await writer.recorder.normal(live, f"Create{resource.kind}",
                                 f"Created {resource.kind} {obj['metadata']['name']}")


# --- pruning ----------------------------------------------------------------------------------

async def prune(ctx: OperatorContext, writer: ChildWriter, live: Json, resource: Resource,
                keep: Collection[str]) -> list[Json]:
    """Delete the graph's children of one kind that are not in `keep`; the deleted objects.

    Only objects carrying the graph's name label *and* a controller reference to this very
    graph (same uid) are candidates: anything else is not ours to remove.
    """
    namespace = live["metadata"]["namespace"]
    # The owner index, not a label scan: a namespace may hold thousands of graphs.
    owned = await ctx.cache.by_index(resource, OWNER_UID_INDEX, live["metadata"]["uid"])
    graph_label = graph_name(live)
    deleted = []
    for child in _sorted(owned):
        name = child["metadata"]["name"]
        labels = child["metadata"].get("labels") or {}
        if (name in keep or child["metadata"].get("namespace") != namespace
                or labels.get(constants.LABEL_GRAPH_NAME) != graph_label
                or not is_owned_by(child, live)):
            continue
        applied = await writer.delete(live, resource, namespace, name)
        if applied.outcome is Outcome.DELETED:
            deleted.append(child)
    return deleted


def _sorted(objects: Iterable[Json]) -> list[Json]:
    return sorted(objects, key=lambda o: str(o["metadata"]["name"]))
