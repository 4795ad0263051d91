"""DNS-1123 / DNS-1035 name checks and their apimachinery messages."""

from __future__ import annotations

import pytest

from api.names import is_dns1035_label, is_dns1123_label, is_dns1123_subdomain

LABEL_MESSAGE = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
SUBDOMAIN_MESSAGE = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)


@pytest.mark.parametrize("name", ["a", "0", "my-name", "123-abc", "a" * 63, "vllm-agg-frontend"])
def test_valid_labels(name: str) -> None:
    assert is_dns1123_label(name) == []


@pytest.mark.parametrize("name", ["", "-a", "a-", "A", "my_name", "a b", "é"])
def test_invalid_labels_get_the_apiserver_message(name: str) -> None:
    assert is_dns1123_label(name) == [LABEL_MESSAGE]


def test_label_with_dots_is_told_so() -> None:
    assert is_dns1123_label("a.b") == ["must not contain dots"]


def test_label_too_long() -> None:
    assert is_dns1123_label("a" * 64) == ["must be no more than 63 characters"]


@pytest.mark.parametrize("name", ["a", "example.com", "a-b.c-d", "1.2.3", "a" * 253])
def test_valid_subdomains(name: str) -> None:
    assert is_dns1123_subdomain(name) == []


@pytest.mark.parametrize("name", ["", ".a", "a.", "a..b", "Example.com", "a_b", "-a.b"])
def test_invalid_subdomains(name: str) -> None:
    assert is_dns1123_subdomain(name) == [SUBDOMAIN_MESSAGE]


def test_subdomain_too_long_and_invalid_reports_both() -> None:
    assert is_dns1123_subdomain("A" * 254) == [
        "must be no more than 253 characters",
        SUBDOMAIN_MESSAGE,
    ]


@pytest.mark.parametrize(
    ("name", "ok"),
    [("my-name", True), ("abc-123", True), ("1abc", False), ("a.b", False), ("a-", False)],
)
def test_dns1035_labels(name: str, ok: bool) -> None:
    errors = is_dns1035_label(name)
    assert (errors == []) is ok
    if not ok:
        assert errors[0].startswith("a DNS-1035 label must consist of lower case alphanumeric")
