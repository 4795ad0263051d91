"""kube-apiserver's audit log: the policy the test bed asks for, and the events read back.

The audit log is the API server's own record of every request it answered: the user, the
verb and object (`objectRef`), the response code and the authorizer's decision (annotation
`authorization.k8s.io/decision`). A test that must know what a client asked and was granted
reads it here rather than trusting the client's own account. RBAC writes are logged with
their request and response bodies (the rules a Role grants, the role a binding refers to);
everything else with metadata only. The control plane's own components are left out.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

Json = dict[str, Any]

DECISION = "authorization.k8s.io/decision"
RBAC_GROUP = "rbac.authorization.k8s.io"
RBAC_RESOURCES = ["roles", "rolebindings", "clusterroles", "clusterrolebindings"]

#: Stage RequestReceived is left out: every request is logged once it is answered
#: (ResponseComplete), a watch once its response started (ResponseStarted) and again at its end.
POLICY: Json = {
    "apiVersion": "audit.k8s.io/v1",
    "kind": "Policy",
    "omitStages": ["RequestReceived"],
    "rules": [
        {"level": "None", "users": ["system:kube-controller-manager", "system:kube-scheduler",
                                    "system:apiserver"]},
        {"level": "None", "userGroups": ["system:serviceaccounts:kube-system", "system:nodes"]},
        {"level": "RequestResponse", "verbs": ["create", "update", "patch"],
         "resources": [{"group": RBAC_GROUP, "resources": RBAC_RESOURCES}]},
        {"level": "Metadata"},
    ],
}


def write_policy(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(POLICY, sort_keys=False))
    return path


def apiserver_flags(policy: Path, log: Path) -> list[str]:
    """kube-apiserver's flags for a JSON audit log written before each response is sent
    (the blocking mode), so a test reads every request it has had an answer to."""
    return [f"--audit-policy-file={policy}", f"--audit-log-path={log}",
            "--audit-log-format=json", "--audit-log-mode=blocking",
            "--audit-log-maxbackup=0"]


@dataclass(frozen=True)
class AuditEvent:
    """One answered request, as the audit log records it."""

    raw: Json

    @property
    def username(self) -> str:
        return str((self.raw.get("user") or {}).get("username", ""))

    @property
    def user_agent(self) -> str:
        return str(self.raw.get("userAgent", ""))

    @property
    def verb(self) -> str:
        return str(self.raw.get("verb", ""))

    @property
    def object_ref(self) -> Json | None:
        ref = self.raw.get("objectRef")
        return dict(ref) if isinstance(ref, dict) else None

    @property
    def path(self) -> str:
        return str(self.raw.get("requestURI", "")).split("?", 1)[0]

    @property
    def code(self) -> int:
        return int((self.raw.get("responseStatus") or {}).get("code") or 0)

    @property
    def decision(self) -> str:
        """`allow` or `forbid` as the authorizer said; empty when it was not asked."""
        return str((self.raw.get("annotations") or {}).get(DECISION, ""))

    @property
    def response_object(self) -> Json | None:
        obj = self.raw.get("responseObject")
        return dict(obj) if isinstance(obj, dict) else None


def read_events(log: Path) -> list[AuditEvent]:
    """Every answered request in the log, once each (a watch's two stages count once)."""
    seen: dict[str, AuditEvent] = {}
    if not log.exists():
        return []
    for line in log.read_text(errors="replace").splitlines():
        try:
            raw = json.loads(line)
        except ValueError:
            continue  # a line being written
        if not isinstance(raw, dict) or raw.get("stage") == "RequestReceived":
            continue
        audit_id = str(raw.get("auditID", ""))
        # The later stage of a watch has the final code; both carry the decision.
        seen[audit_id] = AuditEvent(raw)
    return list(seen.values())
