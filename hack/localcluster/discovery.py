"""Discovery documents: /version, /api, /apis, and the resource lists of each group version."""

from __future__ import annotations

import hashlib
from typing import Any

from .registry import CREATE_ONLY, Registry, ResourceType

Json = dict[str, Any]

#: The kube-apiserver version we claim; it matches the kubectl our tests install.
SERVER_VERSION: Json = {
    "major": "1",
    "minor": "37",
    "emulationMajor": "1",
    "emulationMinor": "37",
    "minCompatibilityMajor": "1",
    "minCompatibilityMinor": "36",
    "gitVersion": "v1.37.0-localcluster",
    "gitCommit": "0000000000000000000000000000000000000000",
    "gitTreeState": "clean",
    "buildDate": "2026-11-01T00:00:00Z",
    "goVersion": "go1.25.0",
    "compiler": "gc",
    "platform": "linux/amd64",
}

_SUB_VERBS = ["get", "patch", "update"]


def api_versions(server_address: str) -> Json:
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0",
                                        "serverAddress": server_address}],
    }


def _group(name: str, versions: list[str]) -> Json:
    gvs = [{"groupVersion": f"{name}/{v}", "version": v} for v in versions]
    return {"name": name, "versions": gvs, "preferredVersion": gvs[0]}


def api_group_list(registry: Registry) -> Json:
    groups = [_group(name, versions) for name, versions in registry.groups().items() if name]
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def api_group(registry: Registry, name: str) -> Json | None:
    versions = registry.groups().get(name)
    if not name or not versions:
        return None
    return {"kind": "APIGroup", "apiVersion": "v1", **_group(name, versions)}


def _storage_version_hash(rt: ResourceType) -> str:
    digest = hashlib.sha256(f"{rt.group}/{rt.storage_version}/{rt.kind}".encode()).digest()
    import base64

    return base64.b64encode(digest[:8]).decode()


def resource_list(registry: Registry, group: str, version: str) -> Json | None:
    types = sorted(registry.in_group_version(group, version), key=lambda rt: rt.plural)
    if not types:
        return None
    resources: list[Json] = []
    for rt in types:
        entry: Json = {
            "name": rt.plural,
            "singularName": rt.singular_name,
            "namespaced": rt.namespaced,
            "kind": rt.kind,
            "verbs": list(rt.verbs),
        }
        if rt.verbs != CREATE_ONLY:  # reviews are never stored
            entry["storageVersionHash"] = _storage_version_hash(rt)
        if rt.short_names:
            entry["shortNames"] = list(rt.short_names)
        if rt.categories:
            entry["categories"] = list(rt.categories)
        resources.append(entry)
        if rt.has_status:
            resources.append({"name": f"{rt.plural}/status", "singularName": "",
                              "namespaced": rt.namespaced, "kind": rt.kind,
                              "verbs": _SUB_VERBS})
        if rt.scale is not None:
            resources.append({"name": f"{rt.plural}/scale", "singularName": "",
                              "namespaced": rt.namespaced, "group": "autoscaling",
                              "version": "v1", "kind": "Scale", "verbs": _SUB_VERBS})
        for sub in rt.extra_subresources:
            resources.append({"name": f"{rt.plural}/{sub}", "singularName": "",
                              "namespaced": rt.namespaced, "kind": rt.kind,
                              "verbs": _extra_subresource_verbs(sub)})
        if rt.kind == "Namespace":
            resources.append({"name": "namespaces/finalize", "singularName": "",
                              "namespaced": False, "kind": "Namespace", "verbs": ["update"]})
    group_version = f"{group}/{version}" if group else version
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version,
            "resources": resources}


def _extra_subresource_verbs(sub: str) -> list[str]:
    if sub in ("eviction", "binding"):
        return ["create"]
    return _SUB_VERBS if sub == "approval" else ["get"]


# --- aggregated discovery (apidiscovery.k8s.io/v2) ---------------------------------------------

#: What /api and /apis answer to a client that asks for it first (kubectl does): every group,
#: version and resource in one document, so the client skips the per-group-version requests.
AGGREGATED_MEDIA_TYPE = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"


def wants_aggregated(accept: str) -> bool:
    """Whether the first media type of `accept` the server can serve is aggregated v2."""
    for choice in accept.split(","):
        media, *raw_params = (p.strip() for p in choice.split(";"))
        params = dict(p.split("=", 1) for p in raw_params if "=" in p)
        if media not in ("application/json", "application/*", "*/*", ""):
            continue
        if "as" not in params:
            return False  # plain JSON: the legacy documents
        if params == {"g": "apidiscovery.k8s.io", "v": "v2", "as": "APIGroupDiscoveryList"}:
            return True
    return False


def aggregated(registry: Registry, core: bool) -> Json:
    """The APIGroupDiscoveryList of /api (core: only the legacy group) or /apis (the rest),
    built from the same resource lists the legacy endpoints serve."""
    items = []
    for name, versions in registry.groups().items():
        if (name == "") != core:
            continue
        entries = []
        for version in versions:
            doc = resource_list(registry, name, version)
            if doc is not None:
                entries.append({"version": version, "freshness": "Current",
                                "resources": _aggregated_resources(name, version,
                                                                   doc["resources"])})
        meta: Json = {"creationTimestamp": None}
        if name:
            meta["name"] = name
        items.append({"metadata": meta, "versions": entries})
    return {"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2",
            "metadata": {}, "items": items}


def _aggregated_resources(group: str, version: str, entries: list[Json]) -> list[Json]:
    """APIResourceList entries as APIResourceDiscovery: `plural/sub` entries become
    subresources of their resource."""
    out: dict[str, Json] = {}
    for entry in entries:
        parent, _, sub = entry["name"].partition("/")
        kind = {"group": entry.get("group", group), "version": entry.get("version", version),
                "kind": entry["kind"]}
        if sub:
            out[parent].setdefault("subresources", []).append(
                {"subresource": sub, "responseKind": kind, "verbs": entry["verbs"]})
            continue
        resource: Json = {"resource": parent, "responseKind": kind,
                          "scope": "Namespaced" if entry["namespaced"] else "Cluster",
                          "singularResource": entry["singularName"], "verbs": entry["verbs"]}
        for legacy_key in ("shortNames", "categories"):
            if legacy_key in entry:
                resource[legacy_key] = entry[legacy_key]
        out[parent] = resource
    return list(out.values())
