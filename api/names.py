"""Kubernetes name checks (RFC 1123 labels and subdomains, RFC 1035 labels).

Each check returns a list of messages, empty when the value is valid. The messages are the
ones the API server prints, so a user sees the same text from our validation as from kubectl.
"""

from __future__ import annotations

import re

__all__ = [
    "DNS1035_LABEL_MAX_LENGTH",
    "DNS1123_LABEL_MAX_LENGTH",
    "DNS1123_SUBDOMAIN_MAX_LENGTH",
    "is_dns1035_label",
    "is_dns1123_label",
    "is_dns1123_subdomain",
]

DNS1123_LABEL_MAX_LENGTH = 63
DNS1123_SUBDOMAIN_MAX_LENGTH = 253
DNS1035_LABEL_MAX_LENGTH = 63

_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN_FMT = _LABEL_FMT + "(\\." + _LABEL_FMT + ")*"
_DNS1035_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"

_LABEL = re.compile(_LABEL_FMT)
_SUBDOMAIN = re.compile(_SUBDOMAIN_FMT)
_DNS1035 = re.compile(_DNS1035_FMT)


def is_dns1123_label(value: str) -> list[str]:
    """Check a lowercase RFC 1123 label, such as a namespace or a Service port name."""
    errors = _max_len(value, DNS1123_LABEL_MAX_LENGTH)
    if not _LABEL.fullmatch(value):
        if _SUBDOMAIN.fullmatch(value):
            # Only the dots are wrong: say so instead of printing the whole pattern.
            errors.append("must not contain dots")
        else:
            errors.append(
                _regex_error(
                    "a lowercase RFC 1123 label must consist of lower case alphanumeric "
                    "characters or '-', and must start and end with an alphanumeric character",
                    _LABEL_FMT,
                    "my-name",
                    "123-abc",
                )
            )
    return errors


def is_dns1123_subdomain(value: str) -> list[str]:
    """Check a lowercase RFC 1123 subdomain, the rule for most object names."""
    errors = _max_len(value, DNS1123_SUBDOMAIN_MAX_LENGTH)
    if not _SUBDOMAIN.fullmatch(value):
        errors.append(
            _regex_error(
                "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                "characters, '-' or '.', and must start and end with an alphanumeric character",
                _SUBDOMAIN_FMT,
                "example.com",
            )
        )
    return errors


def is_dns1035_label(value: str) -> list[str]:
    """Check an RFC 1035 label, the rule for Service names (must start with a letter)."""
    errors = _max_len(value, DNS1035_LABEL_MAX_LENGTH)
    if not _DNS1035.fullmatch(value):
        errors.append(
            _regex_error(
                "a DNS-1035 label must consist of lower case alphanumeric characters or '-', "
                "start with an alphabetic character, and end with an alphanumeric character",
                _DNS1035_FMT,
                "my-name",
                "abc-123",
            )
        )
    return errors


def _max_len(value: str, limit: int) -> list[str]:
    return [f"must be no more than {limit} characters"] if len(value) > limit else []


def _regex_error(message: str, pattern: str, *examples: str) -> str:
    # Same layout as apimachinery, including its "', " before each " or ".
    shown = "".join(("" if i == 0 else " or ") + f"'{e}', " for i, e in enumerate(examples))
    return f"{message} (e.g. {shown}regex used for validation is '{pattern}')"
