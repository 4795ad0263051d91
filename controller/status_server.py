"""The manager's HTTP servers: /healthz (alive), /readyz (caches synced), /metrics.

One server serves all three paths unless the manager is given a separate metrics address, as
controller-runtime's health-probe and metrics listeners are separate; then each server serves
only its own paths. /metrics may be served over TLS and behind a guard that refuses callers
(`controller.metrics_auth`); the probes stay open, as the kubelet calls them without a token.
"""

from __future__ import annotations

import ssl
from collections.abc import Awaitable, Callable, Collection

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

ALL_PATHS = ("healthz", "readyz", "metrics")
PROBE_PATHS = ("healthz", "readyz")
METRICS_PATHS = ("metrics",)
#: Looks at a /metrics request: None lets it through, a response refuses it.
Guard = Callable[[web.Request], Awaitable[web.Response | None]]


class StatusServer:
    """Serves probes and/or Prometheus metrics; `ready` decides what /readyz says."""

    def __init__(self, registry: CollectorRegistry, ready: Callable[[], bool],
                 host: str = "0.0.0.0", port: int = 8081,
                 paths: Collection[str] = ALL_PATHS, *, guard: Guard | None = None,
                 ssl_context: ssl.SSLContext | None = None) -> None:
        self.registry = registry
        self.guard = guard
        self.ssl_context = ssl_context
        self.ready = ready
        self.host = host
        self.port = port
        self.paths = tuple(paths)
        self._runner: web.AppRunner | None = None

    async def start(self) -> None:
        """Serve; a second call while serving does nothing."""
        if self._runner is not None:
            return
        app = web.Application()
        handlers = {"healthz": self._healthz, "readyz": self._readyz, "metrics": self._metrics}
        for path in self.paths:
            app.router.add_get(f"/{path}", handlers[path])
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False,
                                     shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port, reuse_address=True,
                           ssl_context=self.ssl_context)
        await site.start()
        if self.port == 0:
            self.port = self._runner.addresses[0][1]

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def _healthz(self, request: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def _readyz(self, request: web.Request) -> web.Response:
        if self.ready():
            return web.Response(text="ok")
        return web.Response(status=500, text="caches not synced")

    async def _metrics(self, request: web.Request) -> web.Response:
        if self.guard is not None:
            refused = await self.guard(request)
            if refused is not None:
                return refused
        body = generate_latest(self.registry)
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})
