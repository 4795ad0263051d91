"""Timestamps in the API's form, the same text within a second."""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime

from controller.clock import now_rfc3339


def test_now_is_metav1_time_in_utc() -> None:
    before = int(time.time())
    text = now_rfc3339()
    after = int(time.time())
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", text)
    stamp = int(datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC).timestamp())
    assert before <= stamp <= after


def test_a_new_second_gives_a_new_text() -> None:
    first = now_rfc3339()
    time.sleep(1.05)
    assert now_rfc3339() > first
