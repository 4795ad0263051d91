"""YAML request bodies read as kube-apiserver reads them (sigs.k8s.io/yaml over go-yaml v2):
YAML 1.1 booleans include `y`, `Y`, `n` and `N`, and keys that are not strings (`true`, `1`)
become the strings JSON needs, so `y: two` is the key "true"."""

from __future__ import annotations

import re
from typing import Any

import yaml


class _Loader(yaml.SafeLoader):
    """SafeLoader with go-yaml v2's extra one-letter booleans."""

    bool_values = {**yaml.SafeLoader.bool_values, "y": True, "n": False}


_Loader.add_implicit_resolver("tag:yaml.org,2002:bool", re.compile(r"^(?:y|Y|n|N)$"),
                              list("yYnN"))


def _json_key(key: Any) -> str:
    if isinstance(key, bool):
        return "true" if key else "false"
    return key if isinstance(key, str) else str(key)


def _string_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {_json_key(k): _string_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_string_keys(v) for v in value]
    return value


def load(raw: bytes | str) -> Any:
    """One YAML document as JSON-compatible values."""
    return _string_keys(yaml.load(raw, Loader=_Loader))
