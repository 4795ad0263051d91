"""Admission webhook failures, kept small: a validating webhook nobody serves, with
failurePolicy Fail and Ignore, scoped to the case's own namespace by its label so that no
other case sees it. (The webhooks' calls themselves are another suite's subject.)"""

from __future__ import annotations

from typing import Any

from ..model import Case, case, post
from .paths import CM, cm

CONFIGS = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
MUTATING = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"


def _config(policy: str, *, url: str = "https://127.0.0.1:1/validate",
            kind: str = "ValidatingWebhookConfiguration", **extra: Any) -> dict[str, Any]:
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
            "metadata": {"name": "${ns}-wh"},
            "webhooks": [{"name": "check.differential.example.com",
                          "clientConfig": {"url": url}, "failurePolicy": policy,
                          "sideEffects": "None", "admissionReviewVersions": ["v1"],
                          "timeoutSeconds": 2,
                          "namespaceSelector": {"matchLabels": {
                              "differential.example.com/case": "${ns}"}},
                          "rules": [{"apiGroups": [""], "apiVersions": ["v1"],
                                     "operations": ["CREATE"], "resources": ["configmaps"]}],
                          **extra}]}


def _refused() -> Any:
    return {"until": lambda a: a.code != 201, "within": 10.0}


CASES: list[Case] = [
    case("webhook-unreachable-fail", post(CONFIGS, _config("Fail")),
         post(CM, cm("a"), **_refused())),
    case("webhook-unreachable-ignore", post(CONFIGS, _config("Ignore")),
         post(CM, cm("a"))),
    case("webhook-mutating-unreachable-fail",
         post(MUTATING, _config("Fail", kind="MutatingWebhookConfiguration")),
         post(CM, cm("a"), **_refused())),
    case("webhook-http-url-refused", post(CONFIGS, _config("Fail",
                                                           url="http://127.0.0.1:1/x"))),
    case("webhook-no-side-effects", post(CONFIGS, _config("Fail", sideEffects="Some"))),
    case("webhook-bad-policy", post(CONFIGS, _config("Sometimes"))),
    case("webhook-timeout-too-long", post(CONFIGS, _config("Fail", timeoutSeconds=60))),
    case("webhook-review-version-bad",
         post(CONFIGS, _config("Fail", admissionReviewVersions=["v9"]))),
]
