"""Timestamps as the API writes them (metav1.Time: RFC 3339, UTC, whole seconds).

Conditions and Events stamp every object the operator writes; formatting a datetime costs
more than the rest of building an Event, so the text is made once per second and shared.
"""

from __future__ import annotations

import time

_last_second = -1
_last_text = ""


def now_rfc3339() -> str:
    """The current time, e.g. "2026-11-27T01:02:03Z"."""
    global _last_second, _last_text
    second = int(time.time())
    if second != _last_second:
        _last_text = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(second))
        _last_second = second
    return _last_text
