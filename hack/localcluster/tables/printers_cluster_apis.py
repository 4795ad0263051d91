"""Printers of ReplicationController (core), CertificateSigningRequest (certificates.k8s.io)
and APIService (apiregistration.k8s.io), as kube-apiserver's printers fill their rows."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from .cells import (
    as_dict,
    as_int,
    as_list,
    as_str,
    desired_replicas,
    format_labels,
    named_row,
    template_cells,
)
from .columns import Col, Printer, Row, named_columns, template_columns
from .time_format import human_duration

Json = dict[str, Any]

__all__ = ["PRINTERS"]

_DOCS = {
    "rc.desired": "Replicas is the number of desired replicas. This is a pointer to distinguish "
    "between explicit zero and unspecified. Defaults to 1. More info: https://kubernetes.io/docs/"
    "concepts/workloads/controllers/replicationcontroller#what-is-a-replicationcontroller",
    "rc.current": "Replicas is the most recently observed number of replicas. More info: "
    "https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller#what-is-a-"
    "replicationcontroller",
    "rc.ready": "The number of ready replicas for this replication controller.",
    "rc.selector": "Selector is a label query over pods that should match the Replicas count. If "
    "Selector is empty, it is defaulted to the labels present on the Pod template.",
    "csr.signer": "Name of the signer that is requested to sign the certificate.",
    "csr.requestor": "Name of the user that created the request.",
    "csr.duration": "Requested duration of validity of the issued certificate.",
    "csr.condition": "Current approval state of the request.",
    "api.service": "The reference to the service that hosts this API endpoint.",
    "api.available": "Whether this service is available.",
}


def _print_replication_controller(obj: Json, now: datetime) -> Row:
    spec, status = as_dict(obj.get("spec")), as_dict(obj.get("status"))
    cells = named_row(
        obj,
        now,
        desired_replicas(spec),
        as_int(status.get("replicas")),
        as_int(status.get("readyReplicas")),
        after_age=[*template_cells(obj), format_labels(spec.get("selector"))],
    )
    return cells, None


def _csr_condition(status: Json) -> str:
    """extractCSRStatus: Denied, Approved or Pending, then ,Failed and ,Issued."""
    types = {as_str(as_dict(c).get("type")) for c in as_list(status.get("conditions"))}
    text = "Denied" if "Denied" in types else "Approved" if "Approved" in types else "Pending"
    if "Failed" in types:
        text += ",Failed"
    if status.get("certificate"):
        text += ",Issued"
    return text


def _print_csr(obj: Json, now: datetime) -> Row:
    spec = as_dict(obj.get("spec"))
    seconds = spec.get("expirationSeconds")
    duration = "<none>" if not isinstance(seconds, int) else human_duration(
        timedelta(seconds=seconds))
    cells = named_row(obj, now, after_age=[
        as_str(spec.get("signerName")), as_str(spec.get("username")), duration,
        _csr_condition(as_dict(obj.get("status")))])
    return cells, None


def _print_api_service(obj: Json, now: datetime) -> Row:
    service = as_dict(as_dict(obj.get("spec")).get("service"))
    where = f"{as_str(service.get('namespace'))}/{as_str(service.get('name'))}" if service \
        else "Local"
    available = next((as_dict(c) for c in as_list(as_dict(obj.get("status")).get("conditions"))
                      if as_dict(c).get("type") == "Available"), None)
    state = "Unknown"
    if available is not None:
        state = as_str(available.get("status"))
        if available.get("reason") and state != "True":
            state = f"{state} ({as_str(available.get('reason'))})"
    return named_row(obj, now, where, state), None


PRINTERS: dict[tuple[str, str], Printer] = {
    ("", "ReplicationController"): Printer(
        named_columns(
            Col("Desired", "integer", _DOCS["rc.desired"]),
            Col("Current", "integer", _DOCS["rc.current"]),
            Col("Ready", "integer", _DOCS["rc.ready"]),
            after_age=template_columns(_DOCS["rc.selector"]),
        ),
        _print_replication_controller,
    ),
    ("certificates.k8s.io", "CertificateSigningRequest"): Printer(
        named_columns(after_age=(
            Col("SignerName", "string", _DOCS["csr.signer"]),
            Col("Requestor", "string", _DOCS["csr.requestor"]),
            Col("RequestedDuration", "string", _DOCS["csr.duration"]),
            Col("Condition", "string", _DOCS["csr.condition"]),
        )),
        _print_csr,
    ),
    ("apiregistration.k8s.io", "APIService"): Printer(
        named_columns(Col("Service", "string", _DOCS["api.service"]),
                      Col("Available", "string", _DOCS["api.available"])),
        _print_api_service,
    ),
}
