"""Serving one watch: initial events, history replay, live changes, bookmarks, timeouts.

Every watcher of a resource gets the same bytes for the same change, so each change is
encoded once per (event type, served version) and the encoding is shared. Changes that queue
up while a client is slow are written in one batch rather than one chunk each.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from . import tables
from .errors import ApiError, gone
from .registry import ResourceType
from .storage import ADDED, DELETED, MODIFIED, Change, Storage, Watcher

Json = dict[str, Any]
Matcher = Callable[[Json], bool]

#: At most this many queued changes go into one write.
_BATCH = 512


@dataclass
class WatchPlan:
    """Everything one watch request asked for, already validated."""

    rt: ResourceType
    namespace: str | None
    matches: Matcher
    #: Replay changes after this version; None means "start now, with initial ADDED events".
    since: int | None
    send_initial: bool
    initial_end_bookmark: bool
    bookmarks: bool
    bookmark_interval: float
    timeout: float
    #: The includeObject of a Table watch, or None for plain objects.
    table: str | None = None
    #: Told the events (bookmarks aside) and bytes of each write to the stream.
    on_sent: Callable[[int, int], None] | None = None
    #: Converts an object stored in another version (a CRD's conversion webhook); None: the
    #: apiVersion is rewritten. Its ApiError ends the watch with an ERROR event.
    convert: Callable[[Json], Awaitable[Json]] | None = None


def served(rt: ResourceType, obj: Json) -> Json:
    """An object as served at `rt`'s version (CRD conversion strategy None)."""
    if obj.get("apiVersion") == rt.api_version:
        return obj
    return {**obj, "apiVersion": rt.api_version}


def bookmark(rt: ResourceType, rv: int, initial_end: bool = False) -> Json:
    meta: Json = {"resourceVersion": str(rv)}
    if initial_end:
        meta["annotations"] = {"k8s.io/initial-events-end": "true"}
    return {"kind": rt.kind, "apiVersion": rt.api_version, "metadata": meta}


def event_for(change: Change, matches: Matcher) -> tuple[str, Json] | None:
    """What a filtered watcher sees of a change: objects entering or leaving its selector
    become ADDED or DELETED, as the watch cache reports them."""
    new_ok = matches(change.obj)
    old_ok = change.old is not None and matches(change.old)
    if change.type == DELETED:
        return (DELETED, change.obj) if new_ok or old_ok else None
    if new_ok:
        return (MODIFIED if change.type == MODIFIED and old_ok else ADDED, change.obj)
    if old_ok and change.old is not None:
        left = {**change.old, "metadata": {**change.old["metadata"],
                                           "resourceVersion": str(change.rv)}}
        return (DELETED, left)
    return None


class _Encoder:
    """Encodes events for one watch, sharing encodings of changes between watchers."""

    def __init__(self, plan: WatchPlan) -> None:
        self.plan = plan
        self._first_table = True

    def line(self, event_type: str, obj: Json, change: Change | None = None) -> bytes:
        rt = self.plan.rt
        if self.plan.table is not None and event_type not in ("ERROR", "BOOKMARK"):
            table = tables.to_table(rt, [served(rt, obj)], include_object=self.plan.table)
            if not self._first_table:
                table["columnDefinitions"] = []
            self._first_table = False
            return _encode(event_type, table)
        if change is not None and (obj is change.obj or self._shared(change, obj)):
            key = (event_type, rt.api_version)
            cached = change.encoded.get(key)
            if cached is None:
                cached = change.encoded[key] = _encode(event_type, served(rt, obj))
            return cached
        return _encode(event_type, served(rt, obj) if event_type != "ERROR" else obj)


    def _shared(self, change: Change, obj: Json) -> bool:
        """`obj` is the change's conversion to this watch's version, the same for all."""
        pending = change.converted.get(self.plan.rt.api_version)
        return (pending is not None and pending.done() and not pending.cancelled()
                and pending.exception() is None and pending.result() is obj)


def _encode(event_type: str, obj: Json) -> bytes:
    return json.dumps({"type": event_type, "object": obj}, separators=(",", ":")).encode() + b"\n"


async def serve_watch(request: web.Request, storage: Storage,
                      plan: WatchPlan) -> web.StreamResponse:
    """Stream a watch until its timeout, a closed stream, or the client going away."""
    rt = plan.rt
    watcher = Watcher(resource=rt.stored_as, namespace=plan.namespace, matches=plan.matches)
    initial: list[Json] = []
    if plan.since is None:
        if plan.send_initial:
            initial = [o for o in storage.list_objects(rt.stored_as, plan.namespace)
                       if plan.matches(o)]
        since = storage.rv
    else:
        since = plan.since
    backlog = storage.watch(watcher, since)

    response = web.StreamResponse(status=200, headers={
        "Content-Type": "application/json", "Cache-Control": "no-cache, private"})
    response.enable_chunked_encoding()
    await response.prepare(request)
    encoder = _Encoder(plan)
    try:
        if backlog is None:
            err = gone(f"too old resource version: {since} "
                       f"({storage.oldest_replayable_rv() + 1})")
            await response.write(encoder.line("ERROR", err.status()))
            return response
        if plan.convert is not None:
            initial = [await _converted(plan, obj) for obj in initial]
        out = [encoder.line(ADDED, obj) for obj in initial]
        if plan.initial_end_bookmark:
            out.append(encoder.line("BOOKMARK", bookmark(rt, storage.rv, initial_end=True)))
        out.extend(await _event_lines(encoder, backlog, plan))
        for start in range(0, len(out), _BATCH):
            await _write(response, plan, out[start:start + _BATCH])
        await _follow(response, storage, watcher, plan, encoder,
                      max([since] + [c.rv for c in backlog]))
    except ApiError as err:  # a conversion failed: the watch ends with its Status
        with contextlib.suppress(ConnectionResetError, RuntimeError):
            await response.write(encoder.line("ERROR", err.status()))
    except (ConnectionResetError, asyncio.CancelledError):
        pass
    finally:
        storage.unwatch(watcher)
    with contextlib.suppress(ConnectionResetError, RuntimeError):
        await response.write_eof()
    return response


_BOOKMARK_PREFIX = b'{"type":"BOOKMARK"'


async def _write(response: web.StreamResponse, plan: WatchPlan, lines: list[bytes]) -> None:
    await response.write(b"".join(lines))
    if plan.on_sent is not None:
        events = [line for line in lines if not line.startswith(_BOOKMARK_PREFIX)]
        plan.on_sent(len(events), sum(len(line) for line in events))


def _lines(encoder: _Encoder, changes: list[Change], matches: Matcher) -> list[bytes]:
    out = []
    for change in changes:
        event = event_for(change, matches)
        if event is not None:
            out.append(encoder.line(event[0], event[1], change))
    return out


async def _converted(plan: WatchPlan, obj: Json) -> Json:
    if plan.convert is None or obj.get("apiVersion") == plan.rt.api_version:
        return obj
    return await plan.convert(obj)


async def _event_lines(encoder: _Encoder, changes: list[Change], plan: WatchPlan) -> list[bytes]:
    """`_lines`, converting what is stored in another version first when the plan says how."""
    if plan.convert is None:
        return _lines(encoder, changes, plan.matches)
    out = []
    for change in changes:
        event = event_for(change, plan.matches)
        if event is None:
            continue
        if event[1] is change.obj:
            out.append(encoder.line(event[0], await _shared_conversion(plan, change), change))
        else:  # an object leaving the selector: this watcher's own
            out.append(encoder.line(event[0], await _converted(plan, event[1])))
    return out


async def _shared_conversion(plan: WatchPlan, change: Change) -> Json:
    """The change's object at the plan's version, converted once for all its watchers:
    kube-apiserver keeps a watch cache per served version of a CRD, whose objects are
    converted as the cache takes them in, and serves every watcher of that version from it,
    so a watch event costs one conversion review per version, not one per watcher."""
    obj = change.obj
    target = plan.rt.api_version
    if plan.convert is None or obj.get("apiVersion") == target:
        return obj
    pending = change.converted.get(target)
    if pending is None:
        # Owned by the change, not by this watch: a watcher that goes away mid-review does
        # not cancel the review the others wait for.
        pending = change.converted[target] = asyncio.ensure_future(plan.convert(obj))
        pending.add_done_callback(lambda done: _forget_failure(change, target, done))
    return await asyncio.shield(pending)


def _forget_failure(change: Change, target: str, done: asyncio.Future[Json]) -> None:
    """A failed conversion is not kept: a later watcher asks the webhook again."""
    if done.cancelled() or done.exception() is not None:
        change.converted.pop(target, None)


async def _follow(response: web.StreamResponse, storage: Storage, watcher: Watcher,
                  plan: WatchPlan, encoder: _Encoder, last_rv: int) -> None:
    """Send live changes (batched), and bookmarks when idle, until the deadline."""
    deadline = time.monotonic() + plan.timeout
    next_bookmark = time.monotonic() + plan.bookmark_interval
    while True:
        now = time.monotonic()
        if now >= deadline:
            return
        wait = deadline - now
        if plan.bookmarks:
            wait = min(wait, max(0.0, next_bookmark - now))
        try:
            first = await asyncio.wait_for(watcher.queue.get(), wait)
        except TimeoutError:
            if plan.bookmarks and time.monotonic() >= next_bookmark:
                await response.write(encoder.line(
                    "BOOKMARK", bookmark(plan.rt, max(last_rv, storage.rv))))
                next_bookmark = time.monotonic() + plan.bookmark_interval
            continue
        batch: list[Change] = []
        closed = first is None
        if first is not None:
            batch.append(first)
        while not closed and len(batch) < _BATCH and not watcher.queue.empty():
            item = watcher.queue.get_nowait()
            if item is None:
                closed = True
            else:
                batch.append(item)
        if batch:
            last_rv = batch[-1].rv
            lines = await _event_lines(encoder, batch, plan)
            if lines:
                await _write(response, plan, lines)
        if closed:
            return
