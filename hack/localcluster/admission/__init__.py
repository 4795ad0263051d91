"""Admission: what kube-apiserver's admission plugins do to a write before the registry sees it.

The local server runs the built-in plugins an operator notices, in kube-apiserver's order and at
the same points of a request (there is no configurable plugin chain):

* NamespaceLifecycle (`namespace_lifecycle`): no creates into a missing or terminating namespace,
  no deleting default, kube-system or kube-public;
* ServiceAccount, Priority and DefaultTolerationSeconds (`pods`): the service account, priority,
  preemption policy and default tolerations of a new pod; ServiceAccount also refuses a pod
  whose account does not exist (`service_accounts`).

`admit_create` runs on every create (including a server-side apply that creates), after the body
is checked and before the registry strategy's PrepareForCreate; `admit_delete` on every delete,
after preconditions.

Admission webhooks (`webhooks`, with `webhook_rules` for matching and `webhook_client` for the
HTTP call): a write made through the HTTP API carries a `RequestAdmission` in its
`WriteOptions`; `mutate` and `validate` are its two admission points, and `admitted` runs the
write until every webhook has answered. Writes of the server's own controllers carry none and
are not sent to webhooks.
"""

from __future__ import annotations

from typing import Any

from ..registry import ResourceType
from ..storage import Storage
from . import namespace_lifecycle
from .namespace_lifecycle import admit_delete
from .pods import admit_pod
from .service_accounts import admit_service_account
from .webhook_rules import Attributes
from .webhooks import RequestAdmission, Webhooks, admitted, warning_header

__all__ = ["Attributes", "RequestAdmission", "Webhooks", "admit_create", "admit_delete",
           "admitted", "mutate", "validate", "warning_header"]


def admit_create(storage: Storage, rt: ResourceType, namespace: str, name: str,
                 obj: dict[str, Any]) -> None:
    """Admit the create of `obj` in `namespace`, as requested under `name` (before
    generateName): raise the `ApiError` a plugin refuses it with, or mutate it in place."""
    namespace_lifecycle.admit_create(storage, rt, namespace, name)
    if not rt.custom and rt.kind == "Pod":
        admit_pod(obj)
        admit_service_account(storage, namespace, name, obj)


def mutate(webhooks: RequestAdmission | None, attrs: Attributes, obj: dict[str, Any],
           old: dict[str, Any] | None) -> dict[str, Any]:
    """`obj` as the mutating webhooks of the request leave it (as is without webhooks)."""
    return obj if webhooks is None else webhooks.mutate(attrs, obj, old)


def validate(webhooks: RequestAdmission | None, attrs: Attributes, obj: dict[str, Any] | None,
             old: dict[str, Any] | None) -> None:
    """Return when the validating webhooks of the request admit the write."""
    if webhooks is not None:
        webhooks.validate(attrs, obj, old)
