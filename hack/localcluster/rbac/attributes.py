"""What a request asks to do, read from its method and URL as kube-apiserver's RequestInfo does.

A URL under /api/v1/ or /apis/<group>/<version>/ naming a resource is a resource request: the
verb comes from the method (GET is get, list without a name, watch with `watch=true` or the
/watch/ prefix; DELETE without a name is deletecollection), the namespace from
/namespaces/<ns>/, then resource, name and subresource; a list or watch with the field selector
`metadata.name=<n>` names <n>. Everything else (/api, /apis/apps/v1, /healthz, /version,
/openapi/v2) is a non-resource request whose verb is the lower-cased method.
"""

from __future__ import annotations

from dataclasses import dataclass

_GO_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_NAMESPACE_SUBRESOURCES = frozenset({"status", "finalize"})
#: Pod subresources whose websocket upgrade (a GET) is authorized as `create`, as the POST of
#: a SPDY upgrade is (kube-apiserver 1.31 and later).
_STREAMS = frozenset({"exec", "attach", "portforward"})
_METHOD_VERBS = {"POST": "create", "GET": "get", "HEAD": "get", "PUT": "update",
                 "PATCH": "patch", "DELETE": "delete"}


@dataclass(frozen=True)
class RequestAttributes:
    """authorizer.Attributes of one request (user aside)."""

    verb: str
    resource_request: bool
    path: str = ""
    api_group: str = ""
    api_version: str = ""
    namespace: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""


def request_attributes(method: str, path: str, query: dict[str, str]) -> RequestAttributes:
    """The attributes of a request to `path` with `method` and query parameters `query`."""
    non_resource = RequestAttributes(verb=method.lower(), resource_request=False, path=path)
    parts = [p for p in path.strip("/").split("/") if p]
    if len(parts) < 3 or parts[0] not in ("api", "apis"):
        return non_resource
    group = ""
    rest = parts[1:]
    if parts[0] == "apis":
        if len(rest) < 3:
            return non_resource
        group, rest = rest[0], rest[1:]
    version, rest = rest[0], rest[1:]
    if rest[0] == "watch":
        verb = "watch"
        rest = rest[1:]
        if not rest:
            return non_resource
    else:
        verb = _METHOD_VERBS.get(method, "")
    namespace = ""
    if rest[0] == "namespaces" and len(rest) > 1:
        namespace = rest[1]
        if len(rest) > 2 and rest[2] not in _NAMESPACE_SUBRESOURCES:
            rest = rest[2:]
    resource = rest[0]
    name = rest[1] if len(rest) > 1 else ""
    subresource = rest[2] if len(rest) > 2 else ""
    if not name and verb == "get":
        verb = "watch" if query.get("watch", "") in _GO_TRUE else "list"
        for term in query.get("fieldSelector", "").split(","):
            key, sep, value = term.partition("=")
            value = value[1:] if value.startswith("=") else value
            if key.strip() == "metadata.name" and sep and value.strip():
                value = value.strip()
                name = value if "/" not in value and value not in (".", "..") else ""
    if not name and verb == "delete":
        verb = "deletecollection"
    if verb == "get" and group == "" and resource == "pods" and subresource in _STREAMS:
        verb = "create"  # AuthorizePodWebsocketUpgradeCreatePermission: a websocket GET
    return RequestAttributes(verb=verb, resource_request=True, path=path, api_group=group,
                             api_version=version, namespace=namespace, resource=resource,
                             subresource=subresource, name=name)


__all__ = ["RequestAttributes", "request_attributes"]
