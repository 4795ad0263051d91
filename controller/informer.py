"""A shared informer: list, then watch, and keep a store and event handlers up to date.

One informer follows one resource in one namespace (or all). It lists (in pages, a
consistent read) and watches from the list's resourceVersion with bookmarks; after a
dropped or timed-out stream it resumes from the last resourceVersion it saw; on 410 Gone it
lists again and tells handlers about objects that vanished meanwhile with
`DeletedFinalStateUnknown`. Errors back off exponentially, never below a Retry-After.
"""

from __future__ import annotations

import asyncio
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import aiohttp
import structlog

from .client import KubeClient
from .errors import ApiError, Gone
from .ratelimit import Backoff
from .resource import Resource
from .store import IndexFunc, Store, object_key

Json = dict[str, Any]
Transform = Callable[[Json], Json]

log = structlog.get_logger("controller.informer")


@dataclass(frozen=True)
class DeletedFinalStateUnknown:
    """An object that was deleted while the watch was down; `obj` is its last known state."""

    key: str
    obj: Json


@dataclass
class EventHandler:
    """Callbacks for one consumer of an informer; they run on the informer's task, so they
    must be quick and must not block (enqueue a key and return)."""

    on_add: Callable[[Json], None] | None = None
    on_update: Callable[[Json, Json], None] | None = None
    on_delete: Callable[[Json | DeletedFinalStateUnknown], None] | None = None


@dataclass
class WatchSettings:
    """Timings of list and watch; the defaults suit a real API server."""

    #: The longest the server goes between bookmarks on a quiet stream.
    bookmark_interval: float = 60.0
    #: Each watch asks for timeoutSeconds in [min, 2 * min), as client-go's reflector does.
    min_watch_timeout: float = 300.0
    page_size: int = 500
    backoff_initial: float = 0.8
    backoff_max: float = 30.0

    @property
    def read_timeout(self) -> float:
        """A stream silent for this long is dead; shorter than two bookmark intervals."""
        return 1.5 * self.bookmark_interval


def strip_managed_fields(obj: Json) -> Json:
    """A transform that drops metadata.managedFields, usually the bulk of a cached object."""
    meta = obj.get("metadata")
    if meta and "managedFields" in meta:
        obj = {**obj, "metadata": {k: v for k, v in meta.items() if k != "managedFields"}}
    return obj


#: Strings up to this length are shared between cached objects (keys, label values, reasons);
#: longer ones (messages, hashes of one object) rarely repeat.
_SHARED_STRING_MAX = 64


def _compact_value(value: Any) -> Any:
    kind = type(value)
    if kind is str:
        return sys.intern(value) if len(value) <= _SHARED_STRING_MAX else value
    if kind is dict:
        return _compact_dict(value)
    if kind is list:
        return [_compact_value(v) for v in value]
    return value


def _compact_dict(obj: Json) -> Json:
    # One call per container, not per leaf: this runs for every cached object of every event.
    out: Json = {}
    intern, limit = sys.intern, _SHARED_STRING_MAX
    for key, value in obj.items():
        kind = type(value)
        if kind is str:
            if len(value) <= limit:
                value = intern(value)
        elif kind is dict:
            value = _compact_dict(value)
        elif kind is list:
            value = [_compact_value(v) for v in value]
        out[intern(key)] = value
    return out


def compact(obj: Json) -> Json:
    """A copy of `obj` whose keys and short strings are shared with every other cached object.

    Each object decoded from a watch event has its own copy of every key ("metadata",
    "labels", "nvidia.com/dynamo-component", ...); held for thousands of objects, these copies
    are about half of the cache's memory. Equal in every way to `obj`."""
    return _compact_dict(obj)


def compact_object(obj: Json) -> Json:
    """The default transform: `strip_managed_fields`, then `compact`."""
    return compact(strip_managed_fields(obj))


class Informer:
    """Keeps a Store in step with the API server and fans events out to handlers."""

    def __init__(self, client: KubeClient, resource: Resource, namespace: str | None = None, *,
                 label_selector: str = "", field_selector: str = "",
                 transform: Transform | None = None,
                 indexers: dict[str, IndexFunc] | None = None,
                 settings: WatchSettings | None = None) -> None:
        self.client = client
        self.resource = resource
        self.namespace = namespace if resource.namespaced else None
        self.label_selector = label_selector
        self.field_selector = field_selector
        self.transform = transform
        self.settings = settings or WatchSettings()
        self.store = Store(indexers)
        self._handlers: list[EventHandler] = []
        self._synced = asyncio.Event()
        self._last_rv = ""
        self._log = log.bind(resource=str(resource), namespace=self.namespace or "")

    # --- consumers -------------------------------------------------------------------------

    def add_handler(self, handler: EventHandler) -> None:
        """Register a handler; if the informer already synced it first gets every object."""
        self._handlers.append(handler)
        if self.has_synced and handler.on_add is not None:
            for obj in self.store.list():
                self._call(handler.on_add, obj)

    def add_indexers(self, indexers: dict[str, IndexFunc]) -> None:
        self.store.add_indexers(indexers)

    @property
    def has_synced(self) -> bool:
        """True once the first list is in the store and handed to the handlers."""
        return self._synced.is_set()

    async def wait_for_sync(self) -> None:
        await self._synced.wait()

    @property
    def last_resource_version(self) -> str:
        return self._last_rv

    # --- the loop --------------------------------------------------------------------------

    async def run(self) -> None:
        """List and watch until cancelled."""
        s = self.settings
        backoff = Backoff(s.backoff_initial, s.backoff_max)
        need_list = True
        while True:
            try:
                if need_list:
                    await self._list()
                    need_list = False
                if await self._watch():
                    backoff.reset()
                    continue
                delay = backoff.next_delay()
            except Gone:
                self._log.info("watch expired, relisting", resource_version=self._last_rv)
                need_list = True
                continue
            except ApiError as err:
                delay = backoff.next_delay(err.retry_after or 0.0)
                self._log.warning("list/watch failed", code=err.code, reason=err.reason,
                                  retry_in=round(delay, 3))
            except (aiohttp.ClientError, TimeoutError, ValueError) as err:
                delay = backoff.next_delay()
                self._log.warning("list/watch failed", error=repr(err),
                                  retry_in=round(delay, 3))
            await asyncio.sleep(delay)

    async def _list(self) -> None:
        items: list[Json] = []
        token = ""
        rv = ""
        while True:
            page = await self.client.list(self.resource, self.namespace,
                                          label_selector=self.label_selector,
                                          field_selector=self.field_selector,
                                          limit=self.settings.page_size, continue_token=token)
            meta = page.get("metadata", {})
            rv = rv or meta.get("resourceVersion", "")
            kind = page.get("kind", "").removesuffix("List")
            for item in page.get("items") or []:
                # List items carry no kind/apiVersion; put them back so handlers see whole objects.
                item.setdefault("kind", kind or self.resource.kind)
                item.setdefault("apiVersion", self.resource.api_version)
                items.append(item)
            token = meta.get("continue", "")
            if not token:
                break
        self._replace(items)
        self._last_rv = rv
        self._synced.set()

    def _replace(self, items: list[Json]) -> None:
        fresh = {object_key(obj): self._trim(obj) for obj in items}
        for key in self.store.list_keys():
            if key not in fresh:
                gone = self.store.remove(key)
                assert gone is not None
                self._notify_delete(DeletedFinalStateUnknown(key, gone))
        for obj in fresh.values():
            self._notify_put(self.store.put(obj), obj)

    async def _watch(self) -> bool:
        """One watch stream; True if it was healthy (events arrived or it lasted a while)."""
        s = self.settings
        timeout = int(s.min_watch_timeout * (1.0 + random.random()))
        started = time.monotonic()
        events = 0
        try:
            async with self.client.watch_batches(self.resource, self.namespace,
                                                 resource_version=self._last_rv,
                                                 timeout_seconds=max(1, timeout),
                                                 read_timeout=s.read_timeout,
                                                 label_selector=self.label_selector,
                                                 field_selector=self.field_selector) as stream:
                async for batch in stream:
                    events += len(batch)
                    for event in batch:
                        self._handle(event)
        except (aiohttp.ServerTimeoutError, TimeoutError):
            # Silence past the read timeout: the stream is dead; resume from the last version.
            self._log.debug("watch stream went silent", resource_version=self._last_rv)
            return events > 0
        except aiohttp.ClientPayloadError:
            # The server cut the stream mid-chunk: resume from the last version.
            return events > 0
        return events > 0 or time.monotonic() - started >= 1.0

    def _handle(self, event: Json) -> None:
        kind = event.get("type")
        obj = event.get("object") or {}
        if kind == "ERROR":
            code = int(obj.get("code", 500))
            raise ApiError.from_status(code, obj)
        rv = obj.get("metadata", {}).get("resourceVersion")
        if kind == "BOOKMARK":
            if rv:
                self._last_rv = rv
            return
        obj = self._trim(obj)
        if kind in ("ADDED", "MODIFIED"):
            self._notify_put(self.store.put(obj), obj)
        elif kind == "DELETED":
            old = self.store.remove(object_key(obj))
            if old is not None:
                self._notify_delete(obj)
        if rv:
            self._last_rv = rv

    # --- fan-out ---------------------------------------------------------------------------

    def _trim(self, obj: Json) -> Json:
        return self.transform(obj) if self.transform is not None else obj

    def _notify_put(self, old: Json | None, new: Json) -> None:
        for handler in self._handlers:
            if old is None:
                if handler.on_add is not None:
                    self._call(handler.on_add, new)
            elif handler.on_update is not None:
                self._call(handler.on_update, old, new)

    def _notify_delete(self, obj: Json | DeletedFinalStateUnknown) -> None:
        for handler in self._handlers:
            if handler.on_delete is not None:
                self._call(handler.on_delete, obj)

    def _call(self, fn: Callable[..., None], *args: Any) -> None:
        try:
            fn(*args)
        except Exception:
            # One broken consumer must not stop the informer or starve the others.
            self._log.exception("event handler failed")
