"""Where a base model is served: candidates from the EndpointSlices of its headless Services.

Every Service selecting pods that serve a base model carries the label
`nvidia.com/dynamo-base-model-hash=<hash8(baseModelName)>`, and Kubernetes copies a Service's
labels onto its EndpointSlices; so a model's slices are found through a cache index on that
label, and its DynamoModels through an index on the hash of their `baseModelName`.

A candidate is one address of one endpoint whose `targetRef` is a Pod, addressed at the
worker's system port as `http://<ip>:9090` (IPv6 in brackets). Its readiness is the slice's
`conditions.ready` (absent means ready, as the EndpointSlice API defines it).

The original's controller finds endpoints the same way, with Kubernetes discovery too: the
DynamoWorkerMetadata each worker publishes is for the Dynamo runtimes, and is not read here.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from backends import constants, naming
from controller.informer import Transform, compact, compact_object
from controller.resource import Resource
from reconcilers.machinery.resources import ENDPOINT_SLICES

Json = dict[str, Any]

#: Index of DynamoModels and of EndpointSlices by "<namespace>/<base-model hash>".
BY_MODEL_HASH = "dynamo-base-model-hash"
SERVICE_NAME_LABEL = "kubernetes.io/service-name"


@dataclass(frozen=True, order=True)
class Candidate:
    """One address serving the base model."""

    pod_name: str
    address: str
    pod_uid: str = ""
    ready: bool = True


def model_key(model: Json) -> list[str]:
    """Index function on DynamoModels: the key of their base model."""
    base = (model.get("spec") or {}).get("baseModelName")
    if not isinstance(base, str) or not base:
        return []
    return [hash_key(str((model.get("metadata") or {}).get("namespace", "")),
                     naming.model_hash(base))]


def labelled_key(obj: Json) -> list[str]:
    """Index function on EndpointSlices (and a mapper helper for Pods): the key of the base
    model their label names."""
    meta = obj.get("metadata") or {}
    digest = (meta.get("labels") or {}).get(constants.LABEL_BASE_MODEL_HASH)
    return [hash_key(str(meta.get("namespace", "")), digest)] if digest else []


#: What the cache keeps of an EndpointSlice that serves no model: enough to be listed,
#: watched and deleted (name, namespace, uid, resourceVersion), nothing more.
_STUB_METADATA = ("name", "namespace", "uid", "resourceVersion")


def trim_endpoint_slice(obj: Json) -> Json:
    """The cached form of an EndpointSlice: whole (without managedFields) when it carries the
    base-model label this controller reads, else a stub. With `CACHE_SELECTORS` the server
    sends only labelled slices; a cache built without it holds every Service's slices, as
    stubs."""
    meta = obj.get("metadata") or {}
    if constants.LABEL_BASE_MODEL_HASH in (meta.get("labels") or {}):
        return compact_object(obj)
    return compact({"apiVersion": obj.get("apiVersion", "discovery.k8s.io/v1"),
                    "kind": "EndpointSlice",
                    "metadata": {k: meta[k] for k in _STUB_METADATA if k in meta}})


#: How the cache must hold what this controller reads (see trim_endpoint_slice).
CACHE_TRANSFORMS: dict[Resource, Transform] = {ENDPOINT_SLICES: trim_endpoint_slice}
#: What of a resource the cache needs at all: only the EndpointSlices of model Services (the
#: label is copied from the Service). Every other Service's slices, one or more per Service in
#: the cluster and rewritten at each pod's readiness change, are never sent to the operator.
CACHE_SELECTORS: dict[Resource, str] = {ENDPOINT_SLICES: constants.LABEL_BASE_MODEL_HASH}


def hash_key(namespace: str, digest: str) -> str:
    return f"{namespace}/{digest}"


def address_of(ip: str, port: int = constants.SYSTEM_PORT) -> str:
    """`http://<ip>:<port>`, with an IPv6 address in brackets."""
    try:
        v6 = ipaddress.ip_address(ip).version == 6
    except ValueError:
        v6 = ":" in ip
    return f"http://[{ip}]:{port}" if v6 else f"http://{ip}:{port}"


def candidates(slices: Iterable[Json]) -> tuple[list[Candidate], set[str]]:
    """The candidates of a model's slices (one per pod address, sorted) and the names of the
    Services the slices belong to."""
    found: dict[str, Candidate] = {}
    services: set[str] = set()
    for endpoint_slice in slices:
        service = ((endpoint_slice.get("metadata") or {}).get("labels") or {}).get(
            SERVICE_NAME_LABEL)
        if service:
            services.add(service)
        for endpoint in endpoint_slice.get("endpoints") or ():
            ref = endpoint.get("targetRef") or {}
            if ref.get("kind") != "Pod" or not ref.get("name"):
                continue
            ready = (endpoint.get("conditions") or {}).get("ready")
            for ip in endpoint.get("addresses") or ():
                address = address_of(str(ip))
                candidate = Candidate(pod_name=str(ref["name"]), address=address,
                                      pod_uid=str(ref.get("uid") or ""),
                                      ready=ready is not False)
                # A pod in two slices of one Service (a port change in flight): one endpoint,
                # ready if either says so.
                old = found.get(address)
                if old is None or (candidate.ready and not old.ready):
                    found[address] = candidate
    return sorted(found.values()), services
