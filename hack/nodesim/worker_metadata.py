"""The simulated Dynamo workers' DynamoWorkerMetadata, written through the API by nodesim.

The same object as the in-process kubelet's workers publish
(`hack.localcluster.simulation.worker_metadata.worker_metadata`), written as a client of any
API server: created when a worker's container starts, brought back to what the pod publishes
when it differs, nothing when the pod does not publish one or the CRD is not served (404).
Garbage collection of the server removes it with its pod. Each write runs as a task of its own
(the workers call `publish` synchronously), cancelled at `close`.
"""

from __future__ import annotations

import asyncio
from typing import Any

import structlog

from controller.client import KubeClient
from controller.errors import AlreadyExists, ApiError, NotFound
from controller.resource import Resource
from hack.localcluster.simulation.worker_metadata import publishes, worker_metadata

Json = dict[str, Any]
log = structlog.get_logger("nodesim.workers")

WORKER_METADATA = Resource("nvidia.com", "v1alpha1", "dynamoworkermetadatas",
                           "DynamoWorkerMetadata")


class RemotePublisher:
    """Writes starting workers' DynamoWorkerMetadata with `client`."""

    def __init__(self, client: KubeClient) -> None:
        self.client = client
        self._tasks: set[asyncio.Task[None]] = set()

    def publish(self, pod: Json) -> None:
        """Write the pod's object in the background, when the pod publishes one."""
        if not publishes(pod):
            return
        task = asyncio.get_running_loop().create_task(self._write(worker_metadata(pod)))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _write(self, desired: Json) -> None:
        meta = desired["metadata"]
        try:
            try:
                await self.client.create(WORKER_METADATA, desired)
            except AlreadyExists:
                live = await self.client.get(WORKER_METADATA, meta["namespace"], meta["name"])
                if live.get("spec") != desired["spec"]:
                    await self.client.update(WORKER_METADATA, {
                        **live, "spec": desired["spec"],
                        "metadata": {**live["metadata"], **meta}})
        except NotFound:
            return  # the CRD is not served: the runtime could not write it either
        except ApiError as err:
            log.info("worker metadata not written", pod=meta["name"], error=str(err))

    async def close(self) -> None:
        """Cancel the writes still running."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
