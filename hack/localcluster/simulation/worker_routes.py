"""What one simulated Dynamo worker or frontend answers, and what it remembers: adapters, calls.

A worker's routes follow Dynamo's system server and worker handlers: `GET /health` and
`GET /live`; `POST /engine/v1/load_lora` `{"lora_name": …, "source": {"uri": …}}` and
`POST /engine/v1/unload_lora` `{"lora_name": …}`, answered
`{"status": "success", "message": "LoRA adapter '<name>' loaded successfully", …}`, or
`{"status": "error", "message": …}` with a 4xx status. A fault (`worker_faults`) comes first.

A frontend answers `GET /health` and `GET /live` on its http port, and the simulation's own
`GET /localcluster/serving-pairs`: the worker generations it can route to and their complete
prefill+decode pairs (`generations.frontend_view`), for tests and e2e runs to sample through
port-forward or the pod's address.
"""

from __future__ import annotations

import asyncio
import json
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from .worker_faults import HANG, LOAD_PATH, UNLOAD_PATH, Faults

Json = dict[str, Any]

WORKER, FRONTEND = "worker", "frontend"
#: The frontend's route answering `generations.frontend_view`.
SERVING_PAIRS_PATH = "/localcluster/serving-pairs"


@dataclass(frozen=True)
class Call:
    """One request a worker received, and the status it answered (None: it never did)."""

    method: str
    path: str
    body: Json | None
    status: int | None


@dataclass
class WorkerEndpoint:
    """One worker pod's server and engine state."""

    namespace: str
    name: str
    uid: str
    labels: dict[str, str]
    ip: str
    port: int
    restarts: int
    loras: dict[str, str] = field(default_factory=dict)
    calls: list[Call] = field(default_factory=list)
    task: asyncio.Task[None] | None = None
    #: WORKER (system port) or FRONTEND (http port).
    kind: str = WORKER
    #: Writes a line to the worker container's log.
    log: Callable[[str], None] = field(default=lambda line: None)


def worker_app(endpoint: WorkerEndpoint, faults: Faults) -> web.Application:
    """The routes of one worker."""
    app = web.Application()
    handler = _Handler(endpoint, faults)
    app.router.add_get("/health", handler.health)
    app.router.add_get("/live", handler.live)
    app.router.add_post(LOAD_PATH, handler.load)
    app.router.add_post(UNLOAD_PATH, handler.unload)
    return app


def frontend_app(endpoint: WorkerEndpoint, view: Callable[[], Json | None]) -> web.Application:
    """The routes of one frontend; `view` is what it sees of the worker generations."""
    app = web.Application()

    def record(request: web.Request, status: int) -> None:
        endpoint.calls.append(Call(request.method, request.path, None, status))

    async def health(request: web.Request) -> web.Response:
        record(request, 200)
        return web.json_response({"status": "healthy"})

    async def live(request: web.Request) -> web.Response:
        record(request, 200)
        return web.json_response({"status": "live"})

    async def serving_pairs(request: web.Request) -> web.Response:
        answer = view()
        status = 200 if answer is not None else 503
        record(request, status)
        return web.json_response(answer if answer is not None else {
            "status": "error", "message": "the frontend cannot see the cluster's pods"},
            status=status)

    app.router.add_get("/health", health)
    app.router.add_get("/live", live)
    app.router.add_get(SERVING_PAIRS_PATH, serving_pairs)
    return app


class _Handler:
    """The routes of one worker."""

    def __init__(self, endpoint: WorkerEndpoint, faults: Faults) -> None:
        self.endpoint = endpoint
        self.faults = faults

    async def health(self, request: web.Request) -> web.Response:
        self._record(request, None, 200)
        return web.json_response({"status": "healthy", "endpoints": ["generate"]})

    async def live(self, request: web.Request) -> web.Response:
        self._record(request, None, 200)
        return web.json_response({"status": "live"})

    async def load(self, request: web.Request) -> web.Response:
        body = await _json(request)
        early = await self._fault(request, body)
        if early is not None:
            return early
        name = body.get("lora_name") if body else None
        uri = ((body or {}).get("source") or {}).get("uri")
        if not name or not uri:
            return self._answer(request, body, 400, {
                "status": "error", "message": "'lora_name' and 'source.uri' are required"})
        done = "already loaded" if name in self.endpoint.loras else "loaded successfully"
        self.endpoint.loras[name] = str(uri)
        self.endpoint.log(f"INFO dynamo_llm::lora: LoRA adapter '{name}' {done} from {uri}")
        return self._answer(request, body, 200, {
            "status": "success", "message": f"LoRA adapter '{name}' {done}",
            "lora_name": name, "lora_id": _lora_id(name)})

    async def unload(self, request: web.Request) -> web.Response:
        body = await _json(request)
        early = await self._fault(request, body)
        if early is not None:
            return early
        name = body.get("lora_name") if body else None
        if not name:
            return self._answer(request, body, 400, {
                "status": "error", "message": "'lora_name' is required in request"})
        if name not in self.endpoint.loras:
            return self._answer(request, body, 404, {
                "status": "error",
                "message": f"LoRA adapter '{name}' not found. Available LoRAs: "
                           f"{sorted(self.endpoint.loras)}"})
        del self.endpoint.loras[name]
        self.endpoint.log(f"INFO dynamo_llm::lora: LoRA adapter '{name}' unloaded")
        return self._answer(request, body, 200, {
            "status": "success", "message": f"LoRA adapter '{name}' unloaded successfully",
            "lora_name": name, "lora_id": _lora_id(name)})

    async def _fault(self, request: web.Request, body: Json | None) -> web.Response | None:
        e = self.endpoint
        fault = self.faults.for_call(e.namespace, e.name, e.labels, request.path)
        if fault is None:
            return None
        if fault.kind == HANG:
            self._record(request, body, None)
            await asyncio.Event().wait()
        self._record(request, body, fault.status)
        return web.Response(status=fault.status, text=fault.body,
                            content_type="application/json")

    def _answer(self, request: web.Request, body: Json | None, status: int,
                answer: Json) -> web.Response:
        self._record(request, body, status)
        return web.json_response(answer, status=status)

    def _record(self, request: web.Request, body: Json | None, status: int | None) -> None:
        self.endpoint.calls.append(Call(request.method, request.path, body, status))


async def _json(request: web.Request) -> Json | None:
    try:
        body = json.loads(await request.text() or "null")
    except ValueError:
        return None
    return body if isinstance(body, dict) else None


def _lora_id(name: str) -> int:
    # Dynamo derives a stable positive id from the name; any stable hash will do here.
    return zlib.crc32(name.encode()) & 0x7FFFFFFF
