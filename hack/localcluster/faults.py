"""Fault injection: the failures a client of a real API server must survive, on demand.

Tests reach it in-process as `cluster.faults`; e2e runs through the token-authenticated
control endpoint `/localcluster/faults` of the same server (GET lists rules, DELETE clears
them, POST `{"action": ...}` injects; see `Faults.handle`). Faults:

- request rules, on a fraction of requests or those matching verbs / resources / namespace:
  answer with 500, 503 or 429 (with Retry-After), hang until the client gives up, or add
  latency; a rule may retire after a number of hits;
- close every open watch stream; compact history so resumed watches get 410 Gone;
- stop the API server and serve again (same port, same state);
- make a simulated node NotReady; kill pods (deleted at once, as on a lost node).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from aiohttp import web

from .errors import ApiError
from .operations import WriteOptions
from .selectors import LabelSelector

if TYPE_CHECKING:
    from .server import LocalCluster

Json = dict[str, Any]

CONTROL_PATH = "/localcluster/faults"
_EXEMPT = ("/healthz", "/livez", "/readyz")
_KILL = WriteOptions(manager="localcluster-faults")


@dataclass
class FaultRule:
    """One request fault: what to do, to which requests, how often."""

    kind: str  # "error", "timeout" or "latency"
    code: int = 500
    fraction: float = 1.0
    verbs: frozenset[str] = frozenset()
    resources: frozenset[str] = frozenset()
    namespace: str | None = None
    latency: float = 0.0
    retry_after: int = 1
    #: Fire this many more times, then retire (None: until removed).
    remaining: int | None = None
    id: int = 0
    hits: int = field(default=0, compare=False)

    def matches(self, verb: str, resource: str, namespace: str) -> bool:
        if self.verbs and verb not in self.verbs:
            return False
        if self.namespace is not None and namespace != self.namespace:
            return False
        if self.resources:
            base = resource.split("/", 1)[0]
            names = {resource, base, base.split(".", 1)[0]}
            if not names & self.resources:
                return False
        return True

    def to_json(self) -> Json:
        return {"id": self.id, "kind": self.kind, "code": self.code, "fraction": self.fraction,
                "verbs": sorted(self.verbs), "resources": sorted(self.resources),
                "namespace": self.namespace, "latency": self.latency,
                "retryAfter": self.retry_after, "remaining": self.remaining, "hits": self.hits}


def _error(rule: FaultRule) -> ApiError:
    if rule.code == 429:
        return ApiError(429, "TooManyRequests", "Too many requests, please try again later.",
                        {"retryAfterSeconds": rule.retry_after},
                        {"Retry-After": str(rule.retry_after)})
    if rule.code == 503:
        return ApiError(503, "ServiceUnavailable",
                        "the server is currently unable to handle the request",
                        {"retryAfterSeconds": rule.retry_after},
                        {"Retry-After": str(rule.retry_after)})
    if rule.code == 504:
        return ApiError(504, "Timeout", "the server was unable to return a response in the time"
                        " allotted, but may still be processing the request")
    return ApiError(rule.code, "InternalError",
                    "Internal error occurred: fault injected by localcluster")


class Faults:
    """The fault switches of one `LocalCluster`."""

    def __init__(self, cluster: LocalCluster, seed: int | None = None,
                 max_hang: float = 120.0) -> None:
        self.cluster = cluster
        self.rules: list[FaultRule] = []
        self.max_hang = max_hang
        self._rng = random.Random(seed)
        self._ids = itertools.count(1)
        self._tasks: set[asyncio.Task[None]] = set()

    # --- request rules -------------------------------------------------------------------

    def add(self, rule: FaultRule) -> FaultRule:
        rule.id = next(self._ids)
        self.rules.append(rule)
        return rule

    def error(self, code: int = 500, *, fraction: float = 1.0, verbs: tuple[str, ...] = (),
              resources: tuple[str, ...] = (), namespace: str | None = None,
              retry_after: int = 1, times: int | None = None) -> FaultRule:
        """Answer matching requests with `code` (500, 503, 429 with Retry-After, 504)."""
        return self.add(FaultRule("error", code=code, fraction=fraction,
                                  verbs=frozenset(verbs), resources=frozenset(resources),
                                  namespace=namespace, retry_after=retry_after,
                                  remaining=times))

    def timeout(self, *, fraction: float = 1.0, verbs: tuple[str, ...] = (),
                resources: tuple[str, ...] = (), namespace: str | None = None,
                times: int | None = None) -> FaultRule:
        """Hang matching requests until the client gives up (or `max_hang` passes)."""
        return self.add(FaultRule("timeout", fraction=fraction, verbs=frozenset(verbs),
                                  resources=frozenset(resources), namespace=namespace,
                                  remaining=times))

    def latency(self, seconds: float, *, fraction: float = 1.0, verbs: tuple[str, ...] = (),
                resources: tuple[str, ...] = (), namespace: str | None = None,
                times: int | None = None) -> FaultRule:
        """Delay matching requests by `seconds`."""
        return self.add(FaultRule("latency", latency=seconds, fraction=fraction,
                                  verbs=frozenset(verbs), resources=frozenset(resources),
                                  namespace=namespace, remaining=times))

    def remove(self, rule: FaultRule) -> None:
        with contextlib.suppress(ValueError):
            self.rules.remove(rule)

    def clear(self) -> None:
        self.rules.clear()

    async def intercept(self, request: web.Request, verb: str, resource: str,
                        namespace: str) -> None:
        """The middleware hook: apply the first matching rule that fires, if any."""
        if not self.rules or request.path in _EXEMPT or request.path.startswith(
                "/localcluster/"):
            return
        for rule in list(self.rules):
            if not rule.matches(verb, resource, namespace):
                continue
            if rule.fraction < 1.0 and self._rng.random() >= rule.fraction:
                continue
            rule.hits += 1
            if rule.remaining is not None:
                rule.remaining -= 1
                if rule.remaining <= 0:
                    self.remove(rule)
            if rule.kind == "latency":
                await asyncio.sleep(rule.latency)
                continue
            if rule.kind == "timeout":
                await self._hang(request)
                raise _error(FaultRule("error", code=504))
            raise _error(rule)

    async def _hang(self, request: web.Request) -> None:
        """Wait until the client disconnects (aiohttp does not cancel handlers for us)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.max_hang
        while loop.time() < deadline:
            transport = request.transport
            if transport is None or transport.is_closing():
                return
            await asyncio.sleep(0.02)

    # --- one-shot faults -----------------------------------------------------------------

    def close_watches(self) -> int:
        """End every open watch stream (clients see the stream end and must re-watch)."""
        return self.cluster.storage.close_all_watches()

    def compact(self) -> int:
        """Forget history: a watch resuming from an older resourceVersion gets 410 Gone."""
        self.cluster.storage.compact()
        return self.cluster.storage.rv

    async def restart_server(self, down_for: float = 0.0) -> None:
        """Stop serving (connections drop, watches end), wait, then serve again; state stays."""
        await self.cluster.restart_http(down_for)

    def set_node_ready(self, name: str, ready: bool) -> None:
        simulation = self.cluster.simulation
        if simulation is None:
            raise RuntimeError("node faults need the simulation (it is off)")
        simulation.set_node_ready(name, ready)

    def kill_pods(self, namespace: str, selector: str = "", name: str = "") -> list[str]:
        """Delete pods at once (grace period 0), as when their node is lost for good."""
        rt = self.cluster.registry.get("", "v1", "pods")
        assert rt is not None
        wanted = LabelSelector.parse(selector)
        killed = []
        for pod in self.cluster.storage.list_objects(("", "pods"), namespace):
            meta = pod["metadata"]
            if (name and meta["name"] != name) or not wanted.matches(meta.get("labels")):
                continue
            with contextlib.suppress(ApiError):
                self.cluster.ops.delete(rt, namespace, meta["name"], {
                    "gracePeriodSeconds": 0, "preconditions": {"uid": meta["uid"]}})
                killed.append(meta["name"])
        return killed

    # --- control endpoint ----------------------------------------------------------------

    async def handle(self, request: web.Request) -> web.StreamResponse:
        """GET: the rules; DELETE: clear them; POST {"action": ...}: inject a fault."""
        if request.method == "GET":
            return web.json_response({"rules": [r.to_json() for r in self.rules]})
        if request.method == "DELETE":
            self.clear()
            return web.json_response({"rules": []})
        if request.method != "POST":
            raise ApiError(405, "MethodNotAllowed", "use GET, POST or DELETE")
        try:
            body = await request.json()
        except json.JSONDecodeError:
            raise ApiError(400, "BadRequest", "the body must be a JSON object") from None
        if not isinstance(body, dict):
            raise ApiError(400, "BadRequest", "the body must be a JSON object")
        return web.json_response(self._act(body))

    def _act(self, body: Json) -> Json:
        action = body.get("action")
        if action in ("error", "timeout", "latency"):
            times = body.get("times")
            rule = FaultRule(
                str(action), code=int(body.get("code", 500)),
                fraction=float(body.get("fraction", 1.0)),
                verbs=frozenset(body.get("verbs") or ()),
                resources=frozenset(body.get("resources") or ()),
                namespace=body.get("namespace"), latency=float(body.get("seconds", 0.1)),
                retry_after=int(body.get("retryAfter", 1)),
                remaining=int(times) if times is not None else None)
            return self.add(rule).to_json()
        if action == "close-watches":
            return {"closed": self.close_watches()}
        if action == "compact":
            return {"compactedAt": self.compact()}
        if action == "restart":
            down_for = float(body.get("downFor", 0.0))
            self._own(lambda: self.restart_server(down_for))
            return {"restarting": True}
        if action in ("node-not-ready", "node-ready"):
            self.set_node_ready(str(body.get("node", "")), action == "node-ready")
            return {"node": body.get("node"), "ready": action == "node-ready"}
        if action == "kill-pods":
            return {"killed": self.kill_pods(str(body.get("namespace", "default")),
                                             str(body.get("selector", "")),
                                             str(body.get("name", "")))}
        if action == "clear":
            self.clear()
            return {"rules": []}
        raise ApiError(400, "BadRequest", f"unknown fault action {action!r}")

    def _own(self, start: Callable[[], Awaitable[None]]) -> None:
        """Run `start()` after the response goes out, as a task this object owns."""
        async def later() -> None:
            await asyncio.sleep(0.05)
            await start()

        task = asyncio.get_running_loop().create_task(later(), name="localcluster-fault")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def stop(self) -> None:
        """Cancel faults still in flight (a restart requested over HTTP)."""
        self.clear()
        for task in list(self._tasks):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks.clear()
