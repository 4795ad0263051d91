"""Counts of the requests the API server answered, for tests and benchmarks.

Each request is counted once by (verb, resource, namespace, user agent, code), with the
Kubernetes verb (get, list, watch, create, update, patch, delete, deletecollection) and the
resource as `plural[.group][/subresource]`. Watch streams also count the events they sent
(bookmarks aside) and their bytes, by resource and user agent: what a client had to decode.
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass

WRITE_VERBS = frozenset({"create", "update", "patch", "delete", "deletecollection"})
#: What Go's strconv.ParseBool reads as true (kubernetes_asyncio sends watch=True).
_GO_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})


@dataclass(frozen=True)
class RequestKey:
    """One counted bucket."""

    verb: str
    resource: str
    namespace: str
    user_agent: str
    code: int


@dataclass
class WatchSent:
    """What the watch streams of one (resource, user agent) sent: events and their bytes."""

    events: int = 0
    bytes: int = 0


class RequestStats:
    """Thread-safe request counters with simple filtered sums."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: Counter[RequestKey] = Counter()
        self._watch_sent: dict[tuple[str, str], WatchSent] = {}

    def record(self, key: RequestKey) -> None:
        with self._lock:
            self._counts[key] += 1

    def record_watch_events(self, resource: str, user_agent: str, events: int,
                            nbytes: int) -> None:
        with self._lock:
            sent = self._watch_sent.setdefault((resource, user_agent), WatchSent())
            sent.events += events
            sent.bytes += nbytes

    def watch_sent(self, user_agent: str | None = None) -> dict[str, WatchSent]:
        """Events and bytes sent by watches, by resource (user_agent matches as a suffix,
        since a client names itself first and its instance last)."""
        with self._lock:
            items = [(k, WatchSent(v.events, v.bytes)) for k, v in self._watch_sent.items()]
        out: dict[str, WatchSent] = {}
        for (resource, agent), sent in items:
            if user_agent is None or agent.endswith(user_agent):
                total = out.setdefault(resource, WatchSent())
                total.events += sent.events
                total.bytes += sent.bytes
        return out

    def reset(self) -> None:
        with self._lock:
            self._counts.clear()
            self._watch_sent.clear()

    def count(self, *, verb: str | None = None, verbs: frozenset[str] | None = None,
              resource: str | None = None, namespace: str | None = None,
              user_agent: str | None = None) -> int:
        """Requests matching every filter given (user_agent matches as a prefix)."""
        with self._lock:
            items = list(self._counts.items())
        total = 0
        for key, n in items:
            if verb is not None and key.verb != verb:
                continue
            if verbs is not None and key.verb not in verbs:
                continue
            if resource is not None and key.resource != resource:
                continue
            if namespace is not None and key.namespace != namespace:
                continue
            if user_agent is not None and not key.user_agent.startswith(user_agent):
                continue
            total += n
        return total

    def writes(self, *, user_agent: str | None = None, resource: str | None = None) -> int:
        return self.count(verbs=WRITE_VERBS, user_agent=user_agent, resource=resource)

    def snapshot(self) -> list[dict[str, object]]:
        with self._lock:
            items = list(self._counts.items())
        return [{"verb": k.verb, "resource": k.resource, "namespace": k.namespace,
                 "userAgent": k.user_agent, "code": k.code, "count": n} for k, n in items]


def classify(method: str, path: str, query: dict[str, str]) -> tuple[str, str, str]:
    """(verb, resource, namespace) of a request path, the way audit logs name them."""
    parts = [p for p in path.split("/") if p]
    if parts[:1] == ["api"] and len(parts) >= 2:
        group, rest = "", parts[2:]
    elif parts[:1] == ["apis"] and len(parts) >= 3:
        group, rest = parts[1], parts[3:]
    else:
        return ("get" if method == "GET" else method.lower(), "/" + "/".join(parts), "")
    watch_prefix = rest[:1] == ["watch"]
    if watch_prefix:
        rest = rest[1:]
    namespace = ""
    if len(rest) >= 3 and rest[0] == "namespaces":
        namespace, rest = rest[1], rest[2:]
    elif len(rest) in (2, 3) and rest[0] == "namespaces":
        namespace = rest[1]
    if not rest:
        return ("get", "/" + "/".join(parts), "")
    plural = rest[0]
    name = rest[1] if len(rest) > 1 else ""
    sub = rest[2] if len(rest) > 2 else ""
    resource = plural + (f".{group}" if group else "") + (f"/{sub}" if sub else "")
    if method == "GET":
        if watch_prefix or query.get("watch") in _GO_TRUE:
            verb = "watch"
        else:
            verb = "get" if name else "list"
    elif method == "POST":
        verb = "create"
    elif method == "PUT":
        verb = "update"
    elif method == "PATCH":
        verb = "patch"
    elif method == "DELETE":
        verb = "delete" if name else "deletecollection"
    else:
        verb = method.lower()
    return verb, resource, namespace
