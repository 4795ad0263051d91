"""How the LeaderWorkerSet controller rolls groups out: the leader StatefulSet's `replicas` and
`partition` it asks for, and the status it reports, as kubernetes-sigs/lws computes them
(`rollingUpdateParameters`, `rollingUpdatePartition`, `calculateRollingUpdateReplicas`,
`updateConditions`), on the groups' states. Pure; `leaderworkersets` applies them.

A rolling update runs under the LWS's `maxUnavailable` (rounded down, of `spec.replicas`) and
`maxSurge` (rounded up, at most `spec.replicas`): the leader StatefulSet bursts to
`replicas + maxSurge` groups (the surge groups, past the last index, start on the new template
at once), and its partition moves down from `replicas` as the groups at the tail turn ready on
the new template, so that at most `maxUnavailable` groups below the surge are down; the surge
groups are reclaimed as the desired groups come up. LWS's `partition` holds the groups below
it on the old template (a canary).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .objects import int_or_percent

__all__ = ["Budgets", "GroupState", "Leaders", "StatusCounts", "budgets", "conditions",
           "rolling_update_parameters", "status_counts"]


@dataclass(frozen=True)
class GroupState:
    """A group of the leader StatefulSet: every pod ready, every pod on the new revision."""

    ready: bool
    updated: bool


@dataclass(frozen=True)
class Budgets:
    """The rollout's budgets, in groups (`partition`: LWS's own, the canary's)."""

    max_surge: int
    max_unavailable: int
    partition: int

    @property
    def statefulset_max_unavailable(self) -> int:
        """What the leader StatefulSet may take down at once (at least one)."""
        return max(1, self.max_unavailable + self.max_surge)


def budgets(rolling: Mapping[str, Any], replicas: int) -> Budgets:
    """The budgets of `rolloutStrategy.rollingUpdateConfiguration` (LWS's defaults: one
    unavailable, no surge)."""
    surge = int_or_percent(rolling.get("maxSurge", 0), replicas, round_up=True)
    unavailable = int_or_percent(rolling.get("maxUnavailable", 1), replicas, round_up=False)
    return Budgets(min(surge, replicas), unavailable, int(rolling.get("partition") or 0))


def _continuous_ready(states: Sequence[GroupState]) -> int:
    """Groups ready on the new revision at the tail, counted from the last index down."""
    count = 0
    for state in reversed(states):
        if not (state.ready and state.updated):
            break
        count += 1
    return count


def _partition(states: Sequence[GroupState], sts_replicas: int, step: int,
               current: int) -> int:
    """The next partition: `step` more groups from the ready tail down, never over the
    unavailable budget, past groups that are down or new anyway; it only moves down."""
    stepped = max(0, sts_replicas - _continuous_ready(states) - step)
    partition = stepped + sum(1 for idx in range(stepped) if not states[idx].ready)
    for idx in range(min(partition, sts_replicas - 1), stepped - 1, -1):
        if not states[idx].ready or states[idx].updated:
            partition = idx
        else:
            break
    return min(partition, current)


def _unready(states: Sequence[GroupState], replicas: int) -> int:
    """Desired groups not ready on the new revision."""
    return sum(1 for idx in range(replicas)
               if idx >= len(states) or not states[idx].ready or not states[idx].updated)


def _wanted_replicas(replicas: int, b: Budgets, unready: int) -> int:
    """The burst while more desired groups are down than the surge covers; then only as many
    surge groups as the unavailable budget still needs."""
    if unready <= b.max_surge:
        return replicas + max(0, unready - b.max_unavailable)
    return replicas + b.max_surge


def rolling_update_parameters(*, replicas: int, b: Budgets, sts_replicas: int | None,
                              sts_partition: int, states: Sequence[GroupState],
                              original_replicas: int, updated: bool) -> tuple[int, int]:
    """(partition, replicas) of the leader StatefulSet. `sts_replicas`: its replicas now (None:
    not made yet); `states`: of its groups 0..sts_replicas-1; `original_replicas`: the
    LWS's replicas when the StatefulSet was last written; `updated`: the templates changed
    since then."""
    partition, wanted = _parameters(replicas, b, sts_replicas, sts_partition, states,
                                    original_replicas, updated)
    return max(partition, b.partition), wanted


def _parameters(replicas: int, b: Budgets, sts_replicas: int | None, sts_partition: int,
                states: Sequence[GroupState], original_replicas: int,
                updated: bool) -> tuple[int, int]:
    if sts_replicas is None:
        return 0, replicas
    burst = replicas + b.max_surge
    if updated:  # a new rollout: scale first, then roll
        partition = min(replicas, sts_replicas)
        if sts_replicas < replicas:
            return partition, replicas
        return partition, _wanted_replicas(replicas, b, replicas)
    if sts_partition == 0 and sts_replicas == replicas:
        return 0, replicas
    if sts_replicas < replicas:
        return sts_partition, replicas
    unready = _unready(states, replicas)
    if original_replicas != replicas:  # scaled during the rollout
        return min(sts_partition, burst), _wanted_replicas(replicas, b, unready)
    # Never past maxUnavailable while surge groups are reclaimed.
    step = b.max_unavailable + b.max_surge - (burst - sts_replicas)
    return (_partition(states, sts_replicas, step, sts_partition),
            _wanted_replicas(replicas, b, unready))


@dataclass(frozen=True)
class Leaders:
    """A group as the status sees it: its index, ready, and on the new revision."""

    index: int
    ready: bool
    updated: bool


@dataclass(frozen=True)
class StatusCounts:
    """The counts of an LWS status and which of its conditions are True."""

    ready: int
    updated: int
    conditions: tuple[str, ...]


def status_counts(groups: Sequence[Leaders], replicas: int, partition: int) -> StatusCounts:
    """Ready and updated groups (surge groups included) and the conditions to set True:
    UpdateInProgress and Progressing while a desired group at or above the partition is not
    on the new revision, else Available once every desired group is ready (those at or above
    the partition on the new revision), else Progressing."""
    current = [g for g in groups if partition <= g.index < replicas]
    ready_desired = sum(1 for g in groups if g.index < replicas and g.ready)
    if sum(1 for g in current if g.updated) < len(current):
        chosen: tuple[str, ...] = ("UpdateInProgress", "Progressing")
    elif ready_desired == replicas and all(g.ready and g.updated for g in current):
        chosen = ("Available",)
    else:
        chosen = ("Progressing",)
    return StatusCounts(sum(1 for g in groups if g.ready), sum(1 for g in groups if g.updated),
                        chosen)


def conditions() -> dict[str, tuple[str, str]]:
    """Each condition's reason and message, as LWS writes them."""
    return {"Available": ("AllGroupsReady", "All replicas are ready"),
            "UpdateInProgress": ("GroupsUpdating", "Rolling Upgrade is in progress"),
            "Progressing": ("GroupsProgressing", "Replicas are progressing")}
