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
}

_BUILTIN_VALIDATION = "the local server does not validate this built-in kind's fields yet"
_GO_DECODER = ("the local server's decoding errors do not reproduce Go's json-iterator "
               "messages (`v1.ConfigMap.Data: ReadString: ...`) yet")

OPEN: dict[str, str] = {
}
