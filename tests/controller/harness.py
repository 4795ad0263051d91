"""Helpers for the controller runtime tests: fast settings, a CRD, a TCP proxy for faults."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from controller.client import ClientConfig, KubeClient
from controller.informer import WatchSettings
from controller.manager import Manager, ManagerConfig
from controller.metrics import Metrics
from controller.resource import Resource
from hack.localcluster.testing import eventually as shared_eventually

CRDS = Resource("apiextensions.k8s.io", "v1", "customresourcedefinitions",
                "CustomResourceDefinition", namespaced=False)
WIDGETS = Resource("test.example.com", "v1", "widgets", "Widget")

FAST_WATCH = WatchSettings(bookmark_interval=0.5, min_watch_timeout=30.0,
                           backoff_initial=0.05, backoff_max=0.5)
SETUP_AGENT = "test-setup"
#: What the runtime calls itself when the application does not say.
OPERATOR_AGENT = ClientConfig().user_agent


def schemaless_crd(singular: str, kind: str, *, status_subresource: bool = False) -> dict[str, Any]:
    """A schemaless kind of test.example.com/v1 (plural: singular + "s")."""
    version: dict[str, Any] = {"name": "v1", "served": True, "storage": True,
                               "schema": {"openAPIV3Schema": {
                                   "type": "object",
                                   "x-kubernetes-preserve-unknown-fields": True}}}
    if status_subresource:
        version["subresources"] = {"status": {}}
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{singular}s.test.example.com"},
        "spec": {"group": "test.example.com", "scope": "Namespaced",
                 "names": {"plural": f"{singular}s", "singular": singular, "kind": kind,
                           "listKind": f"{kind}List"},
                 "versions": [version]}}


def widget_crd() -> dict[str, Any]:
    return schemaless_crd("widget", "Widget")


def widget(name: str, namespace: str = "default", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "test.example.com/v1", "kind": "Widget",
            "metadata": {"name": name, "namespace": namespace}, "spec": spec}


async def setup_client(kubeconfig: Path) -> KubeClient:
    return await KubeClient.connect(kubeconfig, ClientConfig(qps=None, user_agent=SETUP_AGENT),
                                    Metrics())


async def manager(kubeconfig: Path, **overrides: Any) -> Manager:
    config = ManagerConfig(kubeconfig=kubeconfig, client=ClientConfig(qps=None),
                           watch=FAST_WATCH, status_host="127.0.0.1", status_port=0,
                           graceful_shutdown_timeout=2.0, cache_sync_timeout=10.0)
    for key, value in overrides.items():
        setattr(config, key, value)
    return await Manager.create(config)


@contextlib.asynccontextmanager
async def running(mgr: Manager) -> AsyncIterator[asyncio.Task[None]]:
    """Run a manager for the body of the block, then stop it cleanly."""
    task = asyncio.create_task(mgr.run())
    try:
        yield task
    finally:
        mgr.stop()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(task, 10)


eventually = shared_eventually

class TcpProxy:
    """A loopback TCP relay in front of the API server, for network faults in tests.

    `pause()` holds client-to-server bytes (requests hang), `resume()` lets them through,
    `drop()` cuts every connection mid-stream.
    """

    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.port = 0
        self._server: asyncio.Server | None = None
        self._flowing = asyncio.Event()
        self._flowing.set()
        self._writers: set[asyncio.StreamWriter] = set()
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        self.drop()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def pause(self) -> None:
        self._flowing.clear()

    def resume(self) -> None:
        self._flowing.set()

    def drop(self) -> None:
        for writer in list(self._writers):
            writer.transport.abort()
        self._writers.clear()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        except OSError:
            writer.transport.abort()
            return
        self._writers.update((writer, up_writer))
        for src, dst, gated in ((reader, up_writer, True), (up_reader, writer, False)):
            task = asyncio.create_task(self._pipe(src, dst, gated))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _pipe(self, src: asyncio.StreamReader, dst: asyncio.StreamWriter,
                    gated: bool) -> None:
        try:
            while data := await src.read(65536):
                if gated:
                    await self._flowing.wait()
                dst.write(data)
                await dst.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            dst.transport.abort()
            self._writers.discard(dst)


def proxied_kubeconfig(cluster: Any, proxy: TcpProxy, path: Path) -> Path:
    """A kubeconfig for the cluster that goes through the proxy."""
    import yaml

    config = cluster.kubeconfig()
    server = config["clusters"][0]["cluster"]["server"]
    config["clusters"][0]["cluster"]["server"] = server.rsplit(":", 1)[0] + f":{proxy.port}"
    path.write_text(yaml.safe_dump(config))
    return path
