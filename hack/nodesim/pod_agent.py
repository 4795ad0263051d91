"""The pod side of the simulated kubelets: watch the pods bound to our nodes and run them.

One list-and-watch of pods with `spec.nodeName` set (the field selector a kubelet uses,
widened to every node, then filtered to ours) keeps the latest object of each pod (and of
every bound pod, whichever node runs it: what a simulated frontend sees, `pods_in`); each pod
has a task of its own, woken by its changes and by its timers, which moves it on through
`PodLifecycle`. The tasks belong to the agent and are cancelled when it stops.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import aiohttp
import structlog

from controller.client import KubeClient
from controller.errors import ApiError, NotFound

from .pod_lifecycle import PODS, Key, PodLifecycle

Json = dict[str, Any]
log = structlog.get_logger("nodesim.pods")

BOUND = "spec.nodeName!="
#: A watch is closed by the server after this many seconds and opened again.
WATCH_SECONDS = 300
#: Seconds before a failed list, watch or pod step is tried again.
RETRY = 1.0


class PodAgent:
    """Pods on `nodes`: the watch, one task per pod, and their shutdown."""

    def __init__(self, client: KubeClient, nodes: set[str], lifecycle: PodLifecycle) -> None:
        self.client = client
        self.nodes = nodes
        self.lifecycle = lifecycle
        self.pods: dict[Key, Json] = {}
        #: Every bound pod the watch shows, on any node.
        self.bound: dict[Key, Json] = {}
        self._wakes: dict[Key, asyncio.Event] = {}
        self._tasks: dict[Key, asyncio.Task[None]] = {}
        self.synced = asyncio.Event()

    async def run(self) -> None:
        """List and watch until cancelled; the per-pod tasks end with it."""
        try:
            await self._reflect()
        finally:
            tasks = list(self._tasks.values())
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _reflect(self) -> None:
        version = ""
        while True:
            try:
                if not version:
                    version = await self._list()
                version = await self._watch(version)
            except ApiError as err:
                if err.code == 410:
                    version = ""  # too old: list again
                    continue
                log.warning("nodesim pod watch failed", error=str(err))
                version = ""
                await asyncio.sleep(RETRY)
            except (aiohttp.ClientError, OSError, TimeoutError) as err:
                log.warning("nodesim pod watch broke", error=repr(err))
                await asyncio.sleep(RETRY)

    async def _list(self) -> str:
        listing = await self.client.list(PODS, None, field_selector=BOUND)
        seen: set[Key] = set()
        for pod in listing.get("items") or ():
            seen.add(_key(pod))
            self._update(pod)
        for key in set(self.bound) - seen:
            self.bound.pop(key, None)
        for key in set(self.pods) - seen:
            self._gone(key)
        self.synced.set()
        return str(listing["metadata"]["resourceVersion"])

    async def _watch(self, version: str) -> str:
        async with self.client.watch(PODS, None, resource_version=version,
                                     timeout_seconds=WATCH_SECONDS,
                                     read_timeout=WATCH_SECONDS + 30,
                                     field_selector=BOUND) as events:
            async for event in events:
                obj = event.get("object") or {}
                if event.get("type") == "ERROR":
                    if obj.get("code") == 410:
                        return ""
                    raise ApiError(int(obj.get("code") or 500), str(obj.get("reason", "")),
                                   str(obj.get("message", "")))
                version = str((obj.get("metadata") or {}).get("resourceVersion") or version)
                if event.get("type") == "BOOKMARK":
                    continue
                if event.get("type") == "DELETED":
                    self.bound.pop(_key(obj), None)
                    self._gone(_key(obj))
                else:
                    self._update(obj)
        return version

    def pods_in(self, namespace: str) -> list[Json]:
        """The bound pods of a namespace, on any node."""
        return [p for (ns, _), p in self.bound.items() if ns == namespace]

    def _update(self, pod: Json) -> None:
        key = _key(pod)
        self.bound[key] = pod
        if (pod.get("spec") or {}).get("nodeName") not in self.nodes:
            if key in self.pods:
                self._gone(key)
            return
        self.pods[key] = pod
        self._wake(key)

    def _gone(self, key: Key) -> None:
        self.pods.pop(key, None)
        self._wake(key)

    def _wake(self, key: Key) -> None:
        wake = self._wakes.get(key)
        if wake is None:
            if key not in self.pods:
                return
            wake = self._wakes[key] = asyncio.Event()
            self._tasks[key] = asyncio.create_task(self._run_pod(key, wake),
                                                   name=f"nodesim pod {key[0]}/{key[1]}")
        wake.set()

    async def _run_pod(self, key: Key, wake: asyncio.Event) -> None:
        try:
            while True:
                wake.clear()
                pod = self.pods.get(key)
                if pod is None:
                    return
                try:
                    wait = await self.lifecycle.step(key, pod)
                except NotFound:
                    wait = None  # deleted meanwhile: its DELETED event comes next
                except (ApiError, aiohttp.ClientError, OSError, TimeoutError) as err:
                    log.warning("nodesim pod step failed", namespace=key[0], pod=key[1],
                                error=str(err) or repr(err))
                    wait = RETRY
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(wake.wait(), wait)
        finally:
            self.lifecycle.forget(key)
            self._wakes.pop(key, None)
            self._tasks.pop(key, None)


def _key(pod: Json) -> Key:
    meta = pod.get("metadata") or {}
    return (str(meta.get("namespace", "")), str(meta.get("name", "")))
