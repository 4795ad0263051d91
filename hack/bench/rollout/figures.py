"""The rollout benchmark's figures from a run, and the checks that make it fail when one is
impossible.

Per run: the invariants' worst values over every graph's series (the smallest serving capacity
and the floor it had to keep, samples below it, the largest surge, the most generations holding
pods, isolation violations, every distinct breach), rollout seconds (patch answered -> done, the
median and the largest), the operator's writes per graph for the rollout (lease renewals left
out) with their breakdown, samples per graph (one per change of a graph's pods or status), and
the sampler's cost. Our operator's run fails on any breach; the peer's breaches are its
result, only its impossible figures fail; either fails when the sampler's watches lost events
(then it may have missed a state).
"""

from __future__ import annotations

import statistics
from typing import Any

from e2e.rollout_invariants import MAX_GENERATIONS

from ..checks import at_least, check
from .run import Outcome

#: A rollout replaces each worker DCD: at least two creates and two deletes per graph. The
#: peer updates each worker's DCD in place: at least two writes.
MIN_WRITES = {"ours": 4.0, "peer": 2.0}


def figures(outcome: Outcome) -> dict[str, Any]:
    """The run's figures (see the module)."""
    sampler, names = outcome.sampler, outcome.names
    reports = {g: sampler.report(g) for g in names}
    points = [p for g in names for p in sampler.series[g]]
    times = [sampler.done_at[g] - outcome.patched_at[g] for g in names
             if g in sampler.done_at and g in outcome.patched_at]
    breaches = sorted({text for r in reports.values() for _, text in r.breaches})
    size = len(names)
    return {
        "graphs": size,
        "seconds_to_ready": round(outcome.seconds_to_ready, 2),
        "min_capacity": round(min((p.capacity for p in points), default=float("nan")), 3),
        "capacity_floor": round(min((p.observation.floor for p in points),
                                    default=float("nan")), 3),
        "samples_below_floor": sum(1 for p in points
                                   if p.capacity < p.observation.floor - 1e-9),
        "max_surge": max((n for r in reports.values() for n in r.max_surge.values()),
                         default=0),
        "max_generations": max((r.max_generations for r in reports.values()), default=0),
        "isolation_violations": sum(len(r.violations) for r in reports.values()),
        "breaches": len(breaches), "breach_examples": breaches[:5],
        "rollouts_done": len(times),
        "rollout_seconds_median": round(statistics.median(times), 2) if times else None,
        "rollout_seconds_max": round(max(times), 2) if times else None,
        "rollout_seconds_min": round(min(times), 2) if times else None,
        "writes_per_graph_per_rollout": round(sum(outcome.writes.values()) / size, 2),
        "writes_breakdown_per_graph": {k: round(v / size, 2)
                                       for k, v in sorted(outcome.writes.items())},
        "samples_per_graph_min": min((r.samples for r in reports.values()), default=0),
        "sampler_errors": len(sampler.gaps),
        "phases_of_first_graph": list(reports[names[0]].phases) if names else [],
        "operator_cpu_seconds": round(outcome.operator_cpu_seconds, 2),
        "sampler": {"mode": "watch", "events": dict(sampler.events),
                    "batches": sampler.batches, "resumes": sampler.resumes,
                    "gaps": sampler.gaps,
                    "handle_seconds": round(sampler.handle_seconds, 3),
                    "handle_seconds_max_batch": round(sampler.handle_seconds_max, 4),
                    "at_rest_list_tick_seconds": round(outcome.list_tick_seconds, 4)},
    }


def problems(result: dict[str, Any], who: str) -> list[str | None]:
    """What makes the figures of `who` ("ours" or "peer") impossible, or, for ours, a broken
    invariant."""
    size = result["graphs"]
    found: list[str | None] = [
        at_least(f"{who}: rollouts done", result["rollouts_done"], size),
        None if not result["sampler"]["gaps"] else
        f"{who}: the sampler's watches lost events, so it may have missed states: "
        f"{result['sampler']['gaps']}",
        at_least(f"{who}: samples per graph", result["samples_per_graph_min"], 1),
        None if (result["rollout_seconds_min"] or 0) > 0 else
        f"{who}: a rollout took {result['rollout_seconds_min']} s, impossible",
        at_least(f"{who}: writes per graph per rollout",
                 result["writes_per_graph_per_rollout"], MIN_WRITES[who]),
    ]
    if who == "ours":
        found += [
            None if result["samples_below_floor"] == 0 else
            f"capacity {result['min_capacity']} below the floor {result['capacity_floor']} "
            f"in {result['samples_below_floor']} samples",
            None if result["max_generations"] <= MAX_GENERATIONS else
            f"{result['max_generations']} generations held pods at once",
            None if result["isolation_violations"] == 0 else
            f"{result['isolation_violations']} isolation violations",
            None if result["breaches"] == 0 else f"breaches: {result['breach_examples']}",
        ]
    return found


def checked(result: dict[str, Any], who: str) -> dict[str, Any]:
    """The figures, after `problems` found none (ImpossibleFigures otherwise)."""
    check(problems(result, who))
    return result
