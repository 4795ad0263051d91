"""How many statuses each DGD and DCD went through: a watch beside the benchmark.

Every change of an object's `status` seen on the watch is one status write (only the
operator writes these statuses). Per kind: a histogram of status writes per object, and how
many objects had more than one intermediate status (any status before the final one: a DGD
not `successful`, a DCD whose Available condition is not True), the issue's bound being one.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from typing import Any

from controller.client import KubeClient
from controller.resource import Resource

Json = dict[str, Any]


def is_final(kind: str, status: Json) -> bool:
    if kind == "DynamoGraphDeployment":
        return status.get("state") == "successful"
    return any(c.get("type") == "Available" and c.get("status") == "True"
               for c in status.get("conditions") or [])


class StatusWatch:
    """Status changes per object of some kinds in one namespace, while running."""

    def __init__(self, client: KubeClient, namespace: str, resources: list[Resource]) -> None:
        self.client, self.namespace, self.resources = client, namespace, resources
        self.last: dict[str, Json] = {}
        self.writes: dict[str, Counter[str]] = {r.kind: Counter() for r in resources}
        self.intermediate: dict[str, Counter[str]] = {r.kind: Counter() for r in resources}
        self._tasks: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        for resource in self.resources:
            listed = await self.client.list(resource, self.namespace)
            for obj in listed["items"]:
                self.last[obj["metadata"]["uid"]] = obj.get("status") or {}
            version = str(listed["metadata"]["resourceVersion"])
            self._tasks.append(asyncio.create_task(self._watch(resource, version)))

    async def _watch(self, resource: Resource, version: str) -> None:
        while True:
            async with self.client.watch(resource, self.namespace, resource_version=version,
                                         timeout_seconds=3600, read_timeout=3600.0) as events:
                async for event in events:
                    obj = event.get("object") or {}
                    meta = obj.get("metadata") or {}
                    version = str(meta.get("resourceVersion") or version)
                    if event.get("type") != "MODIFIED":
                        continue
                    uid, status = meta["uid"], obj.get("status") or {}
                    if status != self.last.get(uid, {}):
                        self.last[uid] = status
                        self.writes[resource.kind][uid] += 1
                        if not is_final(resource.kind, status):
                            self.intermediate[resource.kind][uid] += 1

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    def figures(self) -> dict[str, Any]:
        """Per kind: {status writes: objects} and objects with more than one intermediate."""
        out: dict[str, Any] = {}
        for kind, writes in self.writes.items():
            histogram = Counter(writes.values())
            out[kind] = {"objects_by_status_writes": {str(k): v for k, v
                                                      in sorted(histogram.items())},
                         "objects_with_2_or_more_intermediate": sum(
                             1 for n in self.intermediate[kind].values() if n > 1),
                         "max_status_writes": max(writes.values(), default=0)}
        return out
