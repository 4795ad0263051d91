"""The revision history of a graph's workers: ControllerRevisions owned by the graph, as
Deployments and StatefulSets keep theirs.

Each worker configuration the graph has run (each worker generation, `worker_hash`) is one
ControllerRevision `<graph>-<hash>` (apps/v1), labelled with the graph's name and the hash;
`data` holds what undo writes back: the worker components the hash covers
(`hashed_workers`: the rolled ones, or every worker for a graph `PROVIDER_GENERATION` covers)
as the graph states them (`v1beta1`, without their replicas and scaling adapter, which a
rollback leaves as they are),
the graph's `env` and backend framework, and, for a graph that says something only `v1alpha1`
can, the same workers as `v1alpha1` services. `revision` numbers them in the order they were
used; a configuration used again gets the next number, as a StatefulSet's does, and the number
is mirrored in the annotation `nvidia.com/revision` (the writer updates a child whose metadata
drifted; a ControllerRevision has no spec to hash). The graph's `kubernetes.io/change-cause` is
copied onto its current revision. On the Grove path, where Grove replaces the pods and there
are no worker DCDs, a revision covers every worker component (`graph_workers`) and is named by
their hash; for single-node workers that is the same hash as the DCD path's.

At most `nvidia.com/revision-history-limit` (default 10) revisions are kept; the oldest go
first, never the current one nor one whose generation still runs. `worker_revisions` is pure:
it takes the revisions that exist (read from the cluster by the caller) and returns every one
to keep, so the child writer prunes only those beyond the limit.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from api.conversion import HUB, SPOKE, convert
from api.conversion.payloads import carries_spec_payload
from api.convert import dump
from backends import constants
from backends.errors import GenerationError
from backends.hub_graph import HubGraph
from backends.worker_generation import hashed_workers, worker_hash

Json = dict[str, Any]

__all__ = ["API_VERSION", "CHANGE_CAUSE", "DEFAULT_HISTORY_LIMIT", "HISTORY_LIMIT", "KIND",
           "REVISION_ANNOTATION", "SPOKE_SCALING", "history_limit", "revision_data",
           "revision_name", "worker_revisions"]

API_VERSION, KIND = "apps/v1", "ControllerRevision"
HISTORY_LIMIT = "nvidia.com/revision-history-limit"
REVISION_ANNOTATION = "nvidia.com/revision"
CHANGE_CAUSE = "kubernetes.io/change-cause"
DEFAULT_HISTORY_LIMIT = 10
#: Left out of a stored component: a rollback changes configuration, not scale.
_SCALING = ("replicas", "scalingAdapter")
#: The same for a stored `v1alpha1` service.
SPOKE_SCALING = ("replicas", "scalingAdapter", "autoscaling")


def revision_name(graph: str, generation: str) -> str:
    """`<graph>-<hash>`."""
    return f"{graph}-{generation}"


def history_limit(graph: HubGraph) -> int:
    """The revisions to keep (at least 1); GenerationError for a value that is no count."""
    value = (graph.model.metadata.get("annotations") or {}).get(HISTORY_LIMIT)
    if value is None or value == "":
        return DEFAULT_HISTORY_LIMIT
    text = str(value).strip()
    if not text.isdigit():
        raise GenerationError(f'invalid {HISTORY_LIMIT} "{value}": use a whole number')
    return max(int(text), 1)


def revision_data(graph: HubGraph, workers: Sequence[str] | None = None) -> Json:
    """What a revision stores of the graph: its hashed workers (or `workers`) as stated, its
    env and backend framework (what the worker hash covers, in `v1beta1` terms)."""
    components = dict(graph.components())
    stored = []
    for name in hashed_workers(graph) if workers is None else workers:
        component = dump(components[name])
        for key in _SCALING:
            component.pop(key, None)
        stored.append(component)
    spec = graph.model.spec
    data: Json = {"components": stored}
    if spec.env:
        data["env"] = dump(spec)["env"]
    if spec.backend_framework:
        data["backendFramework"] = spec.backend_framework
    services = _spoke_services(graph, [c["name"] for c in stored])
    if services:
        data["services"] = services
    return data


def _spoke_services(graph: HubGraph, names: Sequence[str]) -> Json:
    """The workers as `v1alpha1` states them (its view of the stored graph, without their
    scaling), when the graph says something only `v1alpha1` can (its spec payload): undo
    writes these back through `v1alpha1` first, since the `v1beta1` components alone would
    drop what the payload held (`reconcilers.operator.rollout_undo`)."""
    stored = {**dump(graph.model), "apiVersion": HUB, "kind": "DynamoGraphDeployment"}
    if not carries_spec_payload(stored):
        return {}
    try:
        view = convert(stored, SPOKE)
    except ValueError:
        return {}
    services = (view.get("spec") or {}).get("services") or {}
    out: Json = {}
    for name in names:
        service = dict(services.get(name) or {})
        for key in SPOKE_SCALING:
            service.pop(key, None)
        out[name] = service
    return out


def worker_revisions(graph: HubGraph, existing: Sequence[Json],
                     running: Collection[str] = (),
                     workers: Sequence[str] | None = None) -> list[Json]:
    """Every ControllerRevision the graph should keep: the current configuration's (created,
    or renumbered when used again) and the newest others within the history limit.
    `existing`: the live revisions the graph owns; `running`: generations whose DCDs still
    run (never pruned); `workers`: the components a revision covers when not the hashed
    ones (on the Grove path, every worker: `graph_workers`). None when there are none."""
    names = hashed_workers(graph) if workers is None else list(workers)
    if not names:
        return []
    generation = worker_hash(graph, None if workers is None else names)
    current = revision_name(graph.name, generation)
    live = {str(r["metadata"]["name"]): r for r in existing
            if not r["metadata"].get("deletionTimestamp")}
    top = max((_number(r) for r in live.values()), default=0)
    mine = live.get(current)
    number = _number(mine) if mine is not None and _number(mine) == top else top + 1
    cause = (graph.model.metadata.get("annotations") or {}).get(CHANGE_CAUSE)
    data = (mine["data"] if mine is not None and "data" in mine
            else revision_data(graph, None if workers is None else names))
    kept = [_revision(graph, generation, number, data, cause)]
    others = sorted((r for n, r in live.items() if n != current), key=_number, reverse=True)
    room = history_limit(graph) - 1
    for old in others:
        generation = str((old["metadata"].get("labels") or {}).get(constants.LABEL_WORKER_HASH)
                         or "")
        if room > 0 or generation in running:
            kept.append(_kept(graph, old))
            room -= 1
    return kept


def _revision(graph: HubGraph, generation: str, number: int, data: Json,
              cause: str | None) -> Json:
    annotations = {REVISION_ANNOTATION: str(number)}
    if cause:
        annotations[CHANGE_CAUSE] = cause
    return {
        "apiVersion": API_VERSION, "kind": KIND,
        "metadata": {"name": revision_name(graph.name, generation),
                     "namespace": graph.namespace,
                     "labels": {constants.LABEL_GRAPH_NAME: graph.name,
                                constants.LABEL_WORKER_HASH: generation},
                     "annotations": annotations},
        "data": data, "revision": number,
    }


def _kept(graph: HubGraph, live: Json) -> Json:
    """An older revision as it is."""
    meta = live["metadata"]
    generation = str((meta.get("labels") or {}).get(constants.LABEL_WORKER_HASH) or "")
    cause = (meta.get("annotations") or {}).get(CHANGE_CAUSE)
    kept = _revision(graph, generation, _number(live), live.get("data") or {}, cause)
    kept["metadata"]["name"] = meta["name"]
    return kept


def _number(revision: Json) -> int:
    value = revision.get("revision")
    return int(value) if isinstance(value, int) else 0
