"""The StatefulSet controller: pods `<set>-<ordinal>`, in order, with stable names and claims.

As kube-controller-manager's (`stateful_set_control.go`), one sync per change:

* pods `<set>-0 .. <set>-(replicas-1)`, controller-owned, labelled
  `statefulset.kubernetes.io/pod-name`, `apps.kubernetes.io/pod-index` and
  `controller-revision-hash` (the revision's name, see `statefulset_revisions`), with
  `hostname` = the pod's name and `subdomain` = `serviceName`; each volumeClaimTemplate gives
  the pod a claim `<template>-<set>-<ordinal>`, created before the pod (owned by the set
  when `persistentVolumeClaimRetentionPolicy.whenDeleted` is Delete; `whenScaled` is not
  simulated: claims of removed ordinals stay);
* `podManagementPolicy: OrderedReady` (the default) creates one pod at a time, each Running
  and Ready (and available, with minReadySeconds) before the next, and scales down from the
  highest ordinal, one at a time, only while the others are healthy; `Parallel` creates and
  deletes them all at once;
* a failed pod is deleted and made again (`RecreatingFailedPod`);
* `RollingUpdate` (the default; `partition` honoured) replaces pods not at the update
  revision from the highest ordinal down, one at a time, waiting for each to be Running and
  Ready; `OnDelete` leaves that to the user; a new pod below the partition gets the current
  revision's template;
* status: replicas, readyReplicas, currentReplicas, updatedReplicas, availableReplicas,
  currentRevision, updateRevision (the current one becomes the update one when every pod is
  updated and ready), collisionCount and observedGeneration.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from ..storage import Change
from .loop import Context, ControlLoop, Key
from .objects import (
    controller_ref,
    meta,
    owner_reference,
    pod_from_template,
    pod_phase,
    pod_ready,
    terminating,
)
from .pod_creation import CreateAttempts
from .replicasets import available_since
from .statefulset_revisions import (
    POD_INDEX_LABEL,
    POD_NAME_LABEL,
    REVISION_LABEL,
    Revisions,
)
from .writer import PODS

Json = dict[str, Any]

STATEFUL_SETS = ("apps", "statefulsets")
CLAIMS = ("", "persistentvolumeclaims")


def ordinal_of(sts_name: str, pod: Json) -> int | None:
    m = re.fullmatch(re.escape(sts_name) + r"-(\d+)", str(meta(pod).get("name", "")))
    return int(m.group(1)) if m else None


class StatefulSetController(ControlLoop):
    """Keeps each StatefulSet's ordinal pods, in order, at its revision."""

    component = "statefulset-controller"

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self.creates = CreateAttempts(self.writer, self.delays)
        self.revisions = Revisions(self.writer)

    def initial_keys(self) -> Iterable[Key]:
        return [(o["metadata"]["namespace"], o["metadata"]["name"])
                for o in self.writer.list_objects(STATEFUL_SETS)]

    def keys_for(self, change: Change) -> Iterable[Key]:
        if change.resource == STATEFUL_SETS:
            return [(change.obj["metadata"]["namespace"], change.obj["metadata"]["name"])]
        if change.resource == PODS:
            ref = controller_ref(change.obj)
            if ref is not None and ref.get("kind") == "StatefulSet":
                return [(change.obj["metadata"]["namespace"], ref.get("name", ""))]
        return ()

    def reconcile(self, key: Key) -> float | None:
        namespace, name = key
        sts = self.writer.get(STATEFUL_SETS, namespace, name)
        if sts is None or terminating(sts):
            return None
        update, _ = self.revisions.update_revision(sts)
        current = (sts.get("status") or {}).get("currentRevision") or update
        self._sync(sts, current, update)
        pods = self.writer.owned(PODS, sts)
        self.revisions.prune(sts, {current, update} | {
            (meta(p).get("labels") or {}).get(REVISION_LABEL, "") for p in pods})
        wake = self._write_status(sts, pods, current, update)
        retry = self.creates.retry_after(sts)
        return retry if wake is None else wake if retry is None else min(wake, retry)

    # --- one sync: create, repair, scale down, roll --------------------------------------

    def _sync(self, sts: Json, current: str, update: str) -> None:
        spec = sts.get("spec") or {}
        name = meta(sts)["name"]
        replicas = int(spec.get("replicas", 1))
        monotonic = spec.get("podManagementPolicy", "OrderedReady") != "Parallel"
        min_ready = int(spec.get("minReadySeconds") or 0)
        by_ordinal: dict[int, Json] = {}
        for pod in self.writer.owned(PODS, sts):
            ordinal = ordinal_of(name, pod)
            if ordinal is not None:
                by_ordinal[ordinal] = pod

        def healthy(pod: Json) -> bool:
            return (not terminating(pod) and pod_phase(pod) == "Running"
                    and available_since(pod, min_ready, datetime.now(UTC))[0])

        for ordinal in range(replicas):
            if ordinal not in by_ordinal:
                if not self._create(sts, ordinal, current, update):
                    return
                if monotonic:
                    return
                continue
            pod = by_ordinal[ordinal]
            if pod_phase(pod) in ("Failed", "Succeeded") and not terminating(pod):
                self.events.warning(sts, "RecreatingFailedPod",
                                    f"StatefulSet {meta(sts)['namespace']}/{name} is "
                                    f"recreating failed Pod {meta(pod)['name']}")
                self._delete(sts, pod)
                if monotonic:
                    return
                continue
            if monotonic and not healthy(pod):
                return
        condemned = sorted((o for o in by_ordinal if o >= replicas), reverse=True)
        for ordinal in condemned:
            pod = by_ordinal[ordinal]
            if terminating(pod):
                if monotonic:
                    return
                continue
            if monotonic and any(not healthy(p) for o, p in by_ordinal.items()
                                 if o != ordinal and o < replicas):
                return
            self._delete(sts, pod)
            if monotonic:
                return
        strategy = spec.get("updateStrategy") or {}
        if strategy.get("type", "RollingUpdate") != "RollingUpdate":
            return
        partition = int((strategy.get("rollingUpdate") or {}).get("partition") or 0)
        for ordinal in range(replicas - 1, partition - 1, -1):
            if ordinal not in by_ordinal:
                return
            pod = by_ordinal[ordinal]
            if (meta(pod).get("labels") or {}).get(REVISION_LABEL) != update \
                    and not terminating(pod):
                self._delete(sts, pod)
                return
            if not healthy(pod):
                return

    def _create(self, sts: Json, ordinal: int, current: str, update: str) -> bool:
        """Create the pod of `ordinal` (its claims first); False when refused."""
        spec = sts.get("spec") or {}
        namespace, name = meta(sts)["namespace"], meta(sts)["name"]
        strategy = spec.get("updateStrategy") or {}
        revision, template = update, spec.get("template") or {}
        if strategy.get("type", "RollingUpdate") == "RollingUpdate" and current != update:
            partition = (strategy.get("rollingUpdate") or {}).get("partition")
            below = int(partition) if partition is not None else int(
                (sts.get("status") or {}).get("currentReplicas") or 0)
            if ordinal < below:
                revision = current
                template = self._template_of(sts, current) or template
        pod_name = f"{name}-{ordinal}"
        body = pod_from_template(template, namespace=namespace, owner=sts, name=pod_name,
                                 labels={POD_NAME_LABEL: pod_name,
                                         POD_INDEX_LABEL: str(ordinal),
                                         REVISION_LABEL: revision})
        body["spec"]["hostname"] = pod_name
        if spec.get("serviceName"):
            body["spec"]["subdomain"] = spec["serviceName"]
        self._claims(sts, ordinal, body)
        created, refusal = self.creates.create(sts, body)
        if refusal is not None:
            self.events.warning(sts, "FailedCreate", f"create Pod {pod_name} in StatefulSet "
                                                     f"{name} failed error: {refusal.message}")
            return False
        if created is not None:
            self.events.normal(sts, "SuccessfulCreate",
                               f"create Pod {pod_name} in StatefulSet {name} successful")
        return created is not None

    def _claims(self, sts: Json, ordinal: int, pod: Json) -> None:
        """Create the pod's missing claims and mount them in place of same-named volumes."""
        spec = sts.get("spec") or {}
        namespace, name = meta(sts)["namespace"], meta(sts)["name"]
        templates = spec.get("volumeClaimTemplates") or []
        if not templates:
            return
        volumes = [v for v in pod["spec"].get("volumes") or []
                   if v.get("name") not in {meta(t).get("name") for t in templates}]
        for template in templates:
            claim_name = f"{meta(template).get('name')}-{name}-{ordinal}"
            volumes.append({"name": meta(template).get("name"),
                            "persistentVolumeClaim": {"claimName": claim_name}})
            if self.writer.get(CLAIMS, namespace, claim_name) is not None:
                continue
            labels = dict((spec.get("selector") or {}).get("matchLabels") or {})
            body: Json = {"metadata": {
                "name": claim_name, "namespace": namespace,
                "labels": {**(meta(template).get("labels") or {}), **labels}},
                "spec": copy.deepcopy(template.get("spec") or {})}
            retention = spec.get("persistentVolumeClaimRetentionPolicy") or {}
            if retention.get("whenDeleted") == "Delete":  # the set's deletion takes the claim
                body["metadata"]["ownerReferences"] = [owner_reference(sts)]
            if self.writer.create(CLAIMS, namespace, body) is not None:
                self.events.normal(sts, "SuccessfulCreate",
                                   f"create Claim {claim_name} Pod {name}-{ordinal} in "
                                   f"StatefulSet {name} success")
        pod["spec"]["volumes"] = volumes

    def _template_of(self, sts: Json, revision: str) -> Json | None:
        for r in self.revisions.owned(sts):
            if meta(r)["name"] == revision:
                template = copy.deepcopy(((r.get("data") or {}).get("spec") or {}).get(
                    "template") or {})
                template.pop("$patch", None)
                return template
        return None

    def _delete(self, sts: Json, pod: Json) -> None:
        if self.writer.delete(PODS, pod):
            self.events.normal(sts, "SuccessfulDelete",
                               f"delete Pod {meta(pod)['name']} in StatefulSet "
                               f"{meta(sts)['name']} successful")

    # --- status --------------------------------------------------------------------------

    def _write_status(self, sts: Json, pods: list[Json], current: str,
                      update: str) -> float | None:
        spec = sts.get("spec") or {}
        min_ready = int(spec.get("minReadySeconds") or 0)
        now = datetime.now(UTC)
        replicas = ready = available = currents = updated = 0
        wake: float | None = None
        for pod in pods:
            created = bool((pod.get("status") or {}).get("phase"))
            replicas += created
            if pod_phase(pod) == "Running" and pod_ready(pod):
                ready += 1
                ok, left = available_since(pod, min_ready, now)
                available += ok
                if left is not None:
                    wake = left if wake is None else min(wake, left)
            if created and not terminating(pod):
                revision = (meta(pod).get("labels") or {}).get(REVISION_LABEL)
                currents += revision == current
                updated += revision == update
        strategy = (spec.get("updateStrategy") or {}).get("type", "RollingUpdate")
        if strategy == "RollingUpdate" and updated == replicas and ready == replicas:
            current, currents = update, updated
        status: Json = {"observedGeneration": meta(sts).get("generation", 1),
                        "replicas": replicas}
        for field_name, value in (("readyReplicas", ready), ("currentReplicas", currents),
                                  ("updatedReplicas", updated)):
            if value:
                status[field_name] = value
        status.update({"currentRevision": current, "updateRevision": update,
                       "collisionCount": int((sts.get("status") or {}).get(
                           "collisionCount") or 0),
                       "availableReplicas": available})
        self.writer.update_status(STATEFUL_SETS, sts, status)
        return wake
