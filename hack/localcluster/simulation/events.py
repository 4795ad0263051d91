"""Events the simulated components record, aggregated the way client-go's recorder does.

A repeat of the same (object, type, reason, message) bumps `count` and `lastTimestamp` of the
existing Event instead of creating another, so a crash loop leaves one BackOff event.
"""

from __future__ import annotations

import contextlib
import copy
import os
from typing import Any

from .clock import rfc3339
from .writer import EVENTS, Retry, Writer

Json = dict[str, Any]


class EventRecorder:
    """Records core/v1 Events about objects for one component (and host, for kubelets)."""

    def __init__(self, writer: Writer, component: str) -> None:
        self.writer = writer
        self.component = component
        #: (uid, type, reason, message) -> (namespace, event name)
        self._seen: dict[tuple[str, str, str, str], tuple[str, str]] = {}

    def normal(self, obj: Json, reason: str, message: str, host: str = "") -> None:
        self.record(obj, "Normal", reason, message, host)

    def warning(self, obj: Json, reason: str, message: str, host: str = "") -> None:
        self.record(obj, "Warning", reason, message, host)

    def record(self, obj: Json, etype: str, reason: str, message: str, host: str = "") -> None:
        meta = obj["metadata"]
        namespace = meta.get("namespace") or "default"
        key = (meta.get("uid", ""), etype, reason, message)
        now = rfc3339()
        seen = self._seen.get(key)
        if seen is not None:
            existing = self.writer.get(EVENTS, *seen)
            if existing is not None:
                body = copy.deepcopy(existing)
                body["count"] = int(existing.get("count") or 1) + 1
                body["lastTimestamp"] = now
                with contextlib.suppress(Retry):
                    self.writer.update(EVENTS, body)
                return
        involved = {"kind": obj.get("kind", ""), "namespace": meta.get("namespace", ""),
                    "name": meta.get("name", ""), "uid": meta.get("uid", ""),
                    "apiVersion": obj.get("apiVersion", ""),
                    "resourceVersion": meta.get("resourceVersion", "")}
        if not involved["namespace"]:
            involved.pop("namespace")
        source: Json = {"component": self.component}
        if host:
            source["host"] = host
        name = f"{meta.get('name', '')}.{os.urandom(8).hex()}"
        body = {
            "metadata": {"name": name, "namespace": namespace},
            "involvedObject": involved,
            "reason": reason,
            "message": message,
            "source": source,
            "firstTimestamp": now,
            "lastTimestamp": now,
            "count": 1,
            "type": etype,
            "eventTime": None,
            "reportingComponent": self.component,
            "reportingInstance": host or f"{self.component}-localcluster",
        }
        try:
            created = self.writer.create(EVENTS, namespace, body)
        except Retry:
            return
        if created is not None:
            if len(self._seen) > 10_000:  # a long-running cluster must not grow without bound
                self._seen.clear()
            self._seen[key] = (namespace, name)
