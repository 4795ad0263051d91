"""Benchmarks check their own figures: an impossible one (zero requests for work done, fewer
writes than children created, a peer that did nothing) means the benchmark is broken, not
fast, so the run fails instead of printing it as a result."""

from __future__ import annotations

import sys
from collections.abc import Iterable


class ImpossibleFigures(Exception):
    """Figures that cannot come from a correct run; the message lists each one."""


def check(problems: Iterable[str | None]) -> None:
    """Raise ImpossibleFigures naming every problem given (None entries are fine)."""
    found = [p for p in problems if p]
    if found:
        raise ImpossibleFigures("; ".join(found))


def at_least(name: str, value: float | None, floor: float) -> str | None:
    """A problem when `value` is missing or below `floor`."""
    if value is None or value < floor:
        return f"{name} is {value}, impossible for a correct run (at least {floor})"
    return None


def report_and_exit_code(err: ImpossibleFigures) -> int:
    print(f"benchmark figures impossible: {err}", file=sys.stderr)
    return 1
