"""Moving a CRD's stored objects to its storage version, once, as kube-storage-version-migrator
does.

A CRD whose storage version changed still holds objects encoded in the version they were last
written in, and `status.storedVersions` lists every version that may still be in storage. The
older version can only stop being served once nothing is stored in it. `StorageMigration`
does, for each named CRD whose `status.storedVersions` holds a version other than the storage
version: list its objects in the storage version, write each back unchanged (the API server
encodes what it writes in the storage version, so an update that changes nothing else still
re-encodes an object stored in an older one), then trim `status.storedVersions` to the storage
version with a patch of the CRD's status guarded by the resourceVersion it was read at (a CRD
changed meanwhile is looked at again). An object written by someone else meanwhile (409) or
deleted (404) needs nothing more: that write stored it in the storage version.

`run` is a manager runnable: it migrates every named CRD, then waits until cancelled; a failed
step (the conversion webhook that a list in the new version needs is not up yet, say) is
retried with a growing delay.
Nothing is written for a CRD that is done already: a restarted operator writes nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import structlog

from .client import KubeClient
from .errors import ApiError, Conflict, NotFound
from .resource import Resource

Json = dict[str, Any]
log = structlog.get_logger("controller.storage_migration")

__all__ = ["CRDS", "StorageMigration"]

CRDS = Resource("apiextensions.k8s.io", "v1", "customresourcedefinitions",
                "CustomResourceDefinition", namespaced=False)
_PAGE = 500


class StorageMigration:
    """Migrates the stored objects of the named CRDs (`<plural>.<group>`) to each CRD's
    storage version and trims its `status.storedVersions`."""

    def __init__(self, client: KubeClient, crd_names: Sequence[str], *,
                 initial_delay: float = 1.0, max_delay: float = 30.0) -> None:
        self.client = client
        self.crd_names = tuple(crd_names)
        self.initial_delay = initial_delay
        self.max_delay = max_delay

    async def run(self) -> None:
        """Migrate every named CRD, retrying each until it is done; then wait until
        cancelled (a manager stops when one of its runnables ends)."""
        await self.migrate_all()
        await asyncio.Event().wait()

    async def migrate_all(self) -> None:
        """Migrate every named CRD, retrying each until it is done."""
        for name in self.crd_names:
            delay = self.initial_delay
            while True:
                try:
                    await self.migrate(name)
                    break
                except (ApiError, TimeoutError, OSError) as err:
                    if isinstance(err, NotFound):
                        break  # not installed: nothing stored
                    log.warning("storage migration failed, retrying", crd=name,
                                error=str(err) or type(err).__name__, retry_in=delay)
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, self.max_delay)

    async def migrate(self, name: str) -> int:
        """Migrate one CRD now; the number of objects written back."""
        crd = await self.client.get(CRDS, None, name)
        spec = crd["spec"]
        storage = next(v["name"] for v in spec["versions"] if v.get("storage"))
        stored = list((crd.get("status") or {}).get("storedVersions") or [])
        if stored == [storage]:
            return 0
        resource = Resource(spec["group"], storage, spec["names"]["plural"],
                            spec["names"]["kind"], namespaced=spec.get("scope") == "Namespaced")
        log.info("storage migration started", crd=name, stored=stored, storage=storage)
        written = 0
        token = ""
        while True:
            page = await self.client.list(resource, limit=_PAGE, continue_token=token)
            for obj in page.get("items") or []:
                written += await self._write_back(resource, obj)
            token = str((page.get("metadata") or {}).get("continue") or "")
            if not token:
                break
        patch = {"metadata": {"resourceVersion": crd["metadata"]["resourceVersion"]},
                 "status": {"storedVersions": [storage]}}
        await self.client.patch(CRDS, None, name, patch, subresource="status")
        log.info("storage migration done", crd=name, objects=written, storage=storage)
        return written

    async def _write_back(self, resource: Resource, obj: Json) -> int:
        obj.setdefault("apiVersion", resource.api_version)
        obj.setdefault("kind", resource.kind)
        try:
            await self.client.update(resource, obj)
        except (Conflict, NotFound):
            return 0  # written (in the storage version) or deleted by someone else meanwhile
        return 1
