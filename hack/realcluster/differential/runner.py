"""Runs every case on both servers, each case in its own namespace (`dc-<n>`, the same name on
both), normalizes what was recorded and sorts the cases into same, explained and unexplained.

Cases run concurrently on each server (the two servers at once too); `serial` cases, which
change cluster-wide state such as webhook configurations, run one at a time afterwards.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .model import PUBLISHED, Case, Step, dig
from .normalize import Normalizer
from .target import Answer, Target

_VAR = re.compile(r"\$\{(\w+)\}")
CONCURRENCY = 6
NAMESPACE_LABEL = "differential.example.com/case"


def namespace_of(index: int) -> str:
    return f"dc-{index:03d}"


def _fill(value: Any, variables: Mapping[str, str]) -> Any:
    if isinstance(value, str):
        return _VAR.sub(lambda m: str(variables.get(m.group(1), m.group(0))), value)
    if isinstance(value, dict):
        return {_fill(k, variables): _fill(v, variables) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, variables) for v in value]
    return value


async def _answer(target: Target, step: Step, variables: dict[str, str]) -> Answer:
    path = _fill(step.path, variables)
    params = _fill(dict(step.params), variables)
    headers = _fill(dict(step.headers), variables)
    if step.watch:
        wanted = step.events
        return await target.watch(
            path, params, headers=headers, within=step.within,
            until=step.watch_until or (lambda evs: sum(
                dig(e, "object.metadata.name") not in PUBLISHED for e in evs) >= wanted))
    return await target.request(step.method, path, body=_fill(step.body, variables),
                                content_type=step.content_type, accept=step.accept,
                                params=params, headers=headers)


async def run_step(target: Target, step: Step, variables: dict[str, str]) -> Any:
    deadline = time.monotonic() + step.within
    while True:
        answer = await _answer(target, step, variables)
        if step.until is None or step.until(answer) or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.2)
    for name, path in step.save.items():
        value = dig(answer.json, path)
        variables[name] = "" if value is None else str(value)
    return None if step.record is None else step.record(answer)


async def run_case(target: Target, case: Case, index: int) -> list[Any]:
    """What `case` recorded on `target`, normalized; an exception is recorded too."""
    ns = namespace_of(index)
    created = await target.request("POST", "/api/v1/namespaces", body={
        "metadata": {"name": ns, "labels": {NAMESPACE_LABEL: ns}}})
    if created.code != 201:
        return [f"namespace not created: {created.code} {created.text}"]
    variables = {"ns": ns}
    recorded: list[Any] = []
    for number, step in enumerate(case.steps):
        try:
            outcome = await run_step(target, step, variables)
        except Exception as err:  # a failing step is an outcome to compare too
            recorded.append(f"step {number}: {type(err).__name__}: {err}")
            break
        if step.record is not None:
            recorded.append(outcome)
    normalized = Normalizer(case.scrub)(recorded)
    assert isinstance(normalized, list)
    return normalized


async def run_all(target: Target, cases: Sequence[Case]) -> dict[str, list[Any]]:
    limit = asyncio.Semaphore(CONCURRENCY)
    results: dict[str, list[Any]] = {}

    async def one(index: int, case: Case) -> None:
        async with limit:
            results[case.id] = await run_case(target, case, index)

    indexed = list(enumerate(cases, start=1))
    await asyncio.gather(*(one(i, c) for i, c in indexed if not c.serial))
    for i, c in indexed:
        if c.serial:
            await one(i, c)
    return results


@dataclass
class Report:
    """Cases sorted by how the two servers' outcomes compare."""

    run: int = 0
    same: list[str] = field(default_factory=list)
    #: differ, and Kubernetes' history explains it (explained.EXPLAINED).
    explained: list[str] = field(default_factory=list)
    unexplained: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    #: table entries whose case now answers alike (the table should lose them).
    stale: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def line(self) -> str:
        return (f"differential conformance: {self.run} cases run, {len(self.same)} same, "
                f"{len(self.explained)} differ as Kubernetes changed after 1.20 (explained), "
                f"{len(self.unexplained)} differ without explanation, in {self.seconds:.1f} s")

    def details(self) -> str:
        out = []
        for case_id, (real, local) in self.unexplained.items():
            out.append(f"--- {case_id}\n  real:  {json.dumps(real)}\n  local: "
                       f"{json.dumps(local)}")
        if self.stale:
            out.append(f"recorded but now the same: {', '.join(self.stale)}")
        return "\n".join(out)


def compare(cases: Sequence[Case], real: Mapping[str, Any], local: Mapping[str, Any],
            explained: Mapping[str, str]) -> Report:
    report = Report(run=len(cases))
    for case in cases:
        if real[case.id] == local[case.id]:
            report.same.append(case.id)
            if case.id in explained:
                report.stale.append(case.id)
        elif case.id in explained:
            report.explained.append(case.id)
        else:
            report.unexplained[case.id] = (real[case.id], local[case.id])
    return report


async def differential(real: Target, local: Target, cases: Sequence[Case],
                       explained: Mapping[str, str]) -> Report:
    ids = [c.id for c in cases]
    assert len(set(ids)) == len(ids), "case ids must be unique"
    started = time.monotonic()
    real_out, local_out = await asyncio.gather(run_all(real, cases), run_all(local, cases))
    report = compare(cases, real_out, local_out, explained)
    report.seconds = time.monotonic() - started
    return report
