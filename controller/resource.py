"""What a resource is to the runtime: group, version, plural, kind and scope, and its URLs."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote


@dataclass(frozen=True)
class Resource:
    """One served resource, e.g. Resource("apps", "v1", "deployments", "Deployment")."""

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool = True

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def path(self, namespace: str | None = None, name: str = "", subresource: str = "") -> str:
        """The URL path of the collection (no name) or one object, in a namespace or all."""
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        parts = [base]
        if self.namespaced and namespace:
            parts.append(f"namespaces/{quote(namespace, safe='')}")
        parts.append(self.plural)
        if name:
            parts.append(quote(name, safe=""))
            if subresource:
                parts.append(subresource)
        return "/".join(parts)

    def __str__(self) -> str:
        return f"{self.plural}.{self.group}/{self.version}" if self.group else (
            f"{self.plural}/{self.version}")


def group_of(api_version: str) -> str:
    """The group of an apiVersion string ("" for the core group)."""
    return api_version.rpartition("/")[0]


CONFIG_MAPS = Resource("", "v1", "configmaps", "ConfigMap")
LEASES = Resource("coordination.k8s.io", "v1", "leases", "Lease")
