"""kube-controller-manager's resourceclaim controller: claims from templates, and their release.

For each pod claim naming a ResourceClaimTemplate the controller creates a ResourceClaim
(generateName `<pod>-<claim>-`, the template's labels and annotations plus
`resource.kubernetes.io/pod-claim-name`, a controller reference to the pod, the template's
spec) and records it in the pod's `status.resourceClaimStatuses`. A missing template is
retried with back-off (and when templates change).

For each claim it drops the `reservedFor` entries of pods that are gone or finished; a claim
no one reserves any more is deallocated (its allocation cleared, then the scheduler's
finalizer removed), and a claim generated for a pod that is gone or finished is deleted.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from ..storage import DELETED, Change
from .dra_devices import FINALIZER
from .loop import Context, ControlLoop, Key
from .objects import owner_reference, pod_phase, terminating
from .writer import PODS, RESOURCE_CLAIM_TEMPLATES, RESOURCE_CLAIMS

Json = dict[str, Any]

POD_CLAIM_NAME = "resource.kubernetes.io/pod-claim-name"
#: generateName's base is cut to this, both parts in proportion (a 63-character name).
_MAX_BASE = 57


def _pod_done(pod: Json | None, uid: str) -> bool:
    return pod is None or pod["metadata"].get("uid") != uid or pod_phase(pod) in (
        "Succeeded", "Failed")


def generate_name(pod: str, claim: str) -> str:
    base = f"{pod}-{claim}-"
    if len(base) <= _MAX_BASE:
        return base
    return (pod[:len(pod) * _MAX_BASE // len(base)] + "-"
            + claim[:len(claim) * _MAX_BASE // len(base)])


def pod_claim_names(pod: Json) -> list[str]:
    """The ResourceClaims a pod uses: named ones and those generated for it so far."""
    names = [str(c["resourceClaimName"]) for c in (pod.get("spec") or {}).get(
        "resourceClaims") or () if c.get("resourceClaimName")]
    names += [str(s["resourceClaimName"]) for s in (pod.get("status") or {}).get(
        "resourceClaimStatuses") or () if s.get("resourceClaimName")]
    return names


class ResourceClaimController(ControlLoop):
    """Creates claims from templates for pods; releases and deletes claims pods left."""

    manager = "resource-claim-controller"
    component = "resource_claim"

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)

    def initial_keys(self) -> Iterable[Key]:
        keys: list[Key] = []
        for pod in self.writer.list_objects(PODS):
            if (pod.get("spec") or {}).get("resourceClaims"):
                keys.append(("pod", pod["metadata"]["namespace"], pod["metadata"]["name"]))
        if self.writer.served(RESOURCE_CLAIMS):
            keys += [("claim", c["metadata"]["namespace"], c["metadata"]["name"])
                     for c in self.writer.list_objects(RESOURCE_CLAIMS)]
        return keys

    def keys_for(self, change: Change) -> Iterable[Key]:
        meta = change.obj["metadata"]
        if change.resource == RESOURCE_CLAIMS:
            return [("claim", meta["namespace"], meta["name"])]
        if change.resource == RESOURCE_CLAIM_TEMPLATES:
            return [("pod", meta["namespace"], p["metadata"]["name"])
                    for p in self.writer.list_objects(PODS, meta["namespace"])
                    if any(c.get("resourceClaimTemplateName") == meta["name"]
                           for c in (p.get("spec") or {}).get("resourceClaims") or ())]
        if change.resource != PODS or not (change.obj.get("spec") or {}).get("resourceClaims"):
            return ()
        keys: list[Key] = [("claim", meta["namespace"], n) for n in pod_claim_names(change.obj)]
        if change.type != DELETED:
            keys.append(("pod", meta["namespace"], meta["name"]))
        return keys

    def reconcile(self, key: Key) -> float | None:
        kind, namespace, name = key
        if kind == "pod":
            return self._sync_pod(namespace, name)
        self._sync_claim(namespace, name)
        return None

    # --- pods ----------------------------------------------------------------------------

    def _sync_pod(self, namespace: str, name: str) -> float | None:
        pod = self.writer.get(PODS, namespace, name)
        if pod is None or terminating(pod) or pod_phase(pod) in ("Succeeded", "Failed"):
            return None
        statuses = list((pod.get("status") or {}).get("resourceClaimStatuses") or ())
        recorded = {s.get("name") for s in statuses}
        owned = {c["metadata"].get("annotations", {}).get(POD_CLAIM_NAME): c
                 for c in self.writer.owned(RESOURCE_CLAIMS, pod)}
        retry = None
        for pod_claim in (pod.get("spec") or {}).get("resourceClaims") or ():
            template_name = pod_claim.get("resourceClaimTemplateName")
            claim_name = pod_claim.get("name")
            if not template_name or claim_name in recorded:
                continue
            claim = owned.get(claim_name) or self._create_claim(pod, claim_name, template_name)
            if claim is None:
                retry = self.delays.mount_retry
                continue
            statuses.append({"name": claim_name,
                             "resourceClaimName": claim["metadata"]["name"]})
        if len(statuses) != len(recorded):
            status = copy.deepcopy(pod.get("status") or {})
            status["resourceClaimStatuses"] = statuses
            self.writer.update_status(PODS, pod, status)
        return retry

    def _create_claim(self, pod: Json, claim_name: str, template_name: str) -> Json | None:
        namespace = pod["metadata"]["namespace"]
        template = self.writer.get(RESOURCE_CLAIM_TEMPLATES, namespace, template_name)
        if template is None:
            return None
        tmeta = (template.get("spec") or {}).get("metadata") or {}
        meta: Json = {"generateName": generate_name(pod["metadata"]["name"], claim_name),
                      "namespace": namespace,
                      "ownerReferences": [owner_reference({**pod, "apiVersion": "v1",
                                                           "kind": "Pod"})],
                      "annotations": {**(tmeta.get("annotations") or {}),
                                      POD_CLAIM_NAME: claim_name}}
        if tmeta.get("labels"):
            meta["labels"] = dict(tmeta["labels"])
        body = {"metadata": meta,
                "spec": copy.deepcopy((template.get("spec") or {}).get("spec") or {})}
        return self.writer.create(RESOURCE_CLAIMS, namespace, body)

    # --- claims --------------------------------------------------------------------------

    def _sync_claim(self, namespace: str, name: str) -> None:
        claim = self.writer.get(RESOURCE_CLAIMS, namespace, name)
        if claim is None:
            return
        status = claim.get("status") or {}
        reserved = list(status.get("reservedFor") or ())
        valid = [r for r in reserved if r.get("resource") != "pods" or not _pod_done(
            self.writer.get(PODS, namespace, str(r.get("name"))), str(r.get("uid")))]
        if valid != reserved or (not valid and status.get("allocation")):
            new_status = copy.deepcopy(status)
            if valid:
                new_status["reservedFor"] = valid
            else:
                new_status.pop("reservedFor", None)
                new_status.pop("allocation", None)  # no one uses it: deallocate
            updated = self.writer.update_status(RESOURCE_CLAIMS, claim, new_status)
            if updated is None:
                return
            claim = updated
        if valid:
            return
        finalizers = claim["metadata"].get("finalizers") or []
        if FINALIZER in finalizers:
            body = copy.deepcopy(claim)
            body["metadata"]["finalizers"] = [f for f in finalizers if f != FINALIZER]
            claim = self.writer.update(RESOURCE_CLAIMS, body) or claim
        owner = next((r for r in claim["metadata"].get("ownerReferences") or ()
                      if r.get("controller") and r.get("kind") == "Pod"), None)
        if owner is None or not claim["metadata"].get("annotations", {}).get(POD_CLAIM_NAME):
            return
        if not terminating(claim) and _pod_done(
                self.writer.get(PODS, namespace, str(owner.get("name"))), str(owner.get("uid"))):
            self.writer.delete(RESOURCE_CLAIMS, claim)
