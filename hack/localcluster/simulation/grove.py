"""Grove (grove.io/v1alpha1) controllers for PodCliqueSets and PodCliqueScalingGroups.

A PodCliqueSet `<pcs>` makes, per replica index r, a PodClique `<pcs>-<r>-<clique>` for each
clique outside a scaling group, a PodCliqueScalingGroup `<pcs>-<r>-<group>` for each scaling
group config, and a headless Service `<pcs>-<r>`; a scaling group makes, per its replica j,
PodCliques `<pcsg>-<j>-<clique>`, and the ResourceClaims its `resourceSharing` shares
(`grove_sharing`). Replicas of existing children are left to whoever scales
them (the scale subresource), as Grove does. Status carries what an operator reads: replicas,
availableReplicas, updatedReplicas, observedGeneration, selectors and MinAvailableBreached.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from ..storage import Change
from .clock import rfc3339
from .grove_sharing import claim_body, group_claims, group_config, inject, wanted_claims
from .grove_topology import CLUSTER_TOPOLOGIES, set_levels_condition
from .loop import ControlLoop, Key
from .objects import controller_ref, owner_reference, set_condition, terminating
from .rollout import template_hash
from .writer import CRDS, RESOURCE_CLAIMS, SERVICES

Json = dict[str, Any]

PCS = ("grove.io", "podcliquesets")
PCSG = ("grove.io", "podcliquescalinggroups")
PCLQ = ("grove.io", "podcliques")

MANAGED_BY = "app.kubernetes.io/managed-by"
PART_OF = "app.kubernetes.io/part-of"
COMPONENT = "app.kubernetes.io/component"
PCS_INDEX = "grove.io/podcliqueset-replica-index"
PCSG_LABEL = "grove.io/podcliquescalinggroup"
PCSG_INDEX = "grove.io/podcliquescalinggroup-replica-index"
PCLQ_LABEL = "grove.io/podclique"
POD_INDEX = "grove.io/podclique-pod-index"
TEMPLATE_HASH = "grove.io/pod-template-hash"
GENERATION_HASH = "grove.io/podcliqueset-generation-hash"


def clique_spec(template: Json) -> Json:
    """A PodClique spec from a clique template (minAvailable defaults to replicas)."""
    spec = copy.deepcopy(template.get("spec") or {})
    spec.setdefault("replicas", 1)
    spec.setdefault("minAvailable", spec["replicas"])
    return spec


def clique_hash(spec: Json) -> str:
    return template_hash(spec.get("podSpec") or {})


def _keys(objs: Iterable[Json]) -> list[Key]:
    return [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in objs]


class _GroveLoop(ControlLoop):
    """Shared plumbing: served-ness, child sync, owner mapping."""

    manager = "grove-operator"
    component = "grove-operator"
    resource: tuple[str, str] = PCS
    child_kinds: tuple[str, ...] = ()

    def initial_keys(self) -> Iterable[Key]:
        return _keys(self.writer.list_objects(self.resource)) if self.writer.served(
            self.resource) else []

    def keys_for(self, change: Change) -> Iterable[Key]:
        meta = change.obj["metadata"]
        if change.resource == self.resource:
            return [(meta["namespace"], meta["name"])]
        if change.resource == CRDS and (change.obj.get("spec") or {}).get("group") == "grove.io":
            return self.initial_keys()
        ref = controller_ref(change.obj)
        if ref is not None and ref.get("kind") in self.child_kinds and change.resource in (
                PCLQ, PCSG, SERVICES):
            owner_kind = {PCS: "PodCliqueSet", PCSG: "PodCliqueScalingGroup"}[self.resource]
            if ref.get("kind") == owner_kind:
                return [(meta["namespace"], ref.get("name", ""))]
        return ()

    def sync_clique(self, owner: Json, name: str, spec: Json, labels: dict[str, str],
                    annotations: dict[str, str], existing: Json | None) -> Json | None:
        """Create the PodClique, or bring its template fields (not replicas) up to date."""
        namespace = owner["metadata"]["namespace"]
        labels = {**labels, TEMPLATE_HASH: clique_hash(spec)}
        if existing is None:
            body: Json = {"metadata": {"name": name, "namespace": namespace, "labels": labels,
                                       "ownerReferences": [owner_reference(owner)]},
                          "spec": spec}
            if annotations:
                body["metadata"]["annotations"] = annotations
            return self.writer.create(PCLQ, namespace, body)
        wanted = {**spec, "replicas": (existing.get("spec") or {}).get("replicas",
                                                                        spec["replicas"])}
        meta = existing["metadata"]
        if existing.get("spec") == wanted and all(
                (meta.get("labels") or {}).get(k) == v for k, v in labels.items()) and all(
                (meta.get("annotations") or {}).get(k) == v for k, v in annotations.items()):
            return existing
        body = copy.deepcopy(existing)
        body["spec"] = wanted
        body["metadata"]["labels"] = {**(meta.get("labels") or {}), **labels}
        if annotations:
            body["metadata"]["annotations"] = {**(meta.get("annotations") or {}), **annotations}
        return self.writer.update(PCLQ, body)

    def min_breached(self, conditions: list[Json], breached: bool, now: str, *,
                     reasons: tuple[str, str], message: str) -> None:
        set_condition(conditions, "MinAvailableBreached", "True" if breached else "False", now,
                      reason=reasons[0] if breached else reasons[1], message=message)


class PodCliqueSetController(_GroveLoop):
    """PodCliqueSet -> PodCliques, PodCliqueScalingGroups and headless Services."""

    resource = PCS
    child_kinds = ("PodCliqueSet",)

    def keys_for(self, change: Change) -> Iterable[Key]:
        if change.resource == CLUSTER_TOPOLOGIES:
            return self.initial_keys()  # the topology levels of every PodCliqueSet
        return super().keys_for(change)

    def reconcile(self, key: Key) -> float | None:
        if self.writer.served(PCS) is None or self.writer.served(PCLQ) is None:
            return None
        namespace, name = key
        pcs = self.writer.get(PCS, namespace, name)
        if pcs is None or terminating(pcs):
            return None
        spec = pcs.get("spec") or {}
        template = spec.get("template") or {}
        want = int(spec.get("replicas") or 0)
        generation_hash = template_hash(template)
        groups = template.get("podCliqueScalingGroups") or template.get(
            "podCliqueScalingGroupConfigs") or []
        in_group = {c for g in groups for c in g.get("cliqueNames") or ()}
        cliques = [c for c in template.get("cliques") or () if c.get("name") not in in_group]
        cliques_now = {c["metadata"]["name"]: c for c in self.writer.owned(PCLQ, pcs)}
        groups_now = {g["metadata"]["name"]: g for g in self.writer.owned(PCSG, pcs)}
        wanted_cliques: set[str] = set()
        wanted_groups: set[str] = set()
        base = {MANAGED_BY: "grove-operator", PART_OF: name}
        for r in range(want):
            self._ensure_headless(pcs, r)
            for clique in cliques:
                child = f"{name}-{r}-{clique['name']}"
                wanted_cliques.add(child)
                self.sync_clique(pcs, child, clique_spec(clique), {
                    **(clique.get("labels") or {}), **base, COMPONENT: "pcs-podclique",
                    PCS_INDEX: str(r), GENERATION_HASH: generation_hash},
                    dict(clique.get("annotations") or {}), cliques_now.get(child))
            for group in groups:
                child = f"{name}-{r}-{group['name']}"
                wanted_groups.add(child)
                self._sync_group(pcs, child, group, {
                    **base, COMPONENT: "pcs-podcliquescalinggroup", PCS_INDEX: str(r),
                    GENERATION_HASH: generation_hash}, groups_now.get(child))
        for child_name, clique_obj in cliques_now.items():
            if child_name not in wanted_cliques and not terminating(clique_obj):
                self.writer.delete(PCLQ, clique_obj)
        for child_name, group_obj in groups_now.items():
            if child_name not in wanted_groups and not terminating(group_obj):
                self.writer.delete(PCSG, group_obj)
        return self._write_status(pcs, want, cliques, groups, generation_hash)

    def _sync_group(self, pcs: Json, name: str, config: Json, labels: dict[str, str],
                    existing: Json | None) -> None:
        spec = {"replicas": int(config.get("replicas", 1)),
                "minAvailable": int(config.get("minAvailable", 1)),
                "cliqueNames": list(config.get("cliqueNames") or ())}
        namespace = pcs["metadata"]["namespace"]
        if existing is None:
            self.writer.create(PCSG, namespace, {
                "metadata": {"name": name, "namespace": namespace, "labels": labels,
                             "ownerReferences": [owner_reference(pcs)]},
                "spec": spec})
            return
        spec["replicas"] = (existing.get("spec") or {}).get("replicas", spec["replicas"])
        if existing.get("spec") == spec and all((existing["metadata"].get("labels") or {}).get(
                k) == v for k, v in labels.items()):
            return
        body = copy.deepcopy(existing)
        body["spec"] = spec
        body["metadata"]["labels"] = {**(existing["metadata"].get("labels") or {}), **labels}
        self.writer.update(PCSG, body)

    def _ensure_headless(self, pcs: Json, r: int) -> None:
        namespace, name = pcs["metadata"]["namespace"], pcs["metadata"]["name"]
        svc = f"{name}-{r}"
        if self.writer.get(SERVICES, namespace, svc) is not None:
            return
        self.writer.create(SERVICES, namespace, {
            "metadata": {"name": svc, "namespace": namespace,
                         "labels": {MANAGED_BY: "grove-operator", PART_OF: name,
                                    COMPONENT: "pcs-headless-service", PCS_INDEX: str(r)},
                         "ownerReferences": [owner_reference(pcs)]},
            "spec": {"clusterIP": "None", "publishNotReadyAddresses": True,
                     "selector": {PART_OF: name, PCS_INDEX: str(r)}}})

    def _write_status(self, pcs: Json, want: int, cliques: list[Json], groups: list[Json],
                      generation_hash: str) -> float | None:
        name = pcs["metadata"]["name"]
        namespace = pcs["metadata"]["namespace"]
        available = updated = 0
        for r in range(want):
            children = [self.writer.get(PCLQ, namespace, f"{name}-{r}-{c['name']}")
                        for c in cliques]
            scaling = [self.writer.get(PCSG, namespace, f"{name}-{r}-{g['name']}")
                       for g in groups]
            if any(c is None for c in children) or any(g is None for g in scaling):
                continue
            st = [(c or {}).get("status") or {} for c in children]
            sg = [(g or {}).get("status") or {} for g in scaling]
            if all(int(s.get("readyReplicas") or 0) >= int((c or {})["spec"].get(
                    "minAvailable", 1)) for s, c in zip(st, children, strict=True)) and all(
                    int(s.get("availableReplicas") or 0) >= int((g or {})["spec"].get(
                        "minAvailable", 1)) for s, g in zip(sg, scaling, strict=True)):
                available += 1
            if all(int(s.get("updatedReplicas") or 0) >= int((c or {})["spec"].get(
                    "replicas", 0)) for s, c in zip(st, children, strict=True)) and all(
                    int(s.get("updatedReplicas") or 0) >= int((g or {})["spec"].get(
                        "replicas", 0)) for s, g in zip(sg, scaling, strict=True)):
                updated += 1
        old = pcs.get("status") or {}
        status: Json = {"observedGeneration": pcs["metadata"].get("generation", 1)}
        conditions = copy.deepcopy(old.get("conditions") or [])
        set_levels_condition(conditions, pcs, self.writer, rfc3339())
        if conditions:
            status["conditions"] = conditions
        if want:
            status["replicas"] = want
        status["updatedReplicas"] = updated
        status["availableReplicas"] = available
        status["hpaPodSelector"] = f"{MANAGED_BY}=grove-operator,{PART_OF}={name}"
        status["currentGenerationHash"] = generation_hash
        self.writer.update_status(PCS, pcs, status)
        return None


class PodCliqueScalingGroupController(_GroveLoop):
    """PodCliqueScalingGroup -> one PodClique per member clique per replica."""

    resource = PCSG
    child_kinds = ("PodCliqueScalingGroup",)

    def reconcile(self, key: Key) -> float | None:
        if self.writer.served(PCSG) is None or self.writer.served(PCLQ) is None:
            return None
        namespace, name = key
        pcsg = self.writer.get(PCSG, namespace, name)
        if pcsg is None or terminating(pcsg):
            return None
        ref = controller_ref(pcsg)
        pcs = self.writer.get(PCS, namespace, ref.get("name", "")) if ref else None
        templates = {c.get("name"): c for c in ((pcs or {}).get("spec") or {}).get(
            "template", {}).get("cliques") or ()}
        spec = pcsg.get("spec") or {}
        want = int(spec.get("replicas", 1))
        members = [n for n in spec.get("cliqueNames") or () if n in templates]
        labels = pcsg["metadata"].get("labels") or {}
        existing = {c["metadata"]["name"]: c for c in self.writer.owned(PCLQ, pcsg)}
        config = group_config(pcs, name)
        self._sync_claims(pcs, pcsg, config, want)
        wanted: set[str] = set()
        for j in range(want):
            for clique_name in members:
                template = templates[clique_name]
                child = f"{name}-{j}-{clique_name}"
                wanted.add(child)
                spec = clique_spec(template)
                inject(spec, wanted_claims(name, config, j, clique_name))
                self.sync_clique(pcsg, child, spec, {
                    **(template.get("labels") or {}),
                    MANAGED_BY: "grove-operator", PART_OF: labels.get(PART_OF, ""),
                    COMPONENT: "pcsg-podclique", PCS_INDEX: labels.get(PCS_INDEX, "0"),
                    PCSG_LABEL: name, PCSG_INDEX: str(j),
                    GENERATION_HASH: labels.get(GENERATION_HASH, "")},
                    dict(template.get("annotations") or {}), existing.get(child))
        for child_name, clique_obj in existing.items():
            if child_name not in wanted and not terminating(clique_obj):
                self.writer.delete(PCLQ, clique_obj)
        return self._write_status(pcsg, want, members)

    def _sync_claims(self, pcs: Json | None, pcsg: Json, config: Json, want: int) -> None:
        """The group's shared ResourceClaims (`grove_sharing`): made for its replicas, those
        of replicas scaled away deleted."""
        if pcs is None or self.writer.served(RESOURCE_CLAIMS) is None:
            return
        namespace = pcsg["metadata"]["namespace"]
        claims = group_claims(pcsg["metadata"]["name"], config, want)
        owned = {c["metadata"]["name"]: c for c in self.writer.owned(RESOURCE_CLAIMS, pcsg)}
        for claim, template_name in claims.items():
            if claim in owned:
                continue
            body = claim_body(pcs, pcsg, claim, template_name)
            if body is not None:
                body["metadata"]["ownerReferences"] = [owner_reference(pcsg)]
                self.writer.create(RESOURCE_CLAIMS, namespace, body)
        for claim, obj in owned.items():
            if claim not in claims and not terminating(obj):
                self.writer.delete(RESOURCE_CLAIMS, obj)

    def _write_status(self, pcsg: Json, want: int, members: list[str]) -> float | None:
        name = pcsg["metadata"]["name"]
        namespace = pcsg["metadata"]["namespace"]
        available = scheduled = updated = 0
        for j in range(want):
            cliques = [self.writer.get(PCLQ, namespace, f"{name}-{j}-{m}") for m in members]
            if not cliques or any(c is None for c in cliques):
                continue
            pairs = [((c or {}).get("spec") or {}, (c or {}).get("status") or {})
                     for c in cliques]
            if all(int(s.get("readyReplicas") or 0) >= int(sp.get("minAvailable", 1))
                   for sp, s in pairs):
                available += 1
            if all(int(s.get("scheduledReplicas") or 0) >= int(sp.get("minAvailable", 1))
                   for sp, s in pairs):
                scheduled += 1
            if all(int(s.get("updatedReplicas") or 0) >= int(sp.get("replicas", 0))
                   for sp, s in pairs):
                updated += 1
        old = pcsg.get("status") or {}
        conditions = copy.deepcopy(old.get("conditions") or [])
        min_available = int((pcsg.get("spec") or {}).get("minAvailable", 1))
        self.min_breached(
            conditions, available < min_available, rfc3339(),
            reasons=("InsufficientAvailablePodCliqueScalingGroupReplicas",
                     "SufficientAvailablePodCliqueScalingGroupReplicas"),
            message=f"Expected at least {min_available} available replicas, found {available}")
        status: Json = {"observedGeneration": pcsg["metadata"].get("generation", 1)}
        if want:
            status["replicas"] = want
        status.update({"scheduledReplicas": scheduled, "availableReplicas": available,
                       "updatedReplicas": updated, "selector": f"{PCSG_LABEL}={name}",
                       "conditions": conditions})
        self.writer.update_status(PCSG, pcsg, status)
        return None
