"""Why an admission webhook refused a write, as one machine word: the `reason` label of
`dynamo_operator_webhook_denials_total`.

The original's page names `immutable_field_changed` and `invalid_config`; its code files every
other refusal under the category of the error (`categorizeError`: `forbidden`, `bad_request`,
`internal`...), and those words are used here for the rest:

- `immutable_field_changed`: an update changes what may not change (backendFramework, a
  DynamoModel's type and base model, a request's spec once profiling started, a v1beta1
  component's `type`). The rules word every such error "immutable".
- `forbidden`: a requester that may not make this change (replicas a scaling adapter owns,
  changed by anyone but the operator or a Planner).
- `invalid_config`: any other rule.
- `bad_request` (a review without an object) and `internal` (the handler failed: refused
  with 500) are decided where they happen, not from field errors.

The message the user reads is the errors' own; the word is carried beside it
(`AdmissionResponse.cause`) and never sent.
"""

from __future__ import annotations

from collections.abc import Iterable

from api.errors import FieldError

__all__ = ["BAD_REQUEST", "FORBIDDEN", "IMMUTABLE_FIELD_CHANGED", "INTERNAL", "INVALID_CONFIG",
           "denial_cause"]

IMMUTABLE_FIELD_CHANGED = "immutable_field_changed"
FORBIDDEN = "forbidden"
INVALID_CONFIG = "invalid_config"
BAD_REQUEST = "bad_request"
INTERNAL = "internal"


def denial_cause(errors: Iterable[FieldError]) -> str:
    """The reason of a refusal for these errors: an immutable field changed before a
    forbidden change before any other invalid configuration."""
    causes = {_cause(e) for e in errors}
    for cause in (IMMUTABLE_FIELD_CHANGED, FORBIDDEN):
        if cause in causes:
            return cause
    return INVALID_CONFIG


def _cause(error: FieldError) -> str:
    message = error.message.lower()
    if "immutable" in message:
        return IMMUTABLE_FIELD_CHANGED
    if error.path.endswith(".replicas") and "scaling adapter is enabled" in message:
        return FORBIDDEN
    return INVALID_CONFIG
