"""Small readers and builders of Kubernetes objects in JSON shape, shared by the controllers.

Owner references, conditions that keep their transition time, pod readiness and the
random name suffixes `generateName` and the workload controllers use.
"""

from __future__ import annotations

import copy
import random
from typing import Any

Json = dict[str, Any]

_SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def meta(obj: Json) -> Json:
    m = obj.get("metadata")
    return m if isinstance(m, dict) else {}


def name_of(obj: Json) -> str:
    return str(meta(obj).get("name", ""))


def namespace_of(obj: Json) -> str:
    return str(meta(obj).get("namespace", ""))


def labels_of(obj: Json) -> dict[str, str]:
    return dict(meta(obj).get("labels") or {})


def annotations_of(obj: Json) -> dict[str, str]:
    return dict(meta(obj).get("annotations") or {})


def terminating(obj: Json) -> bool:
    return bool(meta(obj).get("deletionTimestamp"))


def controller_ref(obj: Json) -> Json | None:
    for ref in meta(obj).get("ownerReferences") or ():
        if isinstance(ref, dict) and ref.get("controller"):
            return ref
    return None


def controlled_by(obj: Json, owner: Json) -> bool:
    ref = controller_ref(obj)
    return ref is not None and ref.get("uid") == meta(owner).get("uid")


def owner_reference(owner: Json) -> Json:
    """A controller reference to `owner` that blocks its foreground deletion, as controllers set."""
    m = meta(owner)
    return {"apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": m["name"],
            "uid": m["uid"], "controller": True, "blockOwnerDeletion": True}


def random_suffix(n: int = 5, rng: random.Random | None = None) -> str:
    r = rng or random
    return "".join(r.choice(_SUFFIX_ALPHABET) for _ in range(n))


def safe_encode(text: str) -> str:
    """Map characters onto the vowel-free alphabet, as rand.SafeEncodeString does for hashes."""
    return "".join(_SUFFIX_ALPHABET[ord(c) % len(_SUFFIX_ALPHABET)] for c in text)


def fnv32a(data: bytes) -> int:
    h = 0x811C9DC5
    for b in data:
        h ^= b
        h = (h * 0x01000193) & 0xFFFFFFFF
    return h


# --- conditions ----------------------------------------------------------------------------

def condition(conditions: list[Json] | None, ctype: str) -> Json | None:
    for c in conditions or ():
        if isinstance(c, dict) and c.get("type") == ctype:
            return c
    return None


def condition_true(conditions: list[Json] | None, ctype: str) -> bool:
    c = condition(conditions, ctype)
    return c is not None and c.get("status") == "True"


def set_condition(conditions: list[Json], ctype: str, status: str, now: str, *,
                  reason: str | None = None, message: str | None = None,
                  update_time: bool = False, probe_time: bool = False,
                  extra: Json | None = None) -> list[Json]:
    """Set one condition in place; `lastTransitionTime` changes only when the status does.

    `update_time` adds `lastUpdateTime` (Deployments), `probe_time` adds a null
    `lastProbeTime` (Pods and Jobs carry it).
    """
    old = condition(conditions, ctype)
    new: Json = {"type": ctype, "status": status}
    if probe_time:
        new["lastProbeTime"] = old.get("lastProbeTime") if old else None
    if update_time:
        same = old is not None and old.get("status") == status and old.get(
            "reason") == reason and old.get("message") == message
        new["lastUpdateTime"] = old.get("lastUpdateTime", now) if same and old else now
    new["lastTransitionTime"] = (old.get("lastTransitionTime", now)
                                 if old is not None and old.get("status") == status else now)
    if reason is not None:
        new["reason"] = reason
    if message is not None:
        new["message"] = message
    if extra:
        new.update(extra)
    if old is None:
        conditions.append(new)
    else:
        conditions[conditions.index(old)] = new
    return conditions


def touch_condition(conditions: list[Json], ctype: str, now: str) -> None:
    """Refresh a condition's lastUpdateTime (a Deployment that made progress)."""
    c = condition(conditions, ctype)
    if c is not None:
        conditions[conditions.index(c)] = {**c, "lastUpdateTime": now}


# --- pods ----------------------------------------------------------------------------------

def pod_ready(pod: Json) -> bool:
    return condition_true((pod.get("status") or {}).get("conditions"), "Ready")


def pod_active(pod: Json) -> bool:
    """Not terminating and not finished: what ReplicaSets and Jobs count as theirs."""
    phase = (pod.get("status") or {}).get("phase")
    return not terminating(pod) and phase not in ("Succeeded", "Failed")


def pod_phase(pod: Json) -> str:
    return str((pod.get("status") or {}).get("phase") or "Pending")


def pod_from_template(template: Json, *, namespace: str, owner: Json, name: str = "",
                      generate_name: str = "", labels: dict[str, str] | None = None,
                      annotations: dict[str, str] | None = None) -> Json:
    """A Pod body from a pod template, owned by `owner` (the way controllers build them)."""
    tmeta = template.get("metadata") or {}
    pod_meta: Json = {"namespace": namespace,
                      "labels": {**(tmeta.get("labels") or {}), **(labels or {})},
                      "ownerReferences": [owner_reference(owner)]}
    if name:
        pod_meta["name"] = name
    else:
        pod_meta["generateName"] = generate_name
    merged_annotations = {**(tmeta.get("annotations") or {}), **(annotations or {})}
    if merged_annotations:
        pod_meta["annotations"] = merged_annotations
    if tmeta.get("finalizers"):
        pod_meta["finalizers"] = list(tmeta["finalizers"])
    return {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta,
            "spec": copy.deepcopy(template.get("spec") or {})}


def int_or_percent(value: Any, total: int, round_up: bool) -> int:
    """intstr.GetScaledValueFromIntOrPercent."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    text = str(value or "0")
    if text.endswith("%"):
        pct = int(text[:-1] or 0)
        scaled = pct * total
        return -(-scaled // 100) if round_up else scaled // 100
    return int(text)
