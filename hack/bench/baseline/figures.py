"""Figures of two runs of one benchmark, set side by side: which way is better for each, and
which got worse than a tolerance allows.

A benchmark's last line is one JSON object. Nested objects are flattened to dotted keys; only
numbers count. Whether more is better is read from the key's name, as our benchmarks name
their figures: rates (`per_second`, `per_s`) are better higher; times, memory, CPU, bytes,
requests and writes are better lower. Any other number (sizes, counts of items) is shown but
never judged, nor is the machine's calibration (`hack.bench.calibration`): it is the speed of
the machine at the time, not of the code, and the figures it puts in context are judged.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

Direction = Literal["higher", "lower", "neutral"]

_HIGHER = ("per_second", "per_s", "throughput", "_speedup", "faster")
_LOWER_SUFFIXES = ("_s", "_ms")
_LOWER = ("seconds", "rss", "mib", "cpu_", "bytes", "writes_per", "requests_per", "events_per",
          "over_floor", "latency", "p50", "p99")


def flatten(obj: Mapping[str, object], prefix: str = "") -> dict[str, float]:
    """Every number in a (nested) JSON object, by dotted key; booleans are not numbers. An
    object in a list is keyed by its `size` or `graphs` when it has one (per-size
    results), else by its position."""
    out: dict[str, float] = {}
    for key, value in obj.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(flatten(value, f"{name}."))
        elif isinstance(value, list):
            for index, item in enumerate(value):
                if isinstance(item, Mapping):
                    label = item.get("size", item.get("graphs", index))
                    out.update(flatten(item, f"{name}[{label}]."))
        elif isinstance(value, int | float) and not isinstance(value, bool):
            out[name] = float(value)
    return out


def direction(key: str) -> Direction:
    """Which way is better for a figure, from its name."""
    leaf = key.rsplit(".", 1)[-1].lower()
    if leaf.startswith("calibration"):
        return "neutral"
    if any(mark in leaf for mark in _HIGHER):
        return "higher"
    if leaf.endswith(_LOWER_SUFFIXES) or any(mark in leaf for mark in _LOWER):
        return "lower"
    return "neutral"


@dataclass(frozen=True)
class Comparison:
    """One figure in both runs (medians over the rounds) and how much worse the head is."""

    key: str
    base: float
    head: float
    better: Direction

    @property
    def worse_by(self) -> float | None:
        """The head's figure as a multiple of the base's, >1 meaning worse; None if unjudged."""
        if self.better == "neutral" or self.base <= 0 or self.head <= 0:
            return None
        return self.head / self.base if self.better == "lower" else self.base / self.head


def compare(base_runs: Iterable[Mapping[str, object]],
            head_runs: Iterable[Mapping[str, object]]) -> list[Comparison]:
    """The figures both sides printed, each the median of its rounds."""
    base = _medians(base_runs)
    head = _medians(head_runs)
    return [Comparison(key, base[key], head[key], direction(key))
            for key in base if key in head]


def regressions(rows: Iterable[Comparison], tolerance: float) -> list[Comparison]:
    """The judged figures worse than `1 + tolerance` times the base's."""
    return [row for row in rows
            if row.worse_by is not None and row.worse_by > 1 + tolerance]


def _medians(runs: Iterable[Mapping[str, object]]) -> dict[str, float]:
    values: dict[str, list[float]] = {}
    for run in runs:
        for key, value in flatten(run).items():
            values.setdefault(key, []).append(value)
    return {key: statistics.median(found) for key, found in values.items()}
