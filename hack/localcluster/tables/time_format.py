"""Timestamps and ages as the table printers read and show them.

Timestamps are parsed like Go's `time.Parse(time.RFC3339, …)`; ages and durations use
apimachinery's HumanDuration ("5m10s", "3h12m", "2d3h", "4y12d").
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

__all__ = ["ZERO_TIME", "human_duration", "parse_rfc3339", "parse_time", "since"]

_RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})"
)
#: Go's zero time.Time, which metav1.Time serializes for an unset timestamp.
ZERO_TIME = datetime(1, 1, 1, tzinfo=UTC)


def parse_rfc3339(value: str) -> datetime | None:
    """time.Parse(time.RFC3339, value); None where Go returns an error."""
    m = _RFC3339.fullmatch(value)
    if not m:
        return None
    year, month, day, hour, minute, second = (int(g) for g in m.groups()[:6])
    fraction, zone = m.group(7), m.group(8)
    micro = int((fraction or "0")[:6].ljust(6, "0"))
    if zone == "Z":
        tz = UTC
    else:
        sign = 1 if zone[0] == "+" else -1
        hours, minutes = int(zone[1:3]), int(zone[4:6])
        if hours > 23 or minutes > 59:
            return None
        tz = timezone(sign * timedelta(hours=hours, minutes=minutes))
    try:
        return datetime(year, month, day, hour, minute, second, micro, tzinfo=tz)
    except ValueError:
        return None


def parse_time(value: Any) -> datetime | None:
    """An RFC 3339 timestamp; None for absent, unparsable or Go's zero time."""
    if not isinstance(value, str):
        return None
    parsed = parse_rfc3339(value)
    if parsed is None or parsed == ZERO_TIME:
        return None
    return parsed


def _nanoseconds(delta: timedelta) -> int:
    return (delta.days * 86_400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1_000


def human_duration(delta: timedelta) -> str:
    """apimachinery duration.HumanDuration: ~2-3 significant figures, "<invalid>" if negative."""
    ns = _nanoseconds(delta)
    seconds = int(ns / 1_000_000_000)
    if seconds < -1:
        return "<invalid>"
    if seconds < 0:
        return "0s"
    if seconds < 60 * 2:
        return f"{seconds}s"
    minutes = ns // 60_000_000_000
    if minutes < 10:
        s = (ns // 1_000_000_000) % 60
        return f"{minutes}m" if s == 0 else f"{minutes}m{s}s"
    if minutes < 60 * 3:
        return f"{minutes}m"
    hours = ns // 3_600_000_000_000
    if hours < 8:
        m = minutes % 60
        return f"{hours}h" if m == 0 else f"{hours}h{m}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        h = hours % 24
        return f"{hours // 24}d" if h == 0 else f"{hours // 24}d{h}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        dy = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if dy == 0 else f"{hours // 24 // 365}y{dy}d"
    return f"{hours // 24 // 365}y"


def since(value: Any, now: datetime) -> str:
    """translateTimestampSince: the age of a timestamp, "<unknown>" when it is missing."""
    ts = parse_time(value)
    if ts is None:
        return "<unknown>"
    return human_duration(now - ts)
