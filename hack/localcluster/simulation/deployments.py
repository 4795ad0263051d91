"""The Deployment controller: rollouts through ReplicaSets, and the status real ones write.

The ReplicaSet whose template matches the Deployment's is the new one (`<name>-<hash>`,
labelled `pod-template-hash`); others are old. RollingUpdate scales the new one up and the old
ones down within maxSurge / maxUnavailable; Recreate scales old ones to zero first. Status
carries the replica counts, observedGeneration and the Available / Progressing conditions with
the reasons kube-controller-manager uses; old ReplicaSets beyond revisionHistoryLimit go.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from ..storage import DELETED, Change
from .clock import parse_rfc3339, rfc3339
from .loop import ControlLoop, Key
from .objects import (
    condition,
    controller_ref,
    owner_reference,
    pod_active,
    set_condition,
    terminating,
    touch_condition,
)
from .rollout import (
    DESIRED_REPLICAS,
    HASH_LABEL,
    MAX_REPLICAS,
    REVISION,
    complete,
    max_surge,
    max_unavailable,
    new_rs_replicas,
    old_scale_down,
    replicas,
    revision_of,
    rolling,
    same_template,
    status_count,
    template_hash,
)
from .writer import DEPLOYMENTS, PODS, REPLICA_SETS

Json = dict[str, Any]

_SKIP_ANNOTATIONS = ("kubectl.kubernetes.io/last-applied-configuration", REVISION,
                     "deployment.kubernetes.io/revision-history")


class DeploymentController(ControlLoop):
    """Rolls Deployments out through ReplicaSets."""

    component = "deployment-controller"

    def initial_keys(self) -> Iterable[Key]:
        return [(o["metadata"]["namespace"], o["metadata"]["name"])
                for o in self.writer.list_objects(DEPLOYMENTS)]

    def keys_for(self, change: Change) -> Iterable[Key]:
        if change.resource == DEPLOYMENTS:
            return [(change.obj["metadata"]["namespace"], change.obj["metadata"]["name"])]
        if change.resource == REPLICA_SETS:
            ref = controller_ref(change.obj)
            if ref is not None and ref.get("kind") == "Deployment":
                return [(change.obj["metadata"]["namespace"], ref.get("name", ""))]
        if change.resource == PODS and change.type == DELETED:
            # Recreate waits for old pods to be gone, which no ReplicaSet status shows.
            ref = controller_ref(change.obj)
            namespace = change.obj["metadata"]["namespace"]
            rs = self.writer.get(REPLICA_SETS, namespace, ref.get("name", "")) if ref else None
            owner = controller_ref(rs) if rs is not None else None
            if owner is not None and owner.get("kind") == "Deployment":
                return [(namespace, owner.get("name", ""))]
        return ()

    def reconcile(self, key: Key) -> float | None:
        namespace, name = key
        deploy = self.writer.get(DEPLOYMENTS, namespace, name)
        if deploy is None:
            return None
        all_rs = self.writer.owned(REPLICA_SETS, deploy)
        new_rs = self._find_new(deploy, all_rs)
        progress: tuple[str, str] | None = None
        if not terminating(deploy) and not (deploy.get("spec") or {}).get("paused"):
            if new_rs is None:
                new_rs = self._create_new(deploy, all_rs)
                if new_rs is not None:
                    progress = ("NewReplicaSetCreated",
                                f'Created new replica set "{new_rs["metadata"]["name"]}"')
                    all_rs = self.writer.owned(REPLICA_SETS, deploy)
            if new_rs is not None:
                new_rs = self._sync_revision(deploy, new_rs, all_rs)
                all_rs = self.writer.owned(REPLICA_SETS, deploy)
                self._roll(deploy, new_rs, all_rs)
                all_rs = self.writer.owned(REPLICA_SETS, deploy)
                new_rs = next((rs for rs in all_rs
                               if rs["metadata"]["uid"] == new_rs["metadata"]["uid"]), None)
                self._clean_up(deploy, new_rs, all_rs)
                all_rs = self.writer.owned(REPLICA_SETS, deploy)
        return self._write_status(deploy, new_rs, all_rs, progress)

    # --- ReplicaSets ---------------------------------------------------------------------

    def _find_new(self, deploy: Json, all_rs: list[Json]) -> Json | None:
        matching = [rs for rs in all_rs if same_template(deploy, rs)]
        matching.sort(key=lambda rs: str(rs["metadata"].get("creationTimestamp")))
        return matching[0] if matching else None

    def _create_new(self, deploy: Json, all_rs: list[Json]) -> Json | None:
        spec = deploy["spec"]
        collisions = int((deploy.get("status") or {}).get("collisionCount") or 0)
        pod_hash = template_hash(spec.get("template") or {}, collisions)
        template = copy.deepcopy(spec.get("template") or {})
        tmeta = template.setdefault("metadata", {})
        tmeta["labels"] = {**(tmeta.get("labels") or {}), HASH_LABEL: pod_hash}
        selector = copy.deepcopy(spec.get("selector") or {})
        selector["matchLabels"] = {**(selector.get("matchLabels") or {}), HASH_LABEL: pod_hash}
        revision = max([revision_of(rs) for rs in all_rs] + [0]) + 1
        annotations = {k: v for k, v in (deploy["metadata"].get("annotations") or {}).items()
                       if k not in _SKIP_ANNOTATIONS}
        want = replicas(deploy)
        annotations.update({REVISION: str(revision), DESIRED_REPLICAS: str(want),
                            MAX_REPLICAS: str(want + max_surge(deploy))})
        body: Json = {
            "metadata": {"name": f"{deploy['metadata']['name']}-{pod_hash}",
                         "namespace": deploy["metadata"]["namespace"],
                         "labels": dict(tmeta["labels"]), "annotations": annotations,
                         "ownerReferences": [owner_reference(deploy)]},
            "spec": {"replicas": 0, "minReadySeconds": int(spec.get("minReadySeconds") or 0),
                     "selector": selector, "template": template},
        }
        body["spec"]["replicas"] = new_rs_replicas(deploy, all_rs, body) if rolling(
            deploy) else (0 if any(replicas(rs) for rs in all_rs) else want)
        created = self.writer.create(REPLICA_SETS, deploy["metadata"]["namespace"], body)
        if created is not None:
            self.events.normal(deploy, "ScalingReplicaSet",
                               f"Scaled up replica set {created['metadata']['name']} from 0 to"
                               f" {body['spec']['replicas']}")
        return created

    def _sync_revision(self, deploy: Json, new_rs: Json, all_rs: list[Json]) -> Json:
        """The new ReplicaSet carries the highest revision (a rollback renumbers it)."""
        others = [revision_of(rs) for rs in all_rs if rs["metadata"]["uid"] != new_rs[
            "metadata"]["uid"]]
        revision = revision_of(new_rs)
        if others and revision <= max(others):
            revision = max(others) + 1
        annotations = new_rs["metadata"].get("annotations") or {}
        if annotations.get(REVISION) != str(revision):
            body = copy.deepcopy(new_rs)
            body["metadata"].setdefault("annotations", {})[REVISION] = str(revision)
            new_rs = self.writer.update(REPLICA_SETS, body) or new_rs
        d_annotations = deploy["metadata"].get("annotations") or {}
        if d_annotations.get(REVISION) != str(revision):
            body = copy.deepcopy(deploy)
            body["metadata"].setdefault("annotations", {})[REVISION] = str(revision)
            self.writer.update(DEPLOYMENTS, body)
        return new_rs

    def _scale(self, deploy: Json, rs: Json, to: int) -> None:
        have = replicas(rs)
        want = replicas(deploy)
        annotations = rs["metadata"].get("annotations") or {}
        desired = {DESIRED_REPLICAS: str(want), MAX_REPLICAS: str(want + max_surge(deploy))}
        if have == to and all(annotations.get(k) == v for k, v in desired.items()):
            return
        body = copy.deepcopy(rs)
        body["spec"]["replicas"] = to
        body["metadata"].setdefault("annotations", {}).update(desired)
        if self.writer.update(REPLICA_SETS, body) is not None and have != to:
            direction = "up" if to > have else "down"
            self.events.normal(deploy, "ScalingReplicaSet",
                               f"Scaled {direction} replica set {rs['metadata']['name']} from"
                               f" {have} to {to}")

    def _roll(self, deploy: Json, new_rs: Json, all_rs: list[Json]) -> None:
        old_rs = [rs for rs in all_rs if rs["metadata"]["uid"] != new_rs["metadata"]["uid"]]
        if not rolling(deploy):
            for rs in old_rs:
                self._scale(deploy, rs, 0)
            if self._old_pods_running(old_rs):
                return
            self._scale(deploy, new_rs, replicas(deploy))
            return
        if not any(replicas(rs) for rs in old_rs):
            # Nothing to roll from: a plain scale of the new ReplicaSet.
            self._scale(deploy, new_rs, replicas(deploy))
            return
        self._scale(deploy, new_rs, new_rs_replicas(deploy, all_rs, new_rs))
        all_rs = self.writer.owned(REPLICA_SETS, deploy)
        new_rs = next(rs for rs in all_rs if rs["metadata"]["uid"] == new_rs["metadata"]["uid"])
        old_rs = [rs for rs in all_rs if rs["metadata"]["uid"] != new_rs["metadata"]["uid"]]
        for name, to in old_scale_down(deploy, all_rs, new_rs, old_rs).items():
            rs = next(r for r in old_rs if r["metadata"]["name"] == name)
            self._scale(deploy, rs, to)

    def _old_pods_running(self, old_rs: list[Json]) -> bool:
        for rs in old_rs:
            for pod in self.writer.owned(PODS, rs):
                if pod_active(pod) or terminating(pod):
                    return True
        return False

    def _clean_up(self, deploy: Json, new_rs: Json | None, all_rs: list[Json]) -> None:
        limit = (deploy.get("spec") or {}).get("revisionHistoryLimit")
        if limit is None:
            return
        spent = [rs for rs in all_rs
                 if (new_rs is None or rs["metadata"]["uid"] != new_rs["metadata"]["uid"])
                 and replicas(rs) == 0 and status_count(rs, "replicas") == 0
                 and not terminating(rs)]
        spent.sort(key=revision_of)
        for rs in spent[:max(0, len(spent) - int(limit))]:
            self.writer.delete(REPLICA_SETS, rs)

    # --- status --------------------------------------------------------------------------

    def _write_status(self, deploy: Json, new_rs: Json | None, all_rs: list[Json],
                      progress: tuple[str, str] | None) -> float | None:
        old = deploy.get("status") or {}
        want = replicas(deploy)
        available = sum(status_count(rs, "availableReplicas") for rs in all_rs)
        total_spec = sum(replicas(rs) for rs in all_rs)
        counts = {
            "replicas": sum(status_count(rs, "replicas") for rs in all_rs),
            "updatedReplicas": status_count(new_rs, "replicas") if new_rs else 0,
            "readyReplicas": sum(status_count(rs, "readyReplicas") for rs in all_rs),
            "availableReplicas": available,
            "unavailableReplicas": max(total_spec - available, 0),
        }
        status: Json = {"observedGeneration": deploy["metadata"].get("generation", 1)}
        status.update({k: v for k, v in counts.items() if v})
        if old.get("collisionCount"):
            status["collisionCount"] = old["collisionCount"]
        now = rfc3339()
        conditions = copy.deepcopy(old.get("conditions") or [])
        if available >= want - max_unavailable(deploy):
            set_condition(conditions, "Available", "True", now, reason="MinimumReplicasAvailable",
                          message="Deployment has minimum availability.", update_time=True)
        else:
            set_condition(conditions, "Available", "False", now,
                          reason="MinimumReplicasUnavailable",
                          message="Deployment does not have minimum availability.",
                          update_time=True)
        wake = self._progressing(deploy, new_rs, status, old, conditions, progress, now)
        conditions = _replica_failure(conditions, new_rs, all_rs)
        # Available first, then Progressing, as kube-controller-manager orders them.
        conditions.sort(key=lambda c: {"Available": 0, "Progressing": 1}.get(c["type"], 2))
        status["conditions"] = conditions
        self.writer.update_status(DEPLOYMENTS, deploy, status)
        return wake

    def _progressing(self, deploy: Json, new_rs: Json | None, status: Json, old: Json,
                     conditions: list[Json], progress: tuple[str, str] | None,
                     now: str) -> float | None:
        spec = deploy.get("spec") or {}
        rs_name = new_rs["metadata"]["name"] if new_rs else ""
        current = condition(conditions, "Progressing")
        if spec.get("paused"):
            set_condition(conditions, "Progressing", "Unknown", now, reason="DeploymentPaused",
                          message="Deployment is paused", update_time=True)
            return None
        if current is not None and current.get("status") == "Unknown":
            # Resumed: the rollout picks up again.
            set_condition(conditions, "Progressing", "Unknown", now,
                          reason="DeploymentResumed", message="Deployment is resumed",
                          update_time=True)
        if complete(deploy, status):
            set_condition(conditions, "Progressing", "True", now, reason="NewReplicaSetAvailable",
                          message=f'ReplicaSet "{rs_name}" has successfully progressed.',
                          update_time=True)
            return None
        if progress is not None:
            set_condition(conditions, "Progressing", "True", now, reason=progress[0],
                          message=progress[1], update_time=True)
            return _deadline_wait(spec)
        if current is None and new_rs is not None:
            set_condition(conditions, "Progressing", "True", now, reason="FoundNewReplicaSet",
                          message=f'Found new replica set "{rs_name}"', update_time=True)
            return _deadline_wait(spec)
        moved = any(int(status.get(f) or 0) > int(old.get(f) or 0)
                    for f in ("updatedReplicas", "readyReplicas", "availableReplicas")) or (
            int(status.get("replicas") or 0) - int(status.get("updatedReplicas") or 0)
            < int(old.get("replicas") or 0) - int(old.get("updatedReplicas") or 0))
        if moved or (current is not None and current.get("reason") == "NewReplicaSetAvailable"):
            set_condition(conditions, "Progressing", "True", now, reason="ReplicaSetUpdated",
                          message=f'ReplicaSet "{rs_name}" is progressing.', update_time=True)
            touch_condition(conditions, "Progressing", now)
            return _deadline_wait(spec)
        current = condition(conditions, "Progressing")
        deadline = spec.get("progressDeadlineSeconds")
        if current is not None and deadline is not None and current.get("status") == "True":
            updated = parse_rfc3339(current.get("lastUpdateTime"))
            nowt = parse_rfc3339(now)
            if updated is not None and nowt is not None:
                left = float(deadline) - (nowt - updated).total_seconds()
                if left <= 0:
                    set_condition(conditions, "Progressing", "False", now,
                                  reason="ProgressDeadlineExceeded",
                                  message=f'ReplicaSet "{rs_name}" has timed out progressing.',
                                  update_time=True)
                    return None
                return left
        return None


def _deadline_wait(spec: Json) -> float | None:
    deadline = spec.get("progressDeadlineSeconds")
    return float(deadline) + 1.0 if deadline is not None else None


def _replica_failure(conditions: list[Json], new_rs: Json | None,
                     all_rs: list[Json]) -> list[Json]:
    """The ReplicaFailure of the new ReplicaSet (else of any other), copied onto the
    Deployment as the deployment controller copies it; none when no ReplicaSet has one."""
    failures = [c for rs in ([new_rs] if new_rs else []) + list(all_rs)
                for c in (rs.get("status") or {}).get("conditions") or ()
                if c.get("type") == "ReplicaFailure"]
    current = condition(conditions, "ReplicaFailure")
    if not failures:
        return [c for c in conditions if c.get("type") != "ReplicaFailure"]
    failure = failures[0]
    if current is not None and (current.get("status"), current.get("reason")) == (
            failure.get("status"), failure.get("reason")):
        return conditions
    since = failure.get("lastTransitionTime")
    return [c for c in conditions if c.get("type") != "ReplicaFailure"] + [{
        "type": "ReplicaFailure", "status": failure.get("status"), "lastUpdateTime": since,
        "lastTransitionTime": since, "reason": failure.get("reason"),
        "message": failure.get("message")}]
