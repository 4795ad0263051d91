"""Impersonation: `Impersonate-User`, `Impersonate-Group`, `Impersonate-Uid` and
`Impersonate-Extra-<key>` headers (`kubectl --as`, `--as-group`), as kube-apiserver's filter
handles them.

Each asked identity needs the verb `impersonate`: on `users` (or, for a
`system:serviceaccount:<ns>:<name>` user, on `serviceaccounts` named <name> in <ns>), `groups`,
`uids`, `userextras/<key>`. The request then runs as that user; a ServiceAccount given without
groups gets its own, and `system:authenticated` is added unless a group says
`system:authenticated` or `system:unauthenticated` already.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..errors import ApiError, bad_request
from ..users import UserInfo
from .attributes import RequestAttributes
from .authorizer import Authorizer, forbidden, forbidden_message

USER, GROUP, UID = "Impersonate-User", "Impersonate-Group", "Impersonate-Uid"
EXTRA = "impersonate-extra-"
_SA_PREFIX = "system:serviceaccount:"


def impersonated(authorizer: Authorizer | None, user: UserInfo,
                 headers: Mapping[str, str], groups_given: list[str]) -> UserInfo:
    """Who the request runs as: `user`, or whom its headers ask for (403 when not allowed).
    `groups_given` are the values of every Impersonate-Group header."""
    name = headers.get(USER, "")
    extra_keys = [k for k in headers if k.lower().startswith(EXTRA)]
    if not name:
        if groups_given or headers.get(UID) or extra_keys:
            raise _without_user(groups_given, headers, extra_keys)
        return user
    checks: list[RequestAttributes] = []
    groups = list(groups_given)
    if name.startswith(_SA_PREFIX) and name.count(":") == 3:
        namespace, sa = name[len(_SA_PREFIX):].split(":")
        checks.append(RequestAttributes("impersonate", True, api_version="v1",
                                        namespace=namespace, resource="serviceaccounts",
                                        name=sa))
        if not groups:
            groups = ["system:serviceaccounts", f"system:serviceaccounts:{namespace}"]
    else:
        checks.append(RequestAttributes("impersonate", True, api_version="v1",
                                        resource="users", name=name))
    checks += [RequestAttributes("impersonate", True, api_version="v1", resource="groups",
                                 name=g) for g in groups_given]
    uid = headers.get(UID, "")
    if uid:
        checks.append(RequestAttributes("impersonate", True, api_group="authentication.k8s.io",
                                        api_version="v1", resource="uids", name=uid))
    extra: dict[str, tuple[str, ...]] = {}
    for header in extra_keys:
        key = header[len(EXTRA):].lower()
        extra[key] = (*extra.get(key, ()), headers[header])
        checks.append(RequestAttributes("impersonate", True, api_group="authentication.k8s.io",
                                        api_version="v1", resource="userextras",
                                        subresource=key, name=headers[header]))
    if authorizer is not None:
        for attrs in checks:
            decision = authorizer.authorize(user, attrs)
            if not decision.allowed:
                message = forbidden_message(user, attrs)
                if decision.reason:
                    message = f"{message}: {decision.reason}"
                raise forbidden(attrs.api_group, attrs.resource, attrs.name, message)
    if name != "system:anonymous" and not {"system:authenticated",
                                           "system:unauthenticated"} & set(groups):
        groups.append("system:authenticated")
    return UserInfo(name, tuple(groups), uid, extra)


__all__ = ["impersonated"]


def _reference(kind: str, name: str, api_version: str = "", field_path: str = "") -> str:
    """Go's %v of a v1.ObjectReference (Kind, Namespace, Name, UID, APIVersion,
    ResourceVersion, FieldPath)."""
    return "{" + " ".join((kind, "", name, "", api_version, "", field_path)) + "}"


def _without_user(groups: list[str], headers: Mapping[str, str],
                  extra_keys: list[str]) -> ApiError:
    """Current kube-apiserver's 400 for groups, extras or a UID asked without a user (1.20
    answered the same condition with a bare 500)."""
    refs = [_reference("Group", g) for g in groups]
    refs += [_reference("UserExtra", headers[h], "authentication.k8s.io/v1",
                        h[len(EXTRA):].lower()) for h in extra_keys]
    if headers.get(UID):
        refs.append(_reference("UID", headers[UID], "authentication.k8s.io/v1"))
    return bad_request(f"requested [{' '.join(refs)}] without impersonating a user")
