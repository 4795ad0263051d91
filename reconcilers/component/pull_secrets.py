"""Image pull secrets by registry host, from the cache's trimmed Secrets.

Pods get the `kubernetes.io/dockerconfigjson` Secrets of their namespace whose registries
include the host of their image. Only that much is needed, so `trim_secret`, the transform the
cache applies to Secrets (see `reconcilers.component.CACHE_TRANSFORMS`), keeps each Secret's
metadata and, for docker-config Secrets, the registry hosts it holds credentials for: no
credentials ever stay in the operator's memory, and other Secrets cost a few hundred bytes
each. The index is read per reconcile from the cache, so a Secret added
later is picked up by the next reconcile of each component (level-based, no timer needed).
"""

from __future__ import annotations

from typing import Any

from backends.pull_secrets import SECRET_TYPE, index_secrets
from controller.cache import Cache
from reconcilers.machinery.resources import SECRETS

Json = dict[str, Any]

#: Where a trimmed Secret keeps its registry hosts (not a Kubernetes field: cache-only).
HOSTS_KEY = "registryHosts"
# Not the annotations: `kubectl apply` copies the whole Secret, data included, into one.
_KEPT_METADATA = ("name", "namespace", "uid", "resourceVersion", "labels", "ownerReferences",
                  "deletionTimestamp")


def trim_secret(secret: Json) -> Json:
    """The cached form of a Secret: metadata, type and registry hosts, never the data."""
    meta = secret.get("metadata") or {}
    trimmed: Json = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {k: meta[k] for k in _KEPT_METADATA if k in meta},
        "type": secret.get("type", ""),
    }
    if trimmed["type"] == SECRET_TYPE:
        index, _problems = index_secrets([secret])
        hosts = index.get(str(meta.get("namespace", "")), {})
        trimmed[HOSTS_KEY] = sorted(hosts)
    return trimmed


async def pull_secrets_of(cache: Cache, namespace: str) -> dict[str, list[str]]:
    """Registry host -> names of the namespace's docker-config Secrets, by Secret name."""
    by_host: dict[str, list[str]] = {}
    for secret in await cache.list(SECRETS, namespace):
        if secret.get("type") != SECRET_TYPE or secret["metadata"].get("deletionTimestamp"):
            continue
        for host in secret.get(HOSTS_KEY) or []:
            by_host.setdefault(host, []).append(secret["metadata"]["name"])
    return by_host
