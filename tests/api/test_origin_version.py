"""`nvidia.com/dynamo-operator-origin-version`: read as the original reads it (a lenient
semantic version), ordered by semantic-version precedence, refused when not a version."""

from __future__ import annotations

import itertools

import pytest

from api.errors import FieldError
from api.origin_version import (
    ORIGIN_VERSION,
    OriginVersion,
    origin_version,
    parse_origin_version,
    validate_origin_version,
)


@pytest.mark.parametrize(("text", "numbers", "prerelease"), [
    ("0.1.0", (0, 1, 0), ()), ("1", (1, 0, 0), ()), ("1.2", (1, 2, 0), ()),
    ("v1.2.3", (1, 2, 3), ()), ("1.6.0-rc.1", (1, 6, 0), ("rc", "1")),
    ("1.2.3+build.5", (1, 2, 3), ()), ("1.2.3-alpha+meta", (1, 2, 3), ("alpha",))])
def test_versions_the_original_accepts(text: str, numbers: tuple[int, int, int],
                                       prerelease: tuple[str, ...]) -> None:
    parsed = parse_origin_version(text)
    assert parsed is not None
    assert (parsed.numbers, parsed.prerelease) == (numbers, prerelease)


@pytest.mark.parametrize("text", ["", "not-semver", "1.2.3.4", "01.2.3", "1.2.3-", "1..2",
                                  "v", "1.2.3-01", " 1.2.3", "1.2.3+"])
def test_what_is_not_a_version(text: str) -> None:
    assert parse_origin_version(text) is None


def test_precedence() -> None:
    ordered = ["0.0.9", "0.1.0-alpha", "0.1.0-alpha.1", "0.1.0-alpha.beta", "0.1.0-beta.2",
               "0.1.0-beta.11", "0.1.0-rc.1", "0.1.0", "0.1.1", "1.0.0"]
    versions = [parse_origin_version(t) for t in ordered]
    assert all(v is not None for v in versions)
    for lower, higher in itertools.pairwise(versions):
        assert lower is not None and higher is not None
        assert lower < higher and higher > lower and lower <= higher and not lower >= higher
    assert parse_origin_version("1.2.3+a") == parse_origin_version("v1.2.3+b")
    assert OriginVersion((1, 0, 0)) == parse_origin_version("1")


def test_read_from_annotations() -> None:
    assert origin_version(None) is None
    assert origin_version({}) is None
    assert origin_version({ORIGIN_VERSION: "junk"}) is None
    assert origin_version({ORIGIN_VERSION: "0.1.0"}) == OriginVersion((0, 1, 0))


def test_validation_names_the_annotation() -> None:
    assert validate_origin_version(None) == []
    assert validate_origin_version({ORIGIN_VERSION: "1.0.0"}) == []
    assert validate_origin_version({ORIGIN_VERSION: "not-semver"}) == [FieldError(
        f"metadata.annotations[{ORIGIN_VERSION}]",
        'Invalid value: "not-semver": must be valid semver')]
