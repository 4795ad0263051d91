"""What a simulated Dynamo worker publishes for Kubernetes discovery: its DynamoWorkerMetadata.

The Dynamo runtime of a pod running with `DYN_DISCOVERY_BACKEND=kubernetes` (the operator sets
it unless the graph asks for etcd) applies, as field manager `dynamo-worker`, one
DynamoWorkerMetadata named after its pod in the pod's namespace, with a non-controller owner
reference to the pod (so garbage collection removes it with the pod) and no labels. Its
`spec.data` is the runtime's discovery registrations: the `generate` endpoint of the worker's
component under `endpoints`, and the model it serves under `model_cards`, each keyed
`<dynamo namespace>/<component>/<endpoint>` (the namespace with the worker generation's
`DYN_NAMESPACE_WORKER_SUFFIX`, see `generations`) and carrying the pod's instance id (a 53-bit hash
of the pod name, so it survives JSON numbers).

`worker_metadata` builds that object from the pod (pure). `MetadataPublisher` writes it, the
first time the worker's container runs, when the CRD is served: the in-process kubelet's
workers call it (`Workers(on_start=...)`); a worker of a pod whose discovery is etcd, a
frontend, planner or EPP pod, and a cluster without the CRD publish nothing, as the runtime
does (a frontend registers no endpoint; without the CRD the runtime cannot write one).
"""

from __future__ import annotations

import hashlib
from typing import Any

import structlog

from ..storage import ResourceKey
from .generations import dynamo_namespace
from .writer import Retry, Writer

Json = dict[str, Any]
log = structlog.get_logger("localcluster.workers")

WORKER_METADATA: ResourceKey = ("nvidia.com", "dynamoworkermetadatas")
#: The field manager of the Dynamo runtime's writes.
MANAGER = "dynamo-worker"
DISCOVERY_ENV = "DYN_DISCOVERY_BACKEND"
KUBERNETES = "kubernetes"
COMPONENT_TYPE_LABEL = "nvidia.com/dynamo-component-type"
SUB_COMPONENT_TYPE_LABEL = "nvidia.com/dynamo-sub-component-type"
BASE_MODEL_ANNOTATION = "nvidia.com/dynamo-base-model"
#: Component types whose pods register no endpoint of their own.
_NOT_WORKERS = frozenset({"frontend", "planner", "epp"})
#: JSON-safe instance ids: at most 53 bits, as the runtime masks them.
_INSTANCE_MASK = (1 << 53) - 1
ENDPOINT = "generate"


def instance_id(pod_name: str) -> int:
    """The pod's stable Dynamo instance id (the runtime hashes the pod name the same way
    every time; any stable 53-bit hash will do here)."""
    digest = hashlib.blake2b(pod_name.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") & _INSTANCE_MASK


def _env(container: Json) -> dict[str, str]:
    return {str(e.get("name")): str(e["value"]) for e in container.get("env") or ()
            if isinstance(e, dict) and "value" in e}


def _main_container(pod: Json) -> Json | None:
    """The container serving the system port (the one the runtime runs in)."""
    for container in (pod.get("spec") or {}).get("containers") or ():
        if any(p.get("name") == "system" for p in container.get("ports") or ()):
            return dict(container)
    return None


def publishes(pod: Json) -> bool:
    """Whether the pod's runtime writes a DynamoWorkerMetadata: a worker (not a frontend,
    planner or EPP) whose discovery backend is Kubernetes."""
    labels = (pod.get("metadata") or {}).get("labels") or {}
    kind = labels.get(COMPONENT_TYPE_LABEL)
    container = _main_container(pod)
    if kind is None or kind in _NOT_WORKERS or container is None:
        return False
    return _env(container).get(DISCOVERY_ENV) == KUBERNETES


def _served_model(pod: Json, container: Json) -> str:
    """The model the worker serves: its base-model annotation, else its `--model` argument."""
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    if annotations.get(BASE_MODEL_ANNOTATION):
        return str(annotations[BASE_MODEL_ANNOTATION])
    words = [*(container.get("command") or ()), *(container.get("args") or ())]
    text = " ".join(str(w) for w in words).split()
    for i, word in enumerate(text[:-1]):
        if word in ("--model", "--model-path"):
            return text[i + 1]
    return ""


def discovery_data(pod: Json) -> Json:
    """`spec.data`: the worker's registrations, as the runtime serializes them."""
    meta = pod.get("metadata") or {}
    labels = meta.get("labels") or {}
    container = _main_container(pod) or {}
    namespace = dynamo_namespace(pod)  # with the generation's suffix, as the runtime has it
    component = "prefill" if "prefill" in (labels.get(COMPONENT_TYPE_LABEL),
                                           labels.get(SUB_COMPONENT_TYPE_LABEL)) else "backend"
    ident = instance_id(str(meta.get("name", "")))
    key = f"{namespace}/{component}/{ENDPOINT}"
    where = {"namespace": namespace, "component": component, "endpoint": ENDPOINT,
             "instance_id": ident}
    data: Json = {
        "endpoints": {key: {"type": "Endpoint", **where, "transport": {
            "nats_tcp": f"{namespace}_{component}.{ENDPOINT}-{ident:x}"}}},
        "model_cards": {},
    }
    model = _served_model(pod, container)
    if model:
        data["model_cards"][key] = {"type": "Model", **where,
                                    "card_json": {"display_name": model}, "model_suffix": None}
    return data


def worker_metadata(pod: Json) -> Json:
    """The DynamoWorkerMetadata the pod's runtime applies."""
    meta = pod["metadata"]
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoWorkerMetadata",
        "metadata": {
            "name": meta["name"],
            "namespace": meta["namespace"],
            "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": meta["name"],
                                 "uid": meta["uid"], "controller": False,
                                 "blockOwnerDeletion": False}],
        },
        "spec": {"data": discovery_data(pod)},
    }


class MetadataPublisher:
    """Writes a starting worker's DynamoWorkerMetadata through the local API server's
    operations, as the runtime's `dynamo-worker` field manager."""

    def __init__(self, writer: Writer) -> None:
        self.writer = writer

    def publish(self, pod: Json) -> None:
        """Create (or bring back to what the pod publishes) the pod's object, when the pod
        publishes one and the CRD is served."""
        if not publishes(pod) or self.writer.served(WORKER_METADATA) is None:
            return
        desired = worker_metadata(pod)
        meta = desired["metadata"]
        try:
            live = self.writer.get(WORKER_METADATA, meta["namespace"], meta["name"])
            if live is None:
                self.writer.create(WORKER_METADATA, meta["namespace"], desired)
            elif live.get("spec") != desired["spec"] or _owner_uids(live) != _owner_uids(desired):
                self.writer.update(WORKER_METADATA, {**live, "spec": desired["spec"],
                                                     "metadata": {**live["metadata"], **meta}})
        except Retry as err:  # a write raced another: the next start (or sync) tries again
            log.info("worker metadata not written", pod=meta["name"], error=str(err))


def _owner_uids(obj: Json) -> list[str]:
    return [str(r.get("uid")) for r in obj["metadata"].get("ownerReferences") or ()]
