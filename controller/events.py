"""Kubernetes Events about the objects a controller manages, best effort.

Repeats of the same event (same object, type, reason and message) within ten minutes update
the first one's count and lastTimestamp instead of creating new Events, as client-go's event
correlator does, so a condition that persists does not flood the namespace. A failure to
record is logged and swallowed: events never fail a reconcile.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import aiohttp
import structlog

from .client import KubeClient
from .clock import now_rfc3339
from .errors import ApiError
from .resource import Resource

Json = dict[str, Any]
log = structlog.get_logger("events")

EVENTS = Resource("", "v1", "events", "Event")
NORMAL, WARNING = "Normal", "Warning"
_REPEAT_WINDOW = 600.0
_MAX_REMEMBERED = 4096


@dataclass(slots=True)
class _Seen:
    name: str
    namespace: str
    count: int
    at: float


class EventRecorder:
    """Records core/v1 Events for one component (e.g. "dynamographdeployment")."""

    def __init__(self, client: KubeClient, component: str, instance: str = "") -> None:
        self.client = client
        self.component = component
        self.instance = instance or component
        self._seen: dict[tuple[str, str, str, str], _Seen] = {}

    async def normal(self, obj: Json, reason: str, message: str) -> None:
        await self.record(obj, NORMAL, reason, message)

    async def warning(self, obj: Json, reason: str, message: str) -> None:
        await self.record(obj, WARNING, reason, message)

    async def record(self, obj: Json, event_type: str, reason: str, message: str) -> None:
        meta = obj.get("metadata") or {}
        key = (meta.get("uid", ""), event_type, reason, message)
        now = time.monotonic()
        seen = self._seen.get(key)
        try:
            if seen is not None and now - seen.at < _REPEAT_WINDOW:
                seen.count += 1
                seen.at = now
                await self.client.patch(EVENTS, seen.namespace, seen.name, {
                    "count": seen.count, "lastTimestamp": now_rfc3339()}, decode=False)
                return
            namespace = meta.get("namespace") or "default"
            stamp = now_rfc3339()
            name = f"{meta.get('name', 'object')}.{time.time_ns():x}"
            event = {
                "apiVersion": "v1", "kind": "Event",
                "metadata": {"name": name, "namespace": namespace},
                "involvedObject": {k: v for k, v in {
                    "apiVersion": obj.get("apiVersion"), "kind": obj.get("kind"),
                    "name": meta.get("name"), "namespace": meta.get("namespace"),
                    "uid": meta.get("uid"), "resourceVersion": meta.get("resourceVersion"),
                }.items() if v},
                "type": event_type, "reason": reason, "message": message,
                "source": {"component": self.component},
                "reportingComponent": self.component, "reportingInstance": self.instance,
                "firstTimestamp": stamp, "lastTimestamp": stamp, "count": 1,
            }
            # The answer repeats what was sent: it is not decoded (one per child created).
            await self.client.create(EVENTS, event, decode=False)
            if len(self._seen) >= _MAX_REMEMBERED:
                self._seen.pop(next(iter(self._seen)))
            self._seen[key] = _Seen(name, namespace, 1, now)
        except (ApiError, aiohttp.ClientError, OSError, TimeoutError) as err:
            log.warning("event not recorded", reason=reason, object=meta.get("name"),
                        error=str(err))
            self._seen.pop(key, None)
