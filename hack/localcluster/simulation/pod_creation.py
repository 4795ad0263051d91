"""Pod creates of the simulated workload controllers, and what they do when one is refused.

Admission may refuse a pod (a missing service account, a quota); the controllers then behave
as their real counterparts: a Warning event in their own wording, no further creates in that
sync (client-go's slow start begins with a batch of one), and another sync after a back-off
that grows per refusal in a row, since none of them watches what was missing.
`CreateAttempts` holds that back-off per owner; a sync without a refusal resets it.

The event wordings, by controller:

* ReplicaSet and Job (pkg/controller `RealPodControl`): `FailedCreate`,
  `Error creating: <error>`;
* StatefulSet (`recordPodEvent`, see `statefulsets`): `FailedCreate`, `create Pod <pod> in
  StatefulSet <set> failed error: <error>`, from `statefulset-controller`; a LeaderWorkerSet,
  which creates its pods through StatefulSets in a real cluster, owns them directly here, so
  its event is about the LeaderWorkerSet (the set is named as the real one would be: the LWS
  for leaders, the leader pod for its workers);
* Grove's PodClique: `PodCreateFailed`, `Error creating pod <pod.Name>: <error>` (the name is
  empty for a generateName pod the server refused).
"""

from __future__ import annotations

from typing import Any

from ..errors import ApiError
from .config import Delays
from .writer import PODS, Writer

__all__ = ["CreateAttempts", "replica_failure"]

Json = dict[str, Any]


class CreateAttempts:
    """Pod creates on behalf of owners, with each owner's refusal back-off."""

    def __init__(self, writer: Writer, delays: Delays) -> None:
        self.writer = writer
        self.delays = delays
        self._refusals: dict[str, int] = {}
        #: Owners with a create refused in the sync under way.
        self._refused_now: set[str] = set()

    def create(self, owner: Json, body: Json) -> tuple[Json | None, ApiError | None]:
        """Create a pod for `owner`: the pod, or the error admission refused it with."""
        created, refusal = self.writer.create_or_refusal(
            PODS, owner["metadata"]["namespace"], body)
        if refusal is not None:
            uid = owner["metadata"]["uid"]
            self._refusals[uid] = self._refusals.get(uid, 0) + 1
            self._refused_now.add(uid)
        return created, refusal

    def retry_after(self, owner: Json) -> float | None:
        """At the end of the owner's sync: seconds until it syncs again when a create was
        refused; None otherwise (and the back-off starts afresh)."""
        uid = owner["metadata"]["uid"]
        if uid not in self._refused_now:
            self._refusals.pop(uid, None)
            return None
        self._refused_now.discard(uid)
        n = self._refusals[uid]
        return float(min(self.delays.create_retry * 2 ** (n - 1), self.delays.create_retry_max))


def replica_failure(old: list[Json], refusal: ApiError | None, now: str) -> list[Json]:
    """A ReplicaSet's conditions after a sync: a `ReplicaFailure` (reason FailedCreate) is
    added on a refusal unless one is already there, and removed after a clean sync."""
    present = any(c.get("type") == "ReplicaFailure" for c in old)
    if refusal is not None and not present:
        return [*old, {"type": "ReplicaFailure", "status": "True", "lastTransitionTime": now,
                       "reason": "FailedCreate", "message": refusal.message}]
    if refusal is None and present:
        return [c for c in old if c.get("type") != "ReplicaFailure"]
    return old
