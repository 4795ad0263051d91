"""The Event printer, for core/v1 Events and events.k8s.io/v1 Events alike.

An events.k8s.io/v1 Event is printed through the core fields it corresponds to (`regarding` is
`involvedObject`, `note` is `message`, …), as the real server's printer does after conversion.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from .cells import as_dict, as_int, as_str, name_of
from .columns import NAME_DESCRIPTION, Col, Printer, Row
from .time_format import human_duration, parse_time, since

Json = dict[str, Any]

__all__ = ["PRINTERS"]

_DOCS = {
    "event.last": "The time at which the most recent occurrence of this event was recorded.",
    "event.type": "Type of this event (Normal, Warning), new types could be added in the future",
    "event.reason": "This should be a short, machine understandable string that gives the reason "
    "for the transition into the object's current status.",
    "event.object": "The object that this event is about.",
    "event.fieldPath": "If referring to a piece of an object instead of an entire object, this "
    "string should contain a valid JSON/Go field access statement, such as "
    "desiredState.manifest.containers[2].",
    "event.source": "The component reporting this event. Should be a short machine understandable "
    "string.",
    "event.message": "A human-readable description of the status of this operation.",
    "event.first": "The time at which the event was first recorded. (Time of server receipt is in "
    "TypeMeta.)",
    "event.count": "The number of times this event has occurred.",
}

_COLUMNS = (
    Col("Last Seen", "string", _DOCS["event.last"]),
    Col("Type", "string", _DOCS["event.type"]),
    Col("Reason", "string", _DOCS["event.reason"]),
    Col("Object", "string", _DOCS["event.object"]),
    Col("Subobject", "string", _DOCS["event.fieldPath"], 1),
    Col("Source", "string", _DOCS["event.source"], 1),
    Col("Message", "string", _DOCS["event.message"]),
    Col("First Seen", "string", _DOCS["event.first"], 1),
    Col("Count", "string", _DOCS["event.count"], 1),
    Col("Name", "string", NAME_DESCRIPTION, 1, "name"),
)


def _core_event(obj: Json) -> Json:
    """An events.k8s.io/v1 Event seen through the core fields the printer reads."""
    if "regarding" not in obj and "note" not in obj and "deprecatedSource" not in obj:
        return obj
    return {
        "metadata": obj.get("metadata"),
        "involvedObject": obj.get("regarding"),
        "reason": obj.get("reason"),
        "message": obj.get("note"),
        "source": obj.get("deprecatedSource"),
        "firstTimestamp": obj.get("deprecatedFirstTimestamp"),
        "lastTimestamp": obj.get("deprecatedLastTimestamp"),
        "count": obj.get("deprecatedCount"),
        "type": obj.get("type"),
        "eventTime": obj.get("eventTime"),
        "series": obj.get("series"),
        "reportingComponent": obj.get("reportingController"),
        "reportingInstance": obj.get("reportingInstance"),
    }


def _print_event(raw: Json, now: datetime) -> Row:
    obj = _core_event(raw)
    first_ts = parse_time(obj.get("firstTimestamp"))
    first = since(obj.get("eventTime"), now) if first_ts is None else human_duration(now - first_ts)
    last_ts = parse_time(obj.get("lastTimestamp"))
    last = first if last_ts is None else human_duration(now - last_ts)
    count = as_int(obj.get("count"))
    series = obj.get("series")
    if isinstance(series, dict):
        last = since(series.get("lastObservedTime"), now)
        count = as_int(series.get("count"))
    elif count == 0:
        count = 1
    involved = as_dict(obj.get("involvedObject"))
    kind = as_str(involved.get("kind")).lower()
    target = f"{kind}/{as_str(involved.get('name'))}" if involved.get("name") else kind
    source = as_dict(obj.get("source"))
    component = as_str(source.get("component")) or as_str(obj.get("reportingComponent"))
    instance = as_str(source.get("host")) or as_str(obj.get("reportingInstance"))
    source_text = component if not instance else f"{component}, {instance}"
    cells = [
        last,
        as_str(obj.get("type")),
        as_str(obj.get("reason")),
        target,
        as_str(involved.get("fieldPath")),
        source_text,
        as_str(obj.get("message")).strip(),
        first,
        count,
        name_of(obj),
    ]
    return cells, None


PRINTERS: dict[tuple[str, str], Printer] = {
    ("", "Event"): Printer(_COLUMNS, _print_event),
    ("events.k8s.io", "Event"): Printer(_COLUMNS, _print_event),
}
