"""The operator version that created a graph: `nvidia.com/dynamo-operator-origin-version`.

The original operator's mutating webhook stamps every DynamoGraphDeployment with its own
version when the graph is created (and leaves a value the creator gave alone); rendering
that an upgrade must not apply to graphs that already run is then gated on that stamp, so
new graphs get it and existing ones keep their pod templates. Here are the stamp's key, the
reading of its value and the validation rule on it; the stamping is the operator's
(`reconcilers.operator.defaulting`), the gates are the builders'
(`backends.origin_gates`).

The value is read as the original reads it (a lenient semantic version: an optional `v`,
one to three numbers, an optional prerelease and build metadata; `1`, `1.2` and `v1.2.3-rc.1`
are versions) and ordered as semantic versions are (a prerelease before its release, build
metadata ignored). A graph whose value does not parse is refused at admission, naming the
annotation; one stored without the webhook reads as unknown.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final

from api.errors import FieldError

__all__ = ["ORIGIN_VERSION", "OriginVersion", "origin_version", "parse_origin_version",
           "validate_origin_version"]

ORIGIN_VERSION: Final = "nvidia.com/dynamo-operator-origin-version"

_NUMBER = r"(0|[1-9][0-9]*)"
_IDENTIFIER = r"(?:0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)"
_VERSION = re.compile(
    rf"v?{_NUMBER}(?:\.{_NUMBER})?(?:\.{_NUMBER})?"
    rf"(?:-({_IDENTIFIER}(?:\.{_IDENTIFIER})*))?"
    r"(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?")


class OriginVersion:
    """A parsed origin version, ordered by semantic-version precedence."""

    __slots__ = ("numbers", "prerelease")

    def __init__(self, numbers: tuple[int, int, int], prerelease: tuple[str, ...] = ()) -> None:
        self.numbers = numbers
        self.prerelease = prerelease

    def __repr__(self) -> str:
        text = ".".join(str(n) for n in self.numbers)
        return f"OriginVersion({text}{'-' + '.'.join(self.prerelease) if self.prerelease else ''})"

    def _key(self) -> tuple[tuple[int, int, int], int, tuple[tuple[int, int, str], ...]]:
        # A release sorts after every prerelease of its numbers; numeric identifiers sort
        # before alphanumeric ones, and numerically among themselves.
        ids = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in self.prerelease)
        return self.numbers, 0 if self.prerelease else 1, ids

    def __eq__(self, other: object) -> bool:
        return isinstance(other, OriginVersion) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __lt__(self, other: OriginVersion) -> bool:
        return self._key() < other._key()

    def __le__(self, other: OriginVersion) -> bool:
        return self._key() <= other._key()

    def __ge__(self, other: OriginVersion) -> bool:
        return self._key() >= other._key()

    def __gt__(self, other: OriginVersion) -> bool:
        return self._key() > other._key()


def parse_origin_version(text: str) -> OriginVersion | None:
    """`text` as a version, or None when it is not one."""
    match = _VERSION.fullmatch(text)
    if match is None:
        return None
    major, minor, patch, prerelease, _build = match.groups()
    numbers = (int(major), int(minor or 0), int(patch or 0))
    return OriginVersion(numbers, tuple(prerelease.split(".")) if prerelease else ())


def origin_version(annotations: Mapping[str, str] | None) -> OriginVersion | None:
    """The origin version stamped in `annotations`; None when absent or not a version."""
    value = (annotations or {}).get(ORIGIN_VERSION)
    return parse_origin_version(value) if isinstance(value, str) else None


def validate_origin_version(annotations: Mapping[str, object] | None) -> list[FieldError]:
    """The annotation, when present, holds a version (as the original's webhook refuses)."""
    value = (annotations or {}).get(ORIGIN_VERSION)
    if value is None or (isinstance(value, str) and parse_origin_version(value) is not None):
        return []
    return [FieldError(f"metadata.annotations[{ORIGIN_VERSION}]",
                       f"Invalid value: {_quoted(value)}: must be valid semver")]


def _quoted(value: object) -> str:
    return f'"{value}"' if isinstance(value, str) else repr(value)
