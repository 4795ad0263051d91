"""Admission: what kube-apiserver's admission plugins do to a write before the registry sees it.

The local server runs the built-in plugins an operator notices, in kube-apiserver's order and at
the same points of a request (there is no configurable plugin chain):

* NamespaceLifecycle (`namespace_lifecycle`): no creates into a missing or terminating namespace,
  no deleting default, kube-system or kube-public;
* ServiceAccount, Priority and DefaultTolerationSeconds (`pods`): the service account, priority,
  preemption policy and default tolerations of a new pod.

`admit_create` runs on every create (including a server-side apply that creates), after the body
is checked and before the registry strategy's PrepareForCreate; `admit_delete` on every delete,
after preconditions. Admission webhooks (Validating/MutatingWebhookConfiguration) are stored and
served as objects but not called.
"""

from __future__ import annotations

from typing import Any

from ..registry import ResourceType
from ..storage import Storage
from . import namespace_lifecycle
from .namespace_lifecycle import admit_delete
from .pods import admit_pod

__all__ = ["admit_create", "admit_delete"]


def admit_create(storage: Storage, rt: ResourceType, namespace: str, name: str,
                 obj: dict[str, Any]) -> None:
    """Admit the create of `obj` in `namespace`, as requested under `name` (before
    generateName): raise the `ApiError` a plugin refuses it with, or mutate it in place."""
    namespace_lifecycle.admit_create(storage, rt, namespace, name)
    if not rt.custom and rt.kind == "Pod":
        admit_pod(obj)
