"""Printers of cluster-wide configuration kinds: Lease (coordination.k8s.io),
PodDisruptionBudget (policy), webhook configurations (admissionregistration.k8s.io),
RoleBinding and ClusterRoleBinding (rbac.authorization.k8s.io), PriorityClass (scheduling.k8s.io).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from .cells import as_dict, as_int, as_list, as_str, named_row
from .columns import Col, Printer, Row, named_columns

Json = dict[str, Any]

__all__ = ["PRINTERS"]

_DOCS = {
    "lease.holder": "holderIdentity contains the identity of the holder of a current lease.",
    "rb.roleRef": "RoleRef can reference a Role in the current namespace or a ClusterRole in the "
    "global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error.",
    "crb.roleRef": "RoleRef can only reference a ClusterRole in the global namespace. If the "
    "RoleRef cannot be resolved, the Authorizer must return an error.",
    "pc.value": "The value of this priority class. This is the actual priority that pods receive "
    "when they have the name of this class in their pod spec.",
    "pc.default": "globalDefault specifies whether this PriorityClass should be considered as the "
    "default priority for pods that do not have any priority class.",
    "pc.preemption": "PreemptionPolicy is the Policy for preempting pods with lower priority.",
}


def _print_lease(obj: Json, now: datetime) -> Row:
    return named_row(obj, now, as_str(as_dict(obj.get("spec")).get("holderIdentity"))), None


def _int_or_string(value: Any) -> str:
    if value is None:
        return "N/A"
    if isinstance(value, bool):
        return str(int(value))
    return str(value)


def _print_pdb(obj: Json, now: datetime) -> Row:
    spec, status = as_dict(obj.get("spec")), as_dict(obj.get("status"))
    cells = named_row(
        obj,
        now,
        _int_or_string(spec.get("minAvailable")),
        _int_or_string(spec.get("maxUnavailable")),
        as_int(status.get("disruptionsAllowed")),
    )
    return cells, None


def _print_webhooks(obj: Json, now: datetime) -> Row:
    return named_row(obj, now, len(as_list(obj.get("webhooks")))), None


def _binding_printer(kind: str, role_ref_doc: str) -> Printer:
    columns = named_columns(
        Col("Role", "string", role_ref_doc),
        after_age=[
            Col("Users", "string", f"Users in the {kind}", 1),
            Col("Groups", "string", f"Groups in the {kind}", 1),
            Col("ServiceAccounts", "string", f"ServiceAccounts in the {kind}", 1),
        ],
    )
    return Printer(columns, _print_binding)


def _print_binding(obj: Json, now: datetime) -> Row:
    ref = as_dict(obj.get("roleRef"))
    users: list[str] = []
    groups: list[str] = []
    accounts: list[str] = []
    for raw in as_list(obj.get("subjects")):
        subject = as_dict(raw)
        kind, name = subject.get("kind"), as_str(subject.get("name"))
        if kind == "ServiceAccount":
            accounts.append(f"{as_str(subject.get('namespace'))}/{name}")
        elif kind == "User":
            users.append(name)
        elif kind == "Group":
            groups.append(name)
    cells = named_row(
        obj,
        now,
        f"{as_str(ref.get('kind'))}/{as_str(ref.get('name'))}",
        after_age=[", ".join(users), ", ".join(groups), ", ".join(accounts)],
    )
    return cells, None


def _print_priorityclass(obj: Json, now: datetime) -> Row:
    cells = named_row(
        obj,
        now,
        as_int(obj.get("value")),
        obj.get("globalDefault") is True,
        after_age=[as_str(obj.get("preemptionPolicy"))],
    )
    return cells, None


_WEBHOOKS = Printer(
    named_columns(
        Col(
            "Webhooks",
            "integer",
            "Webhooks indicates the number of webhooks registered in this configuration",
        )
    ),
    _print_webhooks,
)

PRINTERS: dict[tuple[str, str], Printer] = {
    ("coordination.k8s.io", "Lease"): Printer(
        named_columns(Col("Holder", "string", _DOCS["lease.holder"])), _print_lease
    ),
    ("policy", "PodDisruptionBudget"): Printer(
        named_columns(
            Col("Min Available", "string", "The minimum number of pods that must be available."),
            Col("Max Unavailable", "string", "The maximum number of pods that may be unavailable."),
            Col(
                "Allowed Disruptions",
                "integer",
                "Calculated number of pods that may be disrupted at this time.",
            ),
        ),
        _print_pdb,
    ),
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"): _WEBHOOKS,
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"): _WEBHOOKS,
    ("rbac.authorization.k8s.io", "RoleBinding"): _binding_printer(
        "roleBinding", _DOCS["rb.roleRef"]
    ),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): _binding_printer(
        "clusterRoleBinding", _DOCS["crb.roleRef"]
    ),
    ("scheduling.k8s.io", "PriorityClass"): Printer(
        named_columns(
            Col("Value", "integer", _DOCS["pc.value"]),
            Col("Global-Default", "boolean", _DOCS["pc.default"]),
            after_age=[Col("PreemptionPolicy", "string", _DOCS["pc.preemption"])],
        ),
        _print_priorityclass,
    ),
}
