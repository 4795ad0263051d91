"""The rollout invariants of the soak, judged under its faults.

Every half second the soak lists the pods and graphs; this judges each graph's sample with
`e2e.rollout_invariants`: at most two generations hold pods, no worker registers outside its
generation (always), and, while a worker rollout runs, serving capacity and surge stay within
the graph's budgets.

Capacity and surge are what the operator decides, but the faults move them too: a killed pod
or a node gone NotReady lowers the ready count and leaves a terminating pod beside its
replacement, and a scale, restart or creation changes what is desired. So those two are judged
only on a graph left alone for `QUIET` seconds (no pod of it killed, no node under it down, no
scale through its adapter, restart or replace), and capacity only as a fall: a breach is a
sample below the floor after one at or above it, so a fault whose effect outlasts the quiet
time breaches nothing, and neither does a rollout that starts below the floor (a generation
still coming up) until it has reached it.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from e2e.rollout_invariants import (
    Sample,
    desired_replicas,
    generations_holding_pods,
    graph_budgets,
    isolation_violations,
    observe,
    rollout_phase,
)

Json = dict[str, Any]

#: Seconds a graph must be left alone before its capacity and surge are judged.
QUIET = 5.0
_EXAMPLES = 10


@dataclass
class RolloutWatch:
    """The soak's rollout figures, fed one sample per graph at a time."""

    max_generations: int = 0
    misplaced: set[str] = field(default_factory=set)
    #: Samples of a rollout in progress on an undisturbed graph, and their breaches.
    judged: int = 0
    capacity_breaches: list[str] = field(default_factory=list)
    surge_breaches: list[str] = field(default_factory=list)
    _quiet_from: dict[str, float] = field(default_factory=dict)
    _at_floor: dict[str, bool] = field(default_factory=dict)

    def disturb(self, graph: str, seconds: float = 0.0) -> None:
        """Something other than the operator moves this graph's pods for `seconds` from now:
        leave it unjudged until `QUIET` seconds after that."""
        until = time.monotonic() + seconds + QUIET
        self._quiet_from[graph] = max(self._quiet_from.get(graph, 0.0), until)
        self._at_floor.pop(graph, None)

    def sample(self, name: str, graph: Json | None, pods: Sequence[Json]) -> None:
        """Judge one graph at one instant: its JSON (None if not listed) and its pods."""
        generations = generations_holding_pods(pods)
        self.max_generations = max(self.max_generations, len(generations))
        self.misplaced |= {f"{name}/{v.get('pod', v)}" for v in isolation_violations(pods)}
        rolling = len(generations) > 1 or rollout_phase(graph) == "InProgress"
        if graph is None or not rolling or time.monotonic() < self._quiet_from.get(name, 0.0):
            self._at_floor.pop(name, None)
            return
        desired = desired_replicas(graph)
        try:
            budgets = graph_budgets(graph, desired)
        except ValueError:
            return
        seen = observe(Sample(graph, pods, desired, budgets))
        self.judged += 1
        at_floor = seen.capacity >= seen.floor - 1e-9
        if not at_floor and self._at_floor.get(name):
            self.capacity_breaches.append(
                f"{name}: capacity {seen.capacity:.2f} below {seen.floor:.2f} "
                f"({', '.join(generations)})")
        self._at_floor[name] = at_floor
        for component, over in seen.surge.items():
            budget = budgets.get(component)
            if budget is not None and over > budget.surge:
                self.surge_breaches.append(
                    f"{name}/{component}: surge {over} above {budget.surge}")

    def figures(self) -> Json:
        return {"workerGenerationsMax": self.max_generations,
                "misplacedWorkers": len(self.misplaced),
                "rolloutSamplesJudged": self.judged,
                "rolloutCapacityBreaches": len(self.capacity_breaches),
                "rolloutSurgeBreaches": len(self.surge_breaches)}

    def details(self) -> Json:
        return {"misplaced": sorted(self.misplaced)[:_EXAMPLES],
                "capacityBreaches": self.capacity_breaches[:_EXAMPLES],
                "surgeBreaches": self.surge_breaches[:_EXAMPLES]}
