"""The DynamoGraphDeploymentRequest's validating webhook: one set of rules on the v1beta1
request for both served versions (`api.validation.request_versions`), each error naming the
field in the version the user wrote (422, all errors in one message), deprecated or
ineffective settings as warnings. A refusal carries its reason for the metrics
(`reconcilers.machinery.denials`).
"""

from __future__ import annotations

from api.kube import Json
from api.validation.request_versions import check_request
from controller.webhook import AdmissionResponse
from reconcilers.machinery.denials import denial_cause

__all__ = ["admit_request"]


def admit_request(obj: Json, old: Json | None, *,
                  namespace_restricted: bool) -> AdmissionResponse:
    """Admit or refuse a create (`old` None) or update of a request in either version."""
    checked = check_request(obj, old, namespace_restricted=namespace_restricted)
    notes = tuple(str(w) for w in checked.warnings)
    if checked.errors:
        return AdmissionResponse.deny("; ".join(str(e) for e in checked.errors), 422,
                                      "Invalid", warnings=notes,
                                      cause=denial_cause(checked.errors))
    return AdmissionResponse.allow(warnings=notes)
