"""The LeaderWorkerSet controller (leaderworkerset.x-k8s.io/v1), once its CRD is installed.

Each of `spec.replicas` groups is a leader pod `<lws>-<g>` and `size-1` worker pods
`<lws>-<g>-<w>`, labelled as LWS labels them (name, group-index, worker-index, group-key,
template-revision-hash) with the LWS_* environment variables, behind a headless Service
`<lws>`. The real controller goes through StatefulSets; here the LWS owns its pods directly,
which is what an operator reading pods and the LWS status sees. A template change recreates
groups from the highest index down, `maxUnavailable` at a time; RecreateGroupOnPodRestart
recreates a whole group when one of its pods restarts or disappears.
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Iterable
from typing import Any

from ..storage import Change
from .clock import rfc3339
from .events import EventRecorder
from .loop import Context, ControlLoop, Key
from .objects import (
    condition,
    int_or_percent,
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
        if lws is None or terminating(lws):
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
        # Scale down: groups past the end go.
        for g, members in groups.items():
            if g >= want:
                self._delete_group(uid, g, members)
        policy = lwt.get("restartPolicy", "RecreateGroupOnPodRestart")
        for g in range(want):
            members = [p for p in groups.get(g, []) if not terminating(p)]
            if self._needs_recreate(uid, g, members, size, policy):
                self._delete_group(uid, g, groups.get(g, []))
                groups[g] = []
        self._roll(lws, groups, want, revision)
        for g in range(want):
            if not self._fill_group(lws, g, groups.get(g, []), size, revision):
                break
        self._write_status(lws, want, size, revision)
        return self.creates.retry_after(lws)

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

    def _roll(self, lws: Json, groups: dict[int, list[Json]], want: int, revision: str) -> None:
        """Recreate outdated groups from the highest index down, maxUnavailable at a time."""
        ru = ((lws["spec"].get("rolloutStrategy") or {}).get("rollingUpdateConfiguration")
              or {})
        budget = max(1, int_or_percent(ru.get("maxUnavailable", 1), want, round_up=False))
        partition = int(ru.get("partition") or 0)
        size = int((lws["spec"].get("leaderWorkerTemplate") or {}).get("size", 1))
        unavailable = sum(1 for g in range(want) if not self._group_ready(groups.get(g, []),
                                                                           size))
        for g in reversed(range(partition, want)):
            members = groups.get(g, [])
            outdated = any(p["metadata"]["labels"].get(REVISION) != revision for p in members)
            if not outdated:
                continue
            ready = self._group_ready(members, size)
            if ready and unavailable >= budget:
                break
            self._delete_group(lws["metadata"]["uid"], g, members)
            groups[g] = []
            if ready:
                unavailable += 1

    def _group_ready(self, members: list[Json], size: int) -> bool:
        live = [p for p in members if not terminating(p)]
        return len(live) == size and all(pod_ready(p) for p in live)

    def _fill_group(self, lws: Json, g: int, members: list[Json], size: int,
                    revision: str) -> bool:
        """Create the group's missing pods; False when admission refused one."""
        lws_name = lws["metadata"]["name"]
        namespace = lws["metadata"]["namespace"]
        existing = {p["metadata"]["name"]: p for p in members}
        lwt = lws["spec"].get("leaderWorkerTemplate") or {}
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

    def _write_status(self, lws: Json, want: int, size: int, revision: str) -> float | None:
        pods = [p for p in self.writer.owned(PODS, lws) if not terminating(p)]
        groups: dict[int, list[Json]] = {}
        for pod in pods:
            groups.setdefault(int(pod["metadata"]["labels"].get(GROUP, -1)), []).append(pod)
        created = sum(1 for g, members in groups.items() if 0 <= g < want and any(
            p["metadata"]["labels"].get(WORKER) == "0" for p in members))
        ready = sum(1 for g in range(want) if self._group_ready(groups.get(g, []), size))
        updated = sum(1 for g in range(want) if groups.get(g) and len(groups[g]) == size and all(
            p["metadata"]["labels"].get(REVISION) == revision for p in groups[g]))
        old = lws.get("status") or {}
        now = rfc3339()
        conditions = copy.deepcopy(old.get("conditions") or [])
        updating = any(p["metadata"]["labels"].get(REVISION) != revision for p in pods)
        all_good = ready == want and updated == want

        def flip_false(ctype: str) -> None:
            c = condition(conditions, ctype)
            if c is not None and c.get("status") == "True":
                set_condition(conditions, ctype, "False", now, reason=c.get("reason"),
                              message=c.get("message"))

        if all_good:
            set_condition(conditions, "Available", "True", now, reason="AllGroupsReady",
                          message="All replicas are ready")
            flip_false("Progressing")
            flip_false("UpdateInProgress")
        else:
            set_condition(conditions, "Progressing", "True", now, reason="GroupsProgressing",
                          message="Replicas are progressing")
            flip_false("Available")
            if updating:
                set_condition(conditions, "UpdateInProgress", "True", now,
                              reason="GroupsUpdating", message="Rolling Upgrade is in progress")
        status: Json = {"conditions": conditions}
        for field_name, value in (("readyReplicas", ready), ("updatedReplicas", updated),
                                  ("replicas", created)):
            if value:
                status[field_name] = value
        status["hpaPodSelector"] = f"{NAME}={lws['metadata']['name']},{WORKER}=0"
        status["observedGeneration"] = lws["metadata"].get("generation", 1)
        self.writer.update_status(LWS, lws, status)
        return None
