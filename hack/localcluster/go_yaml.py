"""YAML request bodies read as kube-apiserver reads them (sigs.k8s.io/yaml over go-yaml v2):
YAML 1.1 booleans include `y`, `Y`, `n` and `N`, and keys that are not strings (`true`, `1`)
become the strings JSON needs, so `y: two` is the key "true". A YAML error is worded as go-yaml
(libyaml's problem texts) words it."""

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


#: PyYAML's problem (or, for a parser error, its context) -> libyaml's problem text.
_PROBLEMS = (
    ("while parsing a flow sequence", "did not find expected ',' or ']'"),
    ("while parsing a flow mapping", "did not find expected ',' or '}'"),
    ("while parsing a block mapping", "did not find expected key"),
    ("while parsing a block collection", "did not find expected '-' indicator"),
    ("mapping values are not allowed", "mapping values are not allowed in this context"),
    ("that cannot start any token", "found character that cannot start any token"),
    ("found unexpected end of stream", "found unexpected end of stream"),
    ("could not find expected ':'", "could not find expected ':'"),
)


def go_error(err: yaml.YAMLError) -> str:
    """go-yaml v2's `yaml: line N: <problem>` for a document PyYAML refused. go-yaml takes the
    problem's 0-based line, plus one for scanner errors only, and leaves the line out when it
    is 0 (so errors on the first line name none)."""
    if not isinstance(err, yaml.MarkedYAMLError):
        return f"yaml: {err}"
    said = f"{err.context or ''} {err.problem or ''}"
    problem = next((go for py, go in _PROBLEMS if py in said), err.problem or str(err))
    line = 0
    if err.problem_mark is not None and err.problem_mark.line:
        line = err.problem_mark.line + (1 if isinstance(err, yaml.scanner.ScannerError) else 0)
    elif err.context_mark is not None:
        line = err.context_mark.line
    return f"yaml: line {line}: {problem}" if line else f"yaml: {problem}"
