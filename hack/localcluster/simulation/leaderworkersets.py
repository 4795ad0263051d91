"""The LeaderWorkerSet controller (leaderworkerset.x-k8s.io/v1), once its CRD is installed.

Each of `spec.replicas` groups is a leader pod `<lws>-<g>` and `size-1` worker pods
`<lws>-<g>-<w>`, labelled as LWS labels them (name, group-index, worker-index, group-key,
template-revision-hash) with the LWS_* environment variables, behind a headless Service
`<lws>`. The real controller goes through a leader StatefulSet (and one per group for its
workers); here the LWS owns its pods directly, keeping what that StatefulSet holds (its
replicas, partition and the revision it rolls to) in memory, which is what an operator reading
pods and the LWS status sees. A template change rolls the groups as LWS does (`lws_rollout`):
surge groups past the last index under `maxSurge`, groups recreated from the highest index down
as the partition moves, at most `maxUnavailable` of the desired groups down (the StatefulSet
takes down at most maxUnavailable + maxSurge at once), a group below the partition recreated
on the old templates. RecreateGroupOnPodRestart recreates a whole group when one of its pods
restarts or disappears. The status counts groups as LWS does (surge groups included), a group
being ready when all its pods that are not terminating are there and ready.
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..storage import Change
from .clock import rfc3339
from .events import EventRecorder
from .loop import Context, ControlLoop, Key
from .lws_rollout import (
    Budgets,
    GroupState,
    Leaders,
    budgets,
    conditions,
    rolling_update_parameters,
    status_counts,
)
from .objects import (
    condition,
    owner_reference,
    pod_from_template,
    pod_phase,
    pod_ready,
    set_condition,
    terminating,
)
from .pod_creation import CreateAttempts
from .rollout import template_hash
from .writer import CRDS, PODS, SERVICES

Json = dict[str, Any]

LWS = ("leaderworkerset.x-k8s.io", "leaderworkersets")
PREFIX = "leaderworkerset.sigs.k8s.io/"
NAME, GROUP, WORKER = PREFIX + "name", PREFIX + "group-index", PREFIX + "worker-index"
GROUP_KEY, REVISION = PREFIX + "group-key", PREFIX + "template-revision-hash"
SIZE, LEADER = PREFIX + "size", PREFIX + "leader-name"


def _group_key(namespace: str, lws: str, group: int) -> str:
    return hashlib.sha1(f"{namespace}/{lws}-{group}".encode()).hexdigest()


def _with_env(pod: Json, env: dict[str, str]) -> None:
    for container in pod["spec"].get("containers") or ():
        existing = container.setdefault("env", [])
        names = {e.get("name") for e in existing}
        container["env"] = [{"name": k, "value": v} for k, v in env.items()
                            if k not in names] + existing


@dataclass
class _LeaderSet:
    """What the leader StatefulSet of an LWS holds: its replicas and partition, the revision
    (and templates) it rolls to, the LWS replicas it was written for, and the revision (and
    templates) of the groups below its partition while a rollout runs."""

    replicas: int
    partition: int
    revision: str
    templates: Json
    lws_replicas: int
    old: tuple[str, Json] | None = None


class LeaderWorkerSetController(ControlLoop):
    """Leader and worker pods per group, and the LWS status."""

    component = "lws-controller-manager"
    manager = "lws"

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        #: Groups seen whole, so a pod that later vanishes is told from one not made yet.
        self._whole: set[tuple[str, int]] = set()
        self.creates = CreateAttempts(self.writer, self.delays)
        #: The real pods come from StatefulSets: their refusals are that controller's events.
        self.statefulset_events = EventRecorder(self.writer, "statefulset-controller")
        #: The leader StatefulSet of each LWS, by uid.
        self._sets: dict[str, _LeaderSet] = {}

    def initial_keys(self) -> Iterable[Key]:
        return [(o["metadata"]["namespace"], o["metadata"]["name"])
                for o in self.writer.list_objects(LWS)]

    def keys_for(self, change: Change) -> Iterable[Key]:
        meta = change.obj["metadata"]
        if change.resource == LWS:
            return [(meta["namespace"], meta["name"])]
        if change.resource == PODS and (meta.get("labels") or {}).get(NAME):
            return [(meta["namespace"], meta["labels"][NAME])]
        if change.resource == CRDS and meta["name"] == "leaderworkersets.leaderworkerset.x-k8s.io":
            return self.initial_keys()
        return ()

    def reconcile(self, key: Key) -> float | None:
        if self.writer.served(LWS) is None:
            return None
        namespace, name = key
        lws = self.writer.get(LWS, namespace, name)
        if lws is None:
            live = {o["metadata"]["uid"] for o in self.writer.list_objects(LWS)}
            self._sets = {uid: s for uid, s in self._sets.items() if uid in live}
            return None
        if terminating(lws):
            return None
        spec = lws.get("spec") or {}
        lwt = spec.get("leaderWorkerTemplate") or {}
        want = int(spec.get("replicas", 1))
        size = int(lwt.get("size", 1))
        revision = template_hash(lwt)
        self._ensure_service(lws)
        pods = self.writer.owned(PODS, lws)
        groups: dict[int, list[Json]] = {}
        for pod in pods:
            try:
                groups.setdefault(int(pod["metadata"]["labels"][GROUP]), []).append(pod)
            except (KeyError, ValueError):
                continue
        uid = lws["metadata"]["uid"]
        rolling = (spec.get("rolloutStrategy") or {}).get("rollingUpdateConfiguration") or {}
        b = budgets(rolling, want)
        leader_set = self._leader_set(uid, groups, want, revision, lwt, b, size)
        # The StatefulSet scales down (surge groups reclaimed, or fewer replicas).
        for g, members in groups.items():
            if g >= leader_set.replicas:
                self._delete_group(uid, g, members)
        policy = lwt.get("restartPolicy", "RecreateGroupOnPodRestart")
        for g in range(leader_set.replicas):
            members = [p for p in groups.get(g, []) if not terminating(p)]
            if self._needs_recreate(uid, g, members, size, policy):
                self._delete_group(uid, g, groups.get(g, []))
                groups[g] = []
        self._roll(uid, leader_set, groups, size, b)
        for g in range(leader_set.replicas):
            old = leader_set.old if g < leader_set.partition else None
            templates, made_as = (old[1], old[0]) if old else (lwt, revision)
            if not self._fill_group(lws, g, groups.get(g, []), size, templates, made_as):
                break
        self._write_status(lws, want, size, revision, b)
        return self.creates.retry_after(lws)

    def _leader_set(self, uid: str, groups: dict[int, list[Json]], want: int, revision: str,
                    lwt: Json, b: Budgets, size: int) -> _LeaderSet:
        """The leader StatefulSet as LWS writes it this time: the partition and replicas of
        `lws_rollout.rolling_update_parameters`."""
        current = self._sets.get(uid)
        if current is None and groups:
            # Groups without a StatefulSet in memory (the controller restarted): as they stand.
            top = max(groups) + 1
            stale = any(p["metadata"]["labels"].get(REVISION) != revision
                        for members in groups.values() for p in members)
            current = _LeaderSet(top, top if stale else 0, "" if stale else revision, {},
                                 want)
        updated = current is not None and current.revision != revision
        states = [] if current is None else [self._state(groups.get(g, []), size, revision)
                                              for g in range(current.replicas)]
        partition, replicas = rolling_update_parameters(
            replicas=want, b=b, sts_replicas=None if current is None else current.replicas,
            sts_partition=0 if current is None else current.partition, states=states,
            original_replicas=want if current is None else current.lws_replicas,
            updated=updated)
        old = None if current is None else current.old
        if updated and old is None and current is not None and current.templates:
            old = (current.revision, current.templates)  # the groups below the partition
        if partition == 0 and all(self._state(groups.get(g, []), size, revision).updated
                                  for g in range(replicas)):
            old = None  # the rollout is done
        # The StatefulSet is written with the LWS's replicas each time (LWS's annotation).
        leader_set = _LeaderSet(replicas, partition, revision, copy.deepcopy(lwt), want, old)
        self._sets[uid] = leader_set
        return leader_set

    def _state(self, members: list[Json], size: int, revision: str) -> GroupState:
        live = [p for p in members if not terminating(p)]
        return GroupState(self._group_ready(members, size), bool(live) and len(live) == size
                          and all(p["metadata"]["labels"].get(REVISION) == revision
                                  for p in live))

    # --- groups --------------------------------------------------------------------------

    def _needs_recreate(self, uid: str, g: int, members: list[Json], size: int,
                        policy: str) -> bool:
        if policy not in ("RecreateGroupOnPodRestart", "RecreateGroupAfterStart"):
            return False
        if len(members) == size:
            self._whole.add((uid, g))
        restarted = any(int(c.get("restartCount") or 0) > 0 for p in members
                        for c in (p.get("status") or {}).get("containerStatuses") or ())
        lost = (uid, g) in self._whole and 0 < len(members) < size
        if policy == "RecreateGroupAfterStart" and any(pod_phase(p) == "Pending"
                                                       for p in members):
            return False
        return restarted or lost

    def _delete_group(self, uid: str, g: int, members: list[Json]) -> None:
        self._whole.discard((uid, g))
        for pod in members:
            if not terminating(pod):
                self.writer.delete(PODS, pod)

    def _roll(self, uid: str, leader_set: _LeaderSet, groups: dict[int, list[Json]],
              size: int, b: Budgets) -> None:
        """The leader StatefulSet's rolling update: groups at or above the partition not on
        its revision are recreated from the highest index down; a group that is down goes at
        once, a ready one only while fewer than maxUnavailable + maxSurge groups are down."""
        unavailable = sum(1 for g in range(leader_set.replicas)
                          if not self._group_ready(groups.get(g, []), size))
        for g in reversed(range(leader_set.partition, leader_set.replicas)):
            members = groups.get(g, [])
            if not any(p["metadata"]["labels"].get(REVISION) != leader_set.revision
                       for p in members if not terminating(p)):
                continue
            ready = self._group_ready(members, size)
            if ready and unavailable >= b.statefulset_max_unavailable:
                break
            self._delete_group(uid, g, members)
            groups[g] = []
            if ready:
                unavailable += 1

    def _group_ready(self, members: list[Json], size: int) -> bool:
        live = [p for p in members if not terminating(p)]
        return len(live) == size and all(pod_ready(p) for p in live)

    def _fill_group(self, lws: Json, g: int, members: list[Json], size: int, lwt: Json,
                    revision: str) -> bool:
        """Create the group's missing pods from `lwt` (of `revision`); False when admission
        refused one."""
        lws_name = lws["metadata"]["name"]
        namespace = lws["metadata"]["namespace"]
        existing = {p["metadata"]["name"]: p for p in members}
        leader_name = f"{lws_name}-{g}"
        startup = lws["spec"].get("startupPolicy", "LeaderCreated")
        leader = existing.get(leader_name)
        for w in range(size):
            pod_name = leader_name if w == 0 else f"{leader_name}-{w}"
            if pod_name in existing:
                continue  # present, or still terminating: wait for the name to free up
            if w > 0 and (leader is None or (startup == "LeaderReady" and not pod_ready(leader))):
                break
            template = (lwt.get("leaderTemplate") or lwt.get("workerTemplate") or {}) if w == 0 \
                else (lwt.get("workerTemplate") or {})
            labels = {NAME: lws_name, GROUP: str(g), WORKER: str(w),
                      GROUP_KEY: _group_key(namespace, lws_name, g), REVISION: revision}
            annotations = {SIZE: str(size)}
            if w > 0:
                annotations[LEADER] = leader_name
            pod = pod_from_template(template, namespace=namespace, owner=lws, name=pod_name,
                                    labels=labels, annotations=annotations)
            pod["spec"]["hostname"] = pod_name
            pod["spec"]["subdomain"] = lws_name
            _with_env(pod, {"LWS_LEADER_ADDRESS": f"{leader_name}.{lws_name}.{namespace}",
                            "LWS_GROUP_SIZE": str(size), "LWS_WORKER_INDEX": str(w)})
            created, refusal = self.creates.create(lws, copy.deepcopy(pod))
            if refusal is not None:
                statefulset = lws_name if w == 0 else leader_name
                self.statefulset_events.warning(
                    lws, "FailedCreate", f"create Pod {pod_name} in StatefulSet {statefulset}"
                                         f" failed error: {refusal.message}")
                return False
            if created is not None and w == 0:
                leader = created
        return True

    def _ensure_service(self, lws: Json) -> None:
        name = lws["metadata"]["name"]
        namespace = lws["metadata"]["namespace"]
        if self.writer.get(SERVICES, namespace, name) is not None:
            return
        self.writer.create(SERVICES, namespace, {
            "metadata": {"name": name, "namespace": namespace,
                         "ownerReferences": [owner_reference(lws)]},
            "spec": {"clusterIP": "None", "publishNotReadyAddresses": True,
                     "selector": {NAME: name}}})

    # --- status --------------------------------------------------------------------------

    def _write_status(self, lws: Json, want: int, size: int, revision: str,
                      b: Budgets) -> None:
        pods = [p for p in self.writer.owned(PODS, lws) if not terminating(p)]
        groups: dict[int, list[Json]] = {}
        for pod in pods:
            groups.setdefault(int(pod["metadata"]["labels"].get(GROUP, -1)), []).append(pod)
        leaders = [Leaders(g, self._group_ready(members, size),
                           self._state(members, size, revision).updated)
                   for g, members in sorted(groups.items())
                   if g >= 0 and any(p["metadata"]["labels"].get(WORKER) == "0"
                                     for p in members)]
        counts = status_counts(leaders, want, b.partition)
        old = lws.get("status") or {}
        now = rfc3339()
        found = copy.deepcopy(old.get("conditions") or [])
        texts = conditions()
        for ctype in counts.conditions:
            reason, message = texts[ctype]
            set_condition(found, ctype, "True", now, reason=reason, message=message)
        # Available is exclusive with Progressing and UpdateInProgress (either way round).
        exclusive = ({"Progressing", "UpdateInProgress"} if "Available" in counts.conditions
                     else {"Available"})
        for ctype in exclusive:
            c = condition(found, ctype)
            if c is not None and c.get("status") == "True":
                set_condition(found, ctype, "False", now, reason=c.get("reason"),
                              message=c.get("message"))
        status: Json = {"conditions": found}
        for field_name, value in (("readyReplicas", counts.ready),
                                  ("updatedReplicas", counts.updated),
                                  ("replicas", len(leaders))):
            if value:
                status[field_name] = value
        status["hpaPodSelector"] = f"{NAME}={lws['metadata']['name']},{WORKER}=0"
        status["observedGeneration"] = lws["metadata"].get("generation", 1)
        self.writer.update_status(LWS, lws, status)
