"""Volatile values to tokens, per case: uids and resourceVersions become ordinals in order of
first appearance (`uid1`, `rv1`, ...), timestamps become `TIME`, continue tokens `CONTINUE`,
ports `PORT`. Two servers that agree on which values are equal then record the same tokens."""

from __future__ import annotations

import re
from typing import Any

_UID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z")
_PORT = re.compile(r"127\.0\.0\.1:\d+")
#: Go's %#v of a pointer prints its address.
_POINTER = re.compile(r"\(0x[0-9a-f]+\)")
#: an object printed into a message (a patch's result) carries its resourceVersion.
_EMBEDDED_RV = re.compile(r'(resourceVersion\\*":\\*")(\d+)')
_RV_KEYS = {"resourceVersion"}
_TIME_KEYS = {"creationTimestamp", "deletionTimestamp", "time", "lastTransitionTime"}


class Normalizer:
    """Tokens of one case on one server."""

    def __init__(self, scrub: tuple[tuple[str, str], ...] = ()) -> None:
        self._scrub = [(re.compile(p), r) for p, r in scrub]
        self._tokens: dict[tuple[str, str], str] = {}

    def _token(self, kind: str, value: str) -> str:
        key = (kind, value)
        if key not in self._tokens:
            self._tokens[key] = f"{kind}{sum(1 for k in self._tokens if k[0] == kind) + 1}"
        return self._tokens[key]

    def text(self, value: str) -> str:
        for pattern, replacement in self._scrub:
            value = pattern.sub(replacement, value)
        value = _UID.sub(lambda m: self._token("uid", m.group(0)), value)
        value = _TIME.sub("TIME", value)
        value = _POINTER.sub("(0xPTR)", value)
        value = _EMBEDDED_RV.sub(lambda m: m.group(1) + self._token("rv", m.group(2)), value)
        return _PORT.sub("127.0.0.1:PORT", value)

    def __call__(self, value: Any, key: str = "") -> Any:
        if isinstance(value, dict):
            return {k: self(v, k) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self(v) for v in value]
        if isinstance(value, str):
            last = key.rsplit(".", 1)[-1]  # recorders name values by dotted paths
            if last in _RV_KEYS and value:
                return self._token("rv", value)
            if last in _TIME_KEYS and value:
                return "TIME"
            if last == "continue" and value:
                return "CONTINUE"
            return self.text(value)
        return value
