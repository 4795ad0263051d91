"""A webhook's `clientConfig` checked as k8s.io/apiserver's shared webhook validation does
(ValidateWebhookURL with https forced, ValidateWebhookService): one set of rules for the
admission webhook configurations and for a CRD's conversion webhook, as in Kubernetes."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from .errors import Cause, invalid
from .name_validation import dns1123_subdomain_errors

Json = dict[str, Any]

__all__ = ["client_config_errors"]

_URL_FORM = "; desired format: https://host[/path]"


def client_config_errors(config: Any, path: str) -> list[Cause]:
    """ValidateWebhookClientConfig: exactly one of url or service, each checked."""
    config = config if isinstance(config, dict) else {}
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
    host = parts.netloc.rpartition("@")[2]  # Go's URL.Host leaves the user information out
    if not host:
        errors.append(invalid(path, host, f"host must be specified{_URL_FORM}"))
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
