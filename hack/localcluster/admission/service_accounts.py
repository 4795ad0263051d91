"""The ServiceAccount admission plugin's check that a new pod's service account exists
(plugin/pkg/admission/serviceaccount).

A pod naming an account the namespace does not have is refused with 403 Forbidden:
`pods "<name>" is forbidden: error looking up service account <ns>/<sa>: serviceaccount "<sa>"
not found`. The pod is named as the request named it, its generateName when it has no name yet
(admission runs before the name is generated). Mirror pods are not checked. The `default`
account always passes: the real plugin waits for the service-account controller to create it,
which here happens as the namespace is created.
"""

from __future__ import annotations

from typing import Any

from ..errors import ApiError
from ..storage import Storage

__all__ = ["MIRROR_ANNOTATION", "admit_service_account"]

Json = dict[str, Any]

MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
_SERVICE_ACCOUNTS = ("", "serviceaccounts")


def admit_service_account(storage: Storage, namespace: str, requested_name: str,
                          pod: Json) -> None:
    """Refuse the pod when its (already defaulted) service account does not exist."""
    meta = pod.get("metadata") or {}
    spec = pod.get("spec")
    if not isinstance(spec, dict) or MIRROR_ANNOTATION in (meta.get("annotations") or {}):
        return
    account = str(spec.get("serviceAccountName") or "default")
    if account == "default" or storage.get(_SERVICE_ACCOUNTS, namespace, account) is not None:
        return
    name = requested_name or str(meta.get("generateName") or "") or "Unknown"
    raise ApiError(
        403, "Forbidden",
        f'pods "{name}" is forbidden: error looking up service account {namespace}/{account}:'
        f' serviceaccount "{account}" not found',
        {"name": name, "kind": "pods"})
