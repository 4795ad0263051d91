"""The differences the suite accepts (case id -> why): `EXPLAINED`, where Kubernetes changed
after 1.20 and the local server follows current Kubernetes; each entry names the change, checked
against Kubernetes' source. Any other difference is a deviation of the local server and fails
the suite; a case here that answers alike again is reported as stale, so that its entry can go.
"""

from __future__ import annotations

_FIELD_ERRORS = ("after 1.20, apimachinery's label selector parser validates keys and values "
                 "with field errors (validateLabelKey and validateLabelValue in "
                 "pkg/labels/selector.go return field.Invalid; the key's has no path, so it "
                 "reads `<nil>: Invalid value: ...`, a value's `values[0][key]: ...`) where "
                 "1.20 wrote `invalid label key/value` text")
_WEBHOOK_CALL = ("after 1.20, the admission webhook dispatchers wrap a failed call as "
                 "`failed to call webhook: <error>` (ErrCallingWebhook's Reason)")

_CRD_ERRORS = ("after 1.20, custom resource schema errors keep kube-openapi's kind "
               "(kubeOpenAPIResultToFieldErrors in apiextensions-apiserver's "
               "pkg/apiserver/validation: a wrong type is field.TypeInvalid, maxLength and "
               "maxItems are field.TooLong and field.TooMany, so `Too long: may not be more than "
               "8 bytes` (TooLong's 1.33 wording, kubernetes#128553) and `Too many: 3: must "
               "have at most 2 items`), and array items are named by index (`spec.tags[0]`) "
               "where 1.20 said FieldValueInvalid, `should be at most 8 chars long` and "
               "`spec.tags`")
_JSON_DECODER = ("1.23 replaced json-iterator with sigs.k8s.io/json, a fork of encoding/json "
                 "(kubernetes#105030): a body that does not decode is refused in encoding/json's "
                 "words (`json: cannot unmarshal number into Go struct field ConfigMap.data of "
                 "type string`, `illegal base64 data at input byte 0`, a Quantity's own error) "
                 "instead of json-iterator's (`v1.ConfigMap.Data: ReadString: ...` with its byte "
                 "context); the local server follows the current words")
_STRICT_PATCH = ("server-side field validation (KEP-2885; fieldValidation defaults to Warn, on "
                 "by default from 1.25) makes the patch handler decode a JSON or merge patch "
                 "strictly before applying it, refused as `error decoding patch: <encoding/json's "
                 "error>` (400), where 1.20 reached jsonpatch's DecodePatch (`... into Go value of "
                 "type jsonpatch.Patch`, `unexpected end of JSON input`) or the merge (a 500 "
                 "`Invalid JSON Patch`)")

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
        "1.33 merged field.TooLong with TooLongMaxLength (kubernetes#128553): TooLong says "
        "`may not be more than N bytes` where 1.20 said `must have at most N bytes`"),
    **{case: (
        "current kube-apiserver does not stamp a time on the managedFields entry of an apply "
        "that changes nothing in the object (here: a second manager applying the same value): "
        "managedFieldsUpdater.Apply stamps only when the apply returns an object, and "
        "structured-merge-diff's Updater returns none for a no-op unless ReturnInputOnNoop is "
        "set, which the field manager leaves unset; entries sort by time, so the untimed one "
        "comes first. 1.20 stamped it (the real server's answer); the change after 1.20 that "
        "stopped it is not pinned down here")
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
    **{case: _JSON_DECODER for case in (
        "cm-kind-mismatch", "cm-data-not-string", "cm-metadata-not-object",
        "cm-binary-not-base64", "secret-data-not-base64", "deploy-quantity-bad",
        "deploy-replicas-string", "patch-merge-change-kind", "patch-merge-data-int")},
    "body-yaml-ok": _JSON_DECODER + " (`name: y` is the boolean true, as go-yaml v2 reads it)",
    **{case: _STRICT_PATCH for case in (
        "patch-json-not-list", "patch-json-malformed", "patch-merge-malformed",
        "patch-merge-list")},
    "patch-strategic-malformed": (
        "with server-side field validation (KEP-2885, fieldValidation Warn by default from "
        "1.25) a strategic-merge patch is decoded by sigs.k8s.io/json's UnmarshalStrict, whose "
        "syntax errors are encoding/json's (`unexpected end of JSON input`); 1.20's decoder "
        "said `unexpected EOF`"),
    "deploy-resources-limit-below": (
        "after 1.20, pod validation quotes the limit: `must be less than or equal to cpu limit "
        "of 1` (validateResourceRequirements in pkg/apis/core/validation) where 1.20 said "
        "`must be less than or equal to cpu limit`"),
    "apply-missing-kind": (
        "after 1.20, the field manager's outermost versionCheckManager (k8s.io/apiserver's "
        "fieldmanager, versioncheck.go) refuses an applied object of another group, version or "
        "kind with a 400 `invalid object type: /v1, Kind=`; 1.20 went on to the typed "
        "conversion and answered a 500 `failed to create typed patch object: no corresponding "
        "type for /v1, Kind=`"),
    "mfv-dgd-typed-fields": (
        "1.20's apiextensions-apiserver cannot build the server-side apply models of a CRD with "
        "x-kubernetes-int-or-string fields (`error building openapi models for "
        "dynamographdeployments.nvidia.com: ... divisor has invalid property: anyOf` in its "
        "log, kubernetes#90902) and falls back to the deduced type converter: lists atomic "
        "(`f:components` owned whole), every map with its own `.`; 1.21 builds them "
        "(kubernetes#97172 unfolds int-or-string before stripping value validations), and the "
        "local server uses the CRD's schema (`components` a map-list keyed by name)"),
    "rbac-impersonate-group-only": (
        "current kube-apiserver refuses Impersonate-Group without Impersonate-User with a 400 "
        "BadRequest `requested [{Group  devs    }] without impersonating a user` "
        "(buildImpersonationRequests returns apierrors.NewBadRequest, written with "
        "RespondWithError, in k8s.io/apiserver pkg/endpoints/filters/impersonation/); 1.20's "
        "filter answered the same error with a bare 500 (InternalError)"),
}
