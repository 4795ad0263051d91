"""What apiextensions-apiserver checks and defaults in a CRD's `spec.conversion`.

Validation runs on the internal type, so the paths name its fields: the v1 `webhook.clientConfig`
is `spec.conversion.webhookClientConfig`, and `webhook.conversionReviewVersions` is
`spec.conversion.conversionReviewVersions`. The v1 defaulting gives a Service reference port
443.
"""

from __future__ import annotations

import json
from typing import Any

from ..errors import Cause, forbidden, invalid, required, unsupported
from ..name_validation import dns1035_label_errors
from ..webhook_client_config import client_config_errors

Json = dict[str, Any]

__all__ = ["apply_conversion_defaults", "conversion_errors"]

_ACCEPTED_REVIEW_VERSIONS = ("v1", "v1beta1")


def apply_conversion_defaults(spec: Json) -> None:
    conversion = spec.get("conversion")
    if not isinstance(conversion, dict):
        return
    config = (conversion.get("webhook") or {}).get("clientConfig")
    service = config.get("service") if isinstance(config, dict) else None
    if isinstance(service, dict):
        service.setdefault("port", 443)


def conversion_errors(spec: Json) -> list[Cause]:
    """validateCustomResourceConversion, plus the preserveUnknownFields rule on it."""
    conversion = spec.get("conversion")
    if not isinstance(conversion, dict):
        return []
    path = "spec.conversion"
    errors: list[Cause] = []
    strategy = conversion.get("strategy") or ""
    if strategy and strategy != "None" and spec.get("preserveUnknownFields") is True:
        errors.append(invalid(f"{path}.strategy", strategy,
                              "must be None if spec.preserveUnknownFields is true"))
    if not strategy:
        errors.append(required(f"{path}.strategy"))
    elif strategy not in ("None", "Webhook"):
        errors.append(unsupported(f"{path}.strategy", strategy, ["None", "Webhook"]))
    webhook = conversion.get("webhook")
    webhook = webhook if isinstance(webhook, dict) else {}
    config = webhook.get("clientConfig")
    versions = webhook.get("conversionReviewVersions") or []
    if strategy != "Webhook":
        if config is not None:
            errors.append(forbidden(f"{path}.webhookClientConfig",
                                    "should not be set when strategy is not set to Webhook"))
        if versions:
            errors.append(forbidden(f"{path}.conversionReviewVersions",
                                    "should not be set when strategy is not set to Webhook"))
        return errors
    if not isinstance(config, dict):
        errors.append(Cause("FieldValueRequired", "Required value: required when strategy is "
                            "set to Webhook", f"{path}.webhookClientConfig"))
    else:
        errors.extend(client_config_errors(config, f"{path}.webhookClientConfig"))
    errors.extend(_review_version_errors(versions, f"{path}.conversionReviewVersions"))
    return errors


def _review_version_errors(versions: list[Any], path: str) -> list[Cause]:
    """validateConversionReviewVersions (a recognized version required, as on create)."""
    if not versions:
        return [required(path)]
    errors: list[Cause] = []
    seen: set[str] = set()
    for i, version in enumerate(versions):
        version = str(version)
        if version in seen:
            errors.append(invalid(f"{path}[{i}]", version, "duplicate version"))
            continue
        seen.add(version)
        errors.extend(invalid(f"{path}[{i}]", version, failure)
                      for failure in dns1035_label_errors(version))
    if not seen & set(_ACCEPTED_REVIEW_VERSIONS):
        listed = ", ".join(json.dumps(str(v)) for v in versions)
        errors.append(Cause("FieldValueInvalid", f"Invalid value: []string{{{listed}}}: must "
                            f"include at least one of {', '.join(_ACCEPTED_REVIEW_VERSIONS)}",
                            path))
    return errors
