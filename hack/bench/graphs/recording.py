"""The operator's requests as the local API server received them, and the floor's plan made
from them (`hack.bench.graphs.floor` replays it).

`Recorder` wraps the in-process local cluster's request middleware, and the function its API
handler reads request bodies with, from outside (nothing in `hack/localcluster` changes):
every request whose user agent ends in the run's pod name is kept, as it arrives, with its
method, path, query and, once answered, its body (the bytes the operator sent, as the server
read them) and answer code. It records from the operator's start until the benchmark reads
the operator's CPU (all graphs Ready), so the plan holds what the operator did for that CPU.

`plan` turns the record into what a client with no reconcile logic, cache or validation must
send for the same graphs:

- the same list and watch requests (path, label and field selectors, page size, timeout and
  bookmarks as the operator asked for them);
- each graph's successful writes (2xx) in the operator's order, bodies as the operator sent
  them; a final status (a DCD `Available`, a DGD `successful`) waits until the Deployments
  it reports on (the DCD's own, all of the graph's so far) are available, as the operator
  could not have written it earlier, and the graph's writes after it wait with it;
- every uid in a body (owner references, an Event's involvedObject) replaced by a reference
  to the object's kind and name, resolved against the new cluster when sent;
- a status patch's `metadata.resourceVersion` precondition left out (the floor never writes
  from a stale copy, and it keeps no copies to read a version from);
- the requests of no graph (discovery, the leader-election lease) at the times the operator
  sent them, relative to its first request.

Failed writes (a 409 the operator retried, a 404) are not planned: they are the operator's
overhead, not work the end state needs.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from hack.localcluster import http_api
from hack.localcluster.request_stats import WRITE_VERBS, classify
from hack.localcluster.server import LocalCluster

Json = dict[str, Any]
#: The resources whose writes are the floor's to count against the operator's: child creates,
#: status writes and Events (not the lease, discovery or reads).
EVENTS = frozenset({"events", "events.events.k8s.io"})


#: Where the wrapped body reader leaves a request's body for the recorder.
BODY_KEY = "bench.recorded_body"


def _keep_bodies() -> None:
    """Wrap the API handler's body reader (once) so that the body it read stays on the
    request: the handler reads the stream itself, so it cannot be read again afterwards."""
    read = http_api._raw_body
    if getattr(read, "keeps_body", False):
        return

    async def raw_body(request: web.Request) -> bytes:
        raw = await read(request)
        request[BODY_KEY] = raw
        return raw

    raw_body.keeps_body = True  # type: ignore[attr-defined]
    http_api._raw_body = raw_body


@dataclass
class Recorded:
    at: float
    verb: str
    resource: str
    method: str
    path: str
    query: list[tuple[str, str]]
    content_type: str
    body: bytes | None
    code: int


class Recorder:
    """Keeps the requests of one user agent (matched as a suffix) that a LocalCluster serves.
    Install before `cluster.start()`, which builds the server's middleware chain."""

    def __init__(self, cluster: LocalCluster, agent_suffix: str) -> None:
        self.agent_suffix = agent_suffix
        self.records: list[Recorded] = []
        self.recording = True
        original = cluster._middleware
        _keep_bodies()

        @web.middleware
        async def recording(request: web.Request, handler: Any) -> web.StreamResponse:
            if not self.recording or not request.headers.get("User-Agent", "").endswith(
                    self.agent_suffix):
                return await original(request, handler)
            # Kept as it arrives: a watch is answered only when it ends.
            verb, resource, _ = classify(request.method, request.path, dict(request.query))
            record = Recorded(time.monotonic(), verb, resource, request.method, request.path,
                              list(request.query.items()), request.content_type, None, 0)
            self.records.append(record)
            response = await original(request, handler)
            record.code, record.body = response.status, request.get(BODY_KEY) or None
            return response

        cluster._middleware = recording  # type: ignore[method-assign]

    def stop(self) -> None:
        self.recording = False


def _walk_uids(value: Any, uids: dict[str, tuple[str, str]], path: list[Any],
               found: list[list[Any]]) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            _walk_uids(item, uids, [*path, key], found)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _walk_uids(item, uids, [*path, index], found)
    elif isinstance(value, str) and value in uids:
        found.append([path, *uids[value]])


def _name_in_path(path: str) -> str:
    """The object's name in an object path (.../plural/NAME[/subresource])."""
    parts = path.strip("/").split("/")
    if parts and parts[-1] in ("status", "scale"):
        parts = parts[:-1]
    return parts[-1]


def _is_final(resource: str, body: Json) -> bool:
    status = body.get("status") or {}
    if resource.startswith("dynamographdeployments."):
        return status.get("state") == "successful"
    return any(c.get("type") == "Available" and c.get("status") == "True"
               for c in status.get("conditions") or [])


def _graph_of(verb: str, resource: str, path: str, body: Json | None,
              owners: dict[str, str]) -> str | None:
    """The graph a write belongs to: by the object's owners, an Event's involved object, or
    the written object's name."""
    if body is not None:
        involved = body.get("involvedObject") or body.get("regarding")
        if isinstance(involved, dict):
            return owners.get(str(involved.get("name")))
        meta = body.get("metadata") or {}
        for ref in meta.get("ownerReferences") or []:
            graph = owners.get(str(ref.get("name")))
            if graph is not None:
                if verb == "create":
                    owners.setdefault(str(meta.get("name")), graph)
                return graph
    if verb != "create":
        return owners.get(_name_in_path(path))
    return None


def plan(records: list[Recorded], graphs: list[str], uids: dict[str, tuple[str, str]],
         loads: Callable[[bytes], Any]) -> Json:
    """The floor's plan (a JSON object; see the module's docstring) from the operator's
    requests. `uids`: the old cluster's uid -> (kind, name) of every object a body may name."""
    owners = {name: name for name in graphs}
    per_graph: dict[str, Json] = {g: {"steps": [], "deployments": []} for g in graphs}
    #: The Deployments each DCD (by name) owns, from the operator's creates.
    owned: dict[str, list[str]] = {}
    global_requests: list[Json] = []
    watches: dict[tuple[str, str, str], Json] = {}
    counted: Counter[str] = Counter()
    start = records[0].at if records else 0.0
    for rec in records:
        query = dict(rec.query)
        if rec.verb in ("list", "watch"):
            key = (rec.path, query.get("labelSelector", ""), query.get("fieldSelector", ""))
            entry = watches.setdefault(key, {"path": rec.path, "resource": rec.resource,
                                             "labelSelector": key[1], "fieldSelector": key[2],
                                             "limit": "", "watch_query": None,
                                             "lists": 0, "watches": 0})
            if rec.verb == "list":
                entry["lists"] += 1
                entry["limit"] = entry["limit"] or query.get("limit", "")
            else:
                entry["watches"] += 1
                if entry["watch_query"] is None:
                    entry["watch_query"] = [[k, v] for k, v in rec.query
                                            if k != "resourceVersion"]
            continue
        if not 200 <= rec.code < 300:
            continue  # failed, or not answered before the operator's CPU was read
        body = loads(rec.body) if rec.body else None
        graph = _graph_of(rec.verb, rec.resource, rec.path, body, owners) \
            if rec.verb in WRITE_VERBS else None
        found: list[list[Any]] = []
        if body is not None:
            _walk_uids(body, uids, [], found)
            if rec.resource.endswith("/status"):
                (body.get("metadata") or {}).pop("resourceVersion", None)
        request = {"method": rec.method, "path": rec.path, "query": [list(q) for q in rec.query],
                   "content_type": rec.content_type, "body": body, "uids": found,
                   "verb": rec.verb, "resource": rec.resource,
                   # Decoded as the operator does: not an Event's answer, nor a status write's.
                   "decode": rec.resource not in EVENTS and not rec.resource.endswith(
                       "/status")}
        if graph is None or graph not in per_graph:
            request["at"] = round(rec.at - start, 3)
            request["decode"] = True
            global_requests.append(request)
            continue
        counted[f"{rec.verb} {rec.resource}"] += 1
        steps = per_graph[graph]
        request["wait_for"] = []
        if rec.resource.endswith("/status") and body is not None and _is_final(
                rec.resource.split("/")[0], body):
            request["wait_for"] = (list(steps["deployments"])
                                   if rec.resource.startswith("dynamographdeployments.")
                                   else list(owned.get(_name_in_path(rec.path), [])))
        steps["steps"].append(request)
        if rec.verb == "create" and rec.resource == "deployments.apps" and body is not None:
            meta = body["metadata"]
            steps["deployments"].append(meta["name"])
            for ref in meta.get("ownerReferences") or []:
                owned.setdefault(str(ref.get("name")), []).append(meta["name"])
    return {"watches": list(watches.values()), "graphs": per_graph,
            "global": global_requests, "writes": dict(sorted(counted.items()))}
