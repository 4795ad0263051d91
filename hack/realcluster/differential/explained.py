"""The differences the suite knows of, in two tables (case id -> why).

`EXPLAINED`: Kubernetes changed after 1.20 and the local server follows current Kubernetes;
each entry names the change. `OPEN`: the local server deviates from Kubernetes (1.20 and
current alike) and nobody has fixed it yet; each entry says what is missing, so that the suite
stays green while the list is worked off, and the report counts them apart. A case that answers
alike again is reported as stale so that its entry can go.
"""

from __future__ import annotations

_FIELD_ERRORS = ("after 1.20, apimachinery's label selector parser reports invalid keys and "
                 "values as field errors (`<nil>: Invalid value: ...`, `values[0][key]: ...`) "
                 "instead of `invalid label key/value` text")
_WEBHOOK_CALL = ("after 1.20, the admission webhook dispatchers wrap a failed call as "
                 "`failed to call webhook: <error>` (ErrCallingWebhook's Reason)")

_CRD_ERRORS = ("after 1.20, custom resource schema errors keep kube-openapi's kind: a wrong "
               "type is FieldValueTypeInvalid, maxLength and maxItems are field.TooLong and "
               "TooMany (`Too long: may not be more than 8 bytes`, `Too many: 3: must have "
               "at most 2 items`), and array items are named by index (`spec.tags[0]`) where "
               "1.20 said FieldValueInvalid, `should be at most 8 chars long` and `spec.tags`")

EXPLAINED: dict[str, str] = {
    "labels-bad-key": _FIELD_ERRORS,
    "labels-bad-value": _FIELD_ERRORS,
    "watch-rv-match-refused": (
        "1.27 (WatchList, KEP-3157): resourceVersionMatch is allowed on a watch with "
        "sendInitialEvents, and the refusal says `... forbidden for watch unless "
        "sendInitialEvents is provided`"),
    "webhook-unreachable-fail": _WEBHOOK_CALL,
    "webhook-mutating-unreachable-fail": _WEBHOOK_CALL,
    "field-manager-too-long": (
        "after 1.20, field.TooLong words its message `may not be more than N bytes` "
        "instead of `must have at most N bytes`"),
    **{case: (
        "after 1.20, an apply that changes nothing in the object (here: a second manager "
        "applying the same value) no longer stamps a time on the applier's managedFields "
        "entry (structured-merge-diff answers a no-op with no object and the updater stamps "
        "only then); 1.20 stamps it, so the time-ordered entries come in another order")
       for case in ("apply-shared-owner", "apply-drop-shared-field")},
    "table-serviceaccounts": (
        "1.24 stopped generating a token Secret for every ServiceAccount "
        "(LegacyServiceAccountTokenNoAutoGeneration), which 1.20's token controller still adds "
        "and the Secrets column counts; the column's description (the `secrets` field's "
        "documentation) was rewritten then and again in 1.32 (enforce-mountable-secrets "
        "deprecated)"),
    **{case: _CRD_ERRORS for case in (
        "patch-gadget-invalid", "status-gadget-invalid", "gadget-wrong-type",
        "gadget-tags-wrong-item", "gadget-name-too-long", "gadget-tags-too-many",
        "gadget-spec-not-object")},
}

_BUILTIN_VALIDATION = "the local server does not validate this built-in kind's fields yet"
_GO_DECODER = ("the local server's decoding and patch-parsing errors do not reproduce Go's "
               "wording yet: json-iterator's typed decoding (`v1.ConfigMap.Data: ReadString: "
               "...` with its byte context), evanphx/json-patch's and the patch handler's "
               "messages (some of them 500s in 1.20), go-yaml's line errors, and the scheme's "
               "`no kind ... is registered` for a DELETE body naming another kind")

_DEPLOYMENT = ("the local server does not compare container resource requests with their "
               "limits (`must be less than or equal to cpu limit`)")
_WEBHOOK_CONFIG = ("the local server does not validate webhook configurations (URL scheme, "
                   "sideEffects, failurePolicy, timeoutSeconds, admissionReviewVersions); "
                   "hack/localcluster/admission/ is another helper's at the time of writing")

OPEN: dict[str, str] = {
    **{case: _GO_DECODER for case in (
        "cm-kind-mismatch", "cm-apiversion-wrong", "cm-data-not-string", "cm-metadata-not-object",
        "deploy-quantity-bad", "deploy-replicas-string",
        "patch-json-not-list", "patch-json-malformed", "patch-merge-malformed",
        "patch-strategic-malformed", "patch-merge-list", "patch-merge-change-kind",
        "patch-merge-data-int", "apply-bad-yaml", "apply-missing-kind",
        "delete-body-wrong-kind")},
    "cm-binary-not-base64": "the local server does not check that binaryData is base64",
    "secret-data-not-base64": "the local server does not check that a Secret's data is base64",
    "body-yaml-ok": _GO_DECODER + " (`name: y` is the boolean true, as go-yaml v2 reads it)",
    "deploy-resources-limit-below": _DEPLOYMENT,


    **{case: _WEBHOOK_CONFIG for case in (
        "webhook-http-url-refused", "webhook-no-side-effects", "webhook-bad-policy",
        "webhook-timeout-too-long", "webhook-review-version-bad")},
    "rbac-impersonate-group-only": (
        "1.20 answers Impersonate-Group without Impersonate-User with a bare 500; the local "
        "server answers 403 `requested impersonation without impersonating a user`; current "
        "Kubernetes' answer is not verified here"),
}
