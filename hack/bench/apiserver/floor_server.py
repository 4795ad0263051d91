"""The benchmark's peer: a bare HTTPS JSON store with no Kubernetes semantics at all.

It answers the same ConfigMap create/list/watch URLs with the least work possible, so the gap
between it and the local API server is the price of our semantics (validation, managedFields,
resourceVersions, history), measured on the same machine in the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import tempfile
from pathlib import Path
from typing import Any

from aiohttp import web

from hack.localcluster import tls


class FloorStore:
    """Objects by name, a counter, and one queue per open watch."""

    def __init__(self) -> None:
        self.objects: dict[str, dict[str, Any]] = {}
        self.rv = 0
        self.watchers: set[asyncio.Queue[bytes]] = set()

    async def create(self, request: web.Request) -> web.Response:
        obj = await request.json()
        self.rv += 1
        obj["metadata"]["resourceVersion"] = str(self.rv)
        self.objects[obj["metadata"]["name"]] = obj
        line = json.dumps({"type": "ADDED", "object": obj}).encode() + b"\n"
        for queue in self.watchers:
            queue.put_nowait(line)
        return web.Response(body=json.dumps(obj).encode(), status=201,
                            content_type="application/json")

    async def list_or_watch(self, request: web.Request) -> web.StreamResponse:
        if request.query.get("watch") != "true":
            body = {"kind": "ConfigMapList", "apiVersion": "v1",
                    "metadata": {"resourceVersion": str(self.rv)},
                    "items": list(self.objects.values())}
            return web.Response(body=json.dumps(body).encode(), content_type="application/json")
        response = web.StreamResponse()
        response.enable_chunked_encoding()
        await response.prepare(request)
        queue: asyncio.Queue[bytes] = asyncio.Queue()
        self.watchers.add(queue)
        try:
            while True:
                await response.write(await queue.get())
        except (ConnectionResetError, asyncio.CancelledError):
            pass
        finally:
            self.watchers.discard(queue)
        return response


async def serve(port: int) -> None:
    store = FloorStore()
    app = web.Application()
    path = "/api/v1/namespaces/{ns}/configmaps"
    app.router.add_post(path, store.create)
    app.router.add_get(path, store.list_or_watch)
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    workdir = Path(tempfile.mkdtemp(prefix="floor-"))
    site = web.TCPSite(runner, "127.0.0.1", port,
                       ssl_context=tls.generate().server_context(workdir))
    await site.start()
    sockets = getattr(site._server, "sockets", None) or []
    print(f"ready https://127.0.0.1:{sockets[0].getsockname()[1]}", flush=True)
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await stop.wait()
    await runner.cleanup()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    asyncio.run(serve(parser.parse_args().port))
