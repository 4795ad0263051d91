"""API approval of CRDs in protected groups (`k8s.io`, `kubernetes.io` and their subdomains).

apiextensions-apiserver's rules (`apihelpers.GetAPIApprovalState`, `validateAPIApproval`,
the apiapproval controller):

* a CRD whose group is protected must carry the annotation `api-approved.kubernetes.io`: a URL
  (with scheme and host) of the approving pull request, or a reason starting `unapproved`;
* a v1 create without the annotation is 422 Invalid (Required on
  `metadata.annotations[api-approved.kubernetes.io]`), one with another value Invalid; an
  update is checked only when it changes the approval state;
* the CRD's condition KubernetesAPIApprovalPolicyConformant says which: True
  ApprovedAnnotation (a URL) or False UnapprovedAnnotation (`unapproved...`; a state that only
  an older, pre-check CRD can have as Missing or Invalid).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from .errors import Cause
from .go_format import go_quote

Json = dict[str, Any]
ANNOTATION = "api-approved.kubernetes.io"
CONDITION = "KubernetesAPIApprovalPolicyConformant"
_FIELD = f"metadata.annotations[{ANNOTATION}]"
_ENHANCEMENT = "see https://github.com/kubernetes/enhancements/pull/1111"

INVALID, APPROVED, BYPASSED, MISSING = "Invalid", "Approved", "Bypassed", "Missing"


def is_protected(group: str) -> bool:
    """IsProtectedCommunityGroup."""
    return group in ("k8s.io", "kubernetes.io") or group.endswith((".k8s.io", ".kubernetes.io"))


def approval_state(annotations: Any) -> tuple[str, str]:
    """GetAPIApprovalState: the state and its reason (the condition's message)."""
    value = str((annotations or {}).get(ANNOTATION, "")) if isinstance(
        annotations, dict) else ""
    if not value:
        return MISSING, (f"protected groups must have approval annotation"
                         f" {go_quote(ANNOTATION)}, {_ENHANCEMENT}")
    if value.startswith("unapproved"):
        return BYPASSED, f"not approved: {go_quote(value)}"
    if _is_request_uri_with_host(value):
        return APPROVED, f"approved in {value}"
    return INVALID, (f"protected groups must have approval annotation {go_quote(ANNOTATION)}"
                     f' with either a URL or a reason starting with "unapproved", {_ENHANCEMENT}')


def _is_request_uri_with_host(value: str) -> bool:
    """url.ParseRequestURI succeeds and the URL has a scheme and a host."""
    if any(ch.isspace() or ord(ch) < 0x20 for ch in value):
        return False
    try:
        parts = urlsplit(value)
    except ValueError:
        return False
    return bool(parts.scheme and parts.netloc)


def validation_errors(crd: Json, old: Json | None) -> list[Cause]:
    """validateAPIApproval for a v1 write."""
    group = str((crd.get("spec") or {}).get("group") or "")
    if not is_protected(group):
        return []
    annotations = (crd.get("metadata") or {}).get("annotations")
    state, reason = approval_state(annotations)
    if old is not None and approval_state(
            (old.get("metadata") or {}).get("annotations"))[0] == state:
        return []
    if state == MISSING:
        return [Cause("FieldValueRequired", f"Required value: {reason}", _FIELD)]
    if state == INVALID:
        value = str((annotations or {}).get(ANNOTATION, ""))
        return [Cause("FieldValueInvalid", f"Invalid value: {go_quote(value)}: {reason}",
                      _FIELD)]
    return []


def condition(crd: Json) -> Json | None:
    """The KubernetesAPIApprovalPolicyConformant condition (without its time); None for a
    group that is not protected."""
    if not is_protected(str((crd.get("spec") or {}).get("group") or "")):
        return None
    state, reason = approval_state((crd.get("metadata") or {}).get("annotations"))
    status, why = {APPROVED: ("True", "ApprovedAnnotation"),
                   BYPASSED: ("False", "UnapprovedAnnotation"),
                   MISSING: ("False", "MissingAnnotation")}.get(
        state, ("False", "InvalidAnnotation"))
    return {"type": CONDITION, "status": status, "reason": why, "message": reason}


__all__ = ["ANNOTATION", "CONDITION", "approval_state", "condition", "is_protected",
           "validation_errors"]
