"""Image pull secrets found by registry host.

The operator keeps an index of the `kubernetes.io/dockerconfigjson` Secrets of the cluster:
namespace -> registry host -> secret names. A pod gets the secrets of its namespace whose
registries include the host of its main image. Building the index from Secret objects is pure
and lives here; listing the Secrets is the operator's job.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = [
    "DOCKER_HUB",
    "SECRET_TYPE",
    "PullSecretIndex",
    "image_host",
    "index_secrets",
    "lookup",
    "registry_host",
]

DOCKER_HUB = "docker.io"
_DOCKER_HUB_ALIASES = {"index.docker.io", "registry-1.docker.io", "registry.hub.docker.com"}
SECRET_TYPE = "kubernetes.io/dockerconfigjson"

#: namespace -> registry host -> names of the Secrets with credentials for it.
PullSecretIndex = dict[str, dict[str, list[str]]]


def registry_host(server: str) -> str:
    """The host (and port) of a registry as written in a docker config `auths` key, which may
    be a URL ("https://index.docker.io/v1/") or a host with a path ("example.com:5005/team")."""
    host = server.strip()
    if "://" in host:
        host = host.split("://", 1)[1]
    host = host.split("/", 1)[0].lower()
    return DOCKER_HUB if host in _DOCKER_HUB_ALIASES else host


def image_host(image: str) -> str:
    """The registry host of an image reference; Docker Hub for images without one
    ("ubuntu:22.04", "library/ubuntu")."""
    first, slash, _ = image.partition("/")
    if slash and ("." in first or ":" in first or first == "localhost"):
        return registry_host(first)
    return DOCKER_HUB


def index_secrets(secrets: Iterable[Mapping[str, Any]]) -> tuple[PullSecretIndex, list[str]]:
    """Index Secret objects (JSON) by namespace and registry host, in listing order.

    Secrets of other types are skipped. A Secret whose config does not parse is skipped and
    reported in the second value, so one bad Secret never hides the others."""
    index: PullSecretIndex = {}
    problems: list[str] = []
    for secret in secrets:
        if secret.get("type") != SECRET_TYPE:
            continue
        meta = secret.get("metadata") or {}
        namespace, name = str(meta.get("namespace", "")), str(meta.get("name", ""))
        try:
            auths = _auths(secret)
        except ValueError as exc:
            problems.append(f"secret {namespace}/{name}: {exc}")
            continue
        hosts = index.setdefault(namespace, {})
        for server in auths:
            names = hosts.setdefault(registry_host(server), [])
            if name not in names:
                names.append(name)
    return index, problems


def lookup(index: Mapping[str, Sequence[str]], image: str) -> list[str]:
    """Secret names of one namespace's index that hold credentials for `image`."""
    return list(index.get(image_host(image), []))


def _auths(secret: Mapping[str, Any]) -> Mapping[str, Any]:
    raw = (secret.get("data") or {}).get(".dockerconfigjson")
    if raw is None:
        text = (secret.get("stringData") or {}).get(".dockerconfigjson")
        if text is None:
            raise ValueError("no .dockerconfigjson key")
    else:
        try:
            text = base64.b64decode(raw, validate=True).decode()
        except (binascii.Error, UnicodeDecodeError) as exc:
            raise ValueError(f"invalid base64: {exc}") from None
    try:
        config = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"invalid JSON: {exc}") from None
    auths = config.get("auths") if isinstance(config, dict) else None
    if not isinstance(auths, dict):
        raise ValueError("no auths object")
    return auths
