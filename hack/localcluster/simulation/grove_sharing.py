"""Grove's resource sharing at the PodCliqueScalingGroup level (`resourceSharing` of a scaling
group config, naming the PodCliqueSet's `resourceClaimTemplates`).

Per entry Grove makes ResourceClaims owned by the PodCliqueScalingGroup: one per group replica
j, `<pcsg>-<j>-<template>`, for scope `PerReplica`; one for the whole group,
`<pcsg>-all-<template>`, for `AllReplicas`. The member PodCliques the entry's filter names
(every member without a filter) get each claim in their pod spec: a pod claim of the claim's
name pointing at it (`resourceClaimName`), and a reference to it in every container and init
container, so all of them reach the devices.
"""

from __future__ import annotations

import copy
from typing import Any

Json = dict[str, Any]

__all__ = ["claim_body", "group_claims", "group_config", "inject", "wanted_claims"]


def group_config(pcs: Json | None, pcsg_name: str) -> Json:
    """The scaling group config of the PodCliqueSet that made `pcsg_name` ({} if none)."""
    if pcs is None:
        return {}
    name = pcs["metadata"]["name"]
    template = (pcs.get("spec") or {}).get("template") or {}
    for config in template.get("podCliqueScalingGroups") or template.get(
            "podCliqueScalingGroupConfigs") or ():
        suffix = f"-{config.get('name')}"
        if pcsg_name.startswith(f"{name}-") and pcsg_name.endswith(suffix) and pcsg_name[
                len(name) + 1:-len(suffix)].isdigit():
            found: Json = config
            return found
    return {}


def _claim_name(pcsg: str, entry: Json, replica: int) -> str:
    scope = "all" if entry.get("scope") == "AllReplicas" else str(replica)
    return f"{pcsg}-{scope}-{entry.get('name')}"


def wanted_claims(pcsg: str, config: Json, replica: int, clique: str) -> list[str]:
    """The claims the pods of member `clique` in group replica `replica` get."""
    names = []
    for entry in config.get("resourceSharing") or ():
        members = ((entry.get("filter") or {}).get("childCliqueNames"))
        if members is not None and clique not in members:
            continue
        names.append(_claim_name(pcsg, entry, replica))
    return names


def group_claims(pcsg: str, config: Json, replicas: int) -> dict[str, str]:
    """Every claim the group's entries make for `replicas` replicas -> its template's name."""
    claims: dict[str, str] = {}
    for entry in config.get("resourceSharing") or ():
        for replica in range(replicas):
            claims[_claim_name(pcsg, entry, replica)] = str(entry.get("name"))
    return claims


def claim_body(pcs: Json, pcsg: Json, claim: str, template_name: str) -> Json | None:
    """The ResourceClaim `claim` from the PodCliqueSet's template `template_name`, owned by
    the scaling group (the caller adds the owner); None without such a template."""
    templates = {t.get("name"): t for t in ((pcs.get("spec") or {}).get("template") or {}).get(
        "resourceClaimTemplates") or ()}
    template = templates.get(template_name)
    if template is None:
        return None
    spec = template.get("templateSpec") or {}
    meta: Json = {"name": claim, "namespace": pcsg["metadata"]["namespace"]}
    extra = spec.get("metadata") or {}
    if extra.get("labels"):
        meta["labels"] = dict(extra["labels"])
    if extra.get("annotations"):
        meta["annotations"] = dict(extra["annotations"])
    return {"metadata": meta, "spec": copy.deepcopy(spec.get("spec") or {})}


def inject(clique_spec: Json, claims: list[str]) -> None:
    """Give the clique's pods `claims`, in place."""
    pod = clique_spec.setdefault("podSpec", {})
    for claim in claims:
        pod["resourceClaims"] = [*(pod.get("resourceClaims") or []),
                                 {"name": claim, "resourceClaimName": claim}]
        for key in ("containers", "initContainers"):
            for container in pod.get(key) or ():
                resources = container.setdefault("resources", {})
                resources["claims"] = [*(resources.get("claims") or []), {"name": claim}]
