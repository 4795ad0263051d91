"""Which field labels a field selector may use, per kind: the apiserver's conversion functions.

The real server registers a field-label conversion function per built-in kind (core kinds, batch
Jobs, events.k8s.io Events); every other kind accepts only `metadata.name` and
`metadata.namespace`, and custom resources add their CRD version's `selectableFields`. The
wording of a rejection differs per kind, so each case keeps its own message.
"""

from __future__ import annotations

from ..go_format import go_quote
from .selector_error import SelectorError

__all__ = ["convert_label"]

_POD_FIELDS = frozenset(
    {
        "metadata.name",
        "metadata.namespace",
        "spec.nodeName",
        "spec.restartPolicy",
        "spec.schedulerName",
        "spec.serviceAccountName",
        "spec.hostNetwork",
        "status.phase",
        "status.podIP",
        "status.podIPs",
        "status.nominatedNodeName",
    }
)
_CORE_EVENT_FIELDS = frozenset(
    {
        "involvedObject.kind",
        "involvedObject.namespace",
        "involvedObject.name",
        "involvedObject.uid",
        "involvedObject.apiVersion",
        "involvedObject.resourceVersion",
        "involvedObject.fieldPath",
        "reason",
        "reportingComponent",
        "source",
        "type",
        "metadata.namespace",
        "metadata.name",
    }
)
_EVENTS_V1_FIELDS = {
    "reason": "reason",
    "regarding.kind": "involvedObject.kind",
    "regarding.namespace": "involvedObject.namespace",
    "regarding.name": "involvedObject.name",
    "regarding.uid": "involvedObject.uid",
    "regarding.apiVersion": "involvedObject.apiVersion",
    "regarding.resourceVersion": "involvedObject.resourceVersion",
    "regarding.fieldPath": "involvedObject.fieldPath",
    "reportingController": "reportingComponent",
    "source": "source",
    "type": "type",
    "metadata.namespace": "metadata.namespace",
    "metadata.name": "metadata.name",
}
# Kinds whose conversion function the apiserver registers, with the labels it accepts.
_CORE_FIELDS: dict[tuple[str, str], frozenset[str]] = {
    ("", "Pod"): _POD_FIELDS,
    ("", "Node"): frozenset({"metadata.name", "spec.unschedulable"}),
    ("", "ReplicationController"): frozenset(
        {"metadata.name", "metadata.namespace", "status.replicas"}
    ),
    ("", "Event"): _CORE_EVENT_FIELDS,
    ("", "Namespace"): frozenset({"status.phase", "metadata.name"}),
    ("", "Secret"): frozenset({"type", "metadata.namespace", "metadata.name"}),
    ("", "Service"): frozenset(
        {"metadata.namespace", "metadata.name", "spec.clusterIP", "spec.type"}
    ),
    ("certificates.k8s.io", "CertificateSigningRequest"): frozenset(
        {"metadata.name", "spec.signerName"}
    ),
}


def convert_label(
    group: str,
    kind: str,
    label: str,
    *,
    custom: bool,
    namespaced: bool,
    selectable: frozenset[str],
) -> str:
    """The scheme's ConvertFieldLabel for the kind: the internal label, or the Go error text."""
    if custom:
        if label == "metadata.name" or (namespaced and label == "metadata.namespace"):
            return label
        if label in selectable:
            return label
        raise SelectorError(f"field label not supported: {label}")
    if (group, kind) == ("", "Pod") and label == "spec.host":
        return "spec.nodeName"
    if (group, kind) in _CORE_FIELDS:
        if label in _CORE_FIELDS[(group, kind)]:
            return label
        raise SelectorError(f"field label not supported: {label}")
    if (group, kind) == ("events.k8s.io", "Event"):
        if label in _EVENTS_V1_FIELDS:
            return _EVENTS_V1_FIELDS[label]
        raise SelectorError(f"field label not supported: {label}")
    if (group, kind) == ("batch", "Job"):
        if label in ("metadata.name", "metadata.namespace", "status.successful"):
            return label
        raise SelectorError(f"field label {go_quote(label)} not supported for batchv1.Job")
    if label in ("metadata.name", "metadata.namespace"):
        return label
    raise SelectorError(
        f"{go_quote(label)} is not a known field selector: only "
        '"metadata.name", "metadata.namespace"'
    )
