"""The pod admission plugins of a default kube-apiserver: ServiceAccount, Priority and
DefaultTolerationSeconds, as they mutate a new pod.

* ServiceAccount: a pod that names no service account runs as `default` (both
  `serviceAccountName` and the deprecated `serviceAccount` are set);
* Priority: a pod without a priorityClassName gets priority 0 (no global default class exists),
  and every pod a preemptionPolicy of PreemptLowerPriority unless it sets one;
* DefaultTolerationSeconds: pods tolerate the not-ready and unreachable NoExecute taints for
  300 s, unless they already tolerate those keys for NoExecute (or every effect).

No token volume is mounted; `service_accounts` checks that the account exists.
"""

from __future__ import annotations

from typing import Any

__all__ = ["DEFAULT_TOLERATIONS", "admit_pod"]

Json = dict[str, Any]

#: Tolerations the DefaultTolerationSeconds admission plugin adds to every pod.
DEFAULT_TOLERATIONS = [
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
     "tolerationSeconds": 300},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
     "tolerationSeconds": 300},
]


def admit_pod(pod: Json) -> None:
    """Give a new pod its service account, priority and default tolerations."""
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        return
    account = spec.get("serviceAccountName") or spec.get("serviceAccount") or "default"
    spec["serviceAccountName"] = spec["serviceAccount"] = account
    if not spec.get("priorityClassName"):
        spec.setdefault("priority", 0)
    spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
    tolerations = spec.setdefault("tolerations", [])
    if isinstance(tolerations, list):
        keys = {t.get("key") for t in tolerations if isinstance(t, dict)
                and t.get("effect") in (None, "", "NoExecute")}
        tolerations.extend(dict(t) for t in DEFAULT_TOLERATIONS if t["key"] not in keys)
