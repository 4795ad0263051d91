"""What apiextensions-apiserver checks and defaults in a CRD's `spec.conversion`.

Validation runs on the internal type, so the paths name its fields: the v1 `webhook.clientConfig`
is `spec.conversion.webhookClientConfig`, and `webhook.conversionReviewVersions` is
`spec.conversion.conversionReviewVersions`. The v1 defaulting gives a Service reference port
443.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

from ..errors import Cause, forbidden, invalid, required, unsupported
from ..name_validation import dns1035_label_errors, dns1123_subdomain_errors

Json = dict[str, Any]

__all__ = ["apply_conversion_defaults", "conversion_errors"]

_ACCEPTED_REVIEW_VERSIONS = ("v1", "v1beta1")
_URL_FORM = "; desired format: https://host[/path]"


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
        errors.extend(_client_config_errors(config, f"{path}.webhookClientConfig"))
    errors.extend(_review_version_errors(versions, f"{path}.conversionReviewVersions"))
    return errors


def _client_config_errors(config: Json, path: str) -> list[Cause]:
    url, service = config.get("url"), config.get("service")
    if (url is None) == (service is None):
        return [Cause("FieldValueRequired", "Required value: exactly one of url or service is "
                      "required", path)]
    if url is not None:
        return _url_errors(str(url), f"{path}.url")
    return _service_errors(service if isinstance(service, dict) else {}, f"{path}.service")


def _url_errors(url: str, path: str) -> list[Cause]:
    """ValidateWebhookURL with https forced."""
    try:
        parts = urlsplit(url)
    except ValueError as err:
        return [Cause("FieldValueRequired", f"Required value: url must be a valid URL: {err}"
                      f"{_URL_FORM}", path)]
    errors = []
    if parts.scheme != "https":
        errors.append(invalid(path, parts.scheme,
                              f"'https' is the only allowed URL scheme{_URL_FORM}"))
    if not parts.netloc:
        errors.append(invalid(path, "", f"host must be specified{_URL_FORM}"))
    if "@" in parts.netloc:
        errors.append(invalid(path, parts.netloc.rpartition("@")[0],
                              "user information is not permitted in the URL"))
    if parts.fragment:
        errors.append(invalid(path, parts.fragment, "fragments are not permitted in the URL"))
    if parts.query:
        errors.append(invalid(path, parts.query, "query parameters are not permitted in the URL"))
    return errors


def _service_errors(service: Json, path: str) -> list[Cause]:
    """ValidateWebhookService."""
    errors = []
    if not service.get("name"):
        errors.append(Cause("FieldValueRequired", "Required value: service name is required",
                            f"{path}.name"))
    if not service.get("namespace"):
        errors.append(Cause("FieldValueRequired", "Required value: service namespace is "
                            "required", f"{path}.namespace"))
    port = service.get("port", 443)
    if not isinstance(port, int) or not 1 <= port <= 65535:
        errors.append(invalid(f"{path}.port", port, "port is not valid: must be between 1 and "
                              "65535, inclusive"))
    url_path = service.get("path")
    if not isinstance(url_path, str) or url_path in ("", "/"):
        return errors
    if url_path == "//":
        return [*errors, invalid(f"{path}.path", url_path, "segment[0] may not be empty")]
    if not url_path.startswith("/"):
        errors.append(invalid(f"{path}.path", url_path, "must start with a '/'"))
    steps = url_path[1:]
    steps = steps[:-1] if steps.endswith("/") else steps
    for i, step in enumerate(steps.split("/")):
        if not step:
            errors.append(invalid(f"{path}.path", url_path, f"segment[{i}] may not be empty"))
            continue
        errors.extend(invalid(f"{path}.path", url_path, f"segment[{i}]: {failure}")
                      for failure in dns1123_subdomain_errors(step))
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
