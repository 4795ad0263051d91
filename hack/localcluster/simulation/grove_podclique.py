"""The Grove PodClique controller: `spec.replicas` pods of `spec.podSpec`, and their counts.

Pods are `<pclq>-<random>` with a stable pod index (label `grove.io/podclique-pod-index`,
hostname `<pclq>-<index>` under the replica's headless Service) and the GROVE_* environment
variables. A changed podSpec replaces outdated pods one at a time once the rest are ready
(RollingRecreate). Status: replicas, readyReplicas, updatedReplicas, scheduledReplicas,
scheduleGatedReplicas, hpaPodSelector, observedGeneration, MinAvailableBreached and
PodCliqueScheduled.
"""

from __future__ import annotations

import copy
from typing import Any

from ..storage import Change
from .clock import rfc3339
from .grove import (
    PART_OF,
    PCLQ,
    PCS_INDEX,
    PCSG_INDEX,
    PCSG_LABEL,
    POD_INDEX,
    TEMPLATE_HASH,
    _GroveLoop,
    clique_hash,
)
from .loop import Context, Key
from .objects import condition_true, pod_ready, set_condition, terminating
from .pod_creation import CreateAttempts
from .writer import PODS

Json = dict[str, Any]


class PodCliqueController(_GroveLoop):
    """PodClique -> pods."""

    resource = PCLQ
    child_kinds = ()

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self.creates = CreateAttempts(self.writer, self.delays)

    def keys_for(self, change: Change) -> list[Key]:
        meta = change.obj["metadata"]
        if change.resource == PODS:
            clique = (meta.get("labels") or {}).get("grove.io/podclique")
            return [(meta["namespace"], clique)] if clique else []
        return list(super().keys_for(change))

    def reconcile(self, key: Key) -> float | None:
        if self.writer.served(PCLQ) is None:
            return None
        namespace, name = key
        pclq = self.writer.get(PCLQ, namespace, name)
        if pclq is None:
            return None
        spec = pclq.get("spec") or {}
        current = clique_hash(spec)
        pods = [p for p in self.writer.owned(PODS, pclq) if not terminating(p)]
        want = int(spec.get("replicas", 1))
        if not terminating(pclq):
            indexed = sorted(pods, key=_index)
            for pod in indexed[want:][::-1]:  # scale in from the highest index
                self.writer.delete(PODS, pod)
            pods = indexed[:want]
            outdated = [p for p in pods if p["metadata"]["labels"].get(TEMPLATE_HASH) != current]
            if outdated and all(pod_ready(p) for p in pods) and len(pods) == want:
                self.writer.delete(PODS, outdated[0])
                pods.remove(outdated[0])
            taken = {_index(p) for p in pods}
            free = (i for i in range(want + len(taken)) if i not in taken)
            for _ in range(want - len(pods)):
                if not self._create_pod(pclq, next(free), current):
                    break
        self._write_status(pclq, current)
        return self.creates.retry_after(pclq)

    def _create_pod(self, pclq: Json, index: int, current: str) -> bool:
        """Create the pod with index `index`; False when admission refused it."""
        meta = pclq["metadata"]
        name, namespace = meta["name"], meta["namespace"]
        labels = dict(meta.get("labels") or {})
        pcs = labels.get(PART_OF, "")
        replica = labels.get(PCS_INDEX, "0")
        pod_labels = {**labels, "grove.io/podclique": name, POD_INDEX: str(index),
                      TEMPLATE_HASH: current}
        pod_labels.pop("app.kubernetes.io/component", None)
        headless = f"{pcs}-{replica}"
        env = {"GROVE_PCS_NAME": pcs, "GROVE_PCS_INDEX": replica, "GROVE_PCLQ_NAME": name,
               "GROVE_HEADLESS_SERVICE": f"{headless}.{namespace}.svc.cluster.local",
               "GROVE_PCLQ_POD_INDEX": str(index)}
        if labels.get(PCSG_LABEL):
            env["GROVE_PCSG_NAME"] = labels[PCSG_LABEL]
            env["GROVE_PCSG_INDEX"] = labels.get(PCSG_INDEX, "0")
        spec = copy.deepcopy((pclq.get("spec") or {}).get("podSpec") or {})
        spec.setdefault("hostname", f"{name}-{index}")
        spec.setdefault("subdomain", headless)
        for container in spec.get("containers") or ():
            names = {e.get("name") for e in container.get("env") or ()}
            container["env"] = [{"name": k, "value": v} for k, v in env.items()
                                if k not in names] + list(container.get("env") or ())
        body = {"metadata": {"generateName": f"{name}-", "namespace": namespace,
                             "labels": pod_labels,
                             "annotations": dict(meta.get("annotations") or {}),
                             "ownerReferences": [{"apiVersion": pclq["apiVersion"],
                                                  "kind": "PodClique", "name": name,
                                                  "uid": meta["uid"], "controller": True,
                                                  "blockOwnerDeletion": True}]},
                "spec": spec}
        if not body["metadata"]["annotations"]:
            del body["metadata"]["annotations"]
        _, refusal = self.creates.create(pclq, body)
        if refusal is not None:
            self.events.warning(pclq, "PodCreateFailed",
                                f"Error creating pod : {refusal.message}")
            return False
        return True

    def _write_status(self, pclq: Json, current: str) -> float | None:
        spec = pclq.get("spec") or {}
        pods = [p for p in self.writer.owned(PODS, pclq) if not terminating(p)
                and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")]
        ready = sum(1 for p in pods if pod_ready(p))
        scheduled = sum(1 for p in pods if condition_true((p.get("status") or {}).get(
            "conditions"), "PodScheduled"))
        updated = sum(1 for p in pods if p["metadata"]["labels"].get(TEMPLATE_HASH) == current)
        min_available = int(spec.get("minAvailable", spec.get("replicas", 1)))
        old = pclq.get("status") or {}
        now = rfc3339()
        conditions = copy.deepcopy(old.get("conditions") or [])
        self.min_breached(conditions, ready < min_available, now,
                          reasons=("InsufficientReadyPods", "SufficientReadyPods"),
                          message=f"Expected at least {min_available} ready pods, found {ready}")
        ok = scheduled >= min_available
        set_condition(conditions, "PodCliqueScheduled", "True" if ok else "False", now,
                      reason="SufficientScheduledPods" if ok else "InsufficientScheduledPods",
                      message=f"Expected at least {min_available} scheduled pods, found"
                              f" {scheduled}")
        status: Json = {"observedGeneration": pclq["metadata"].get("generation", 1)}
        if pods:
            status["replicas"] = len(pods)
        status.update({"readyReplicas": ready, "updatedReplicas": updated,
                       "scheduleGatedReplicas": 0, "scheduledReplicas": scheduled,
                       "hpaPodSelector": f"grove.io/podclique={pclq['metadata']['name']}",
                       "conditions": conditions, "currentPodTemplateHash": current})
        self.writer.update_status(PCLQ, pclq, status)
        return None


def _index(pod: Json) -> int:
    try:
        return int(pod["metadata"]["labels"].get(POD_INDEX, "0"))
    except ValueError:
        return 0
