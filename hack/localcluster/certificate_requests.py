"""CertificateSigningRequests (certificates.k8s.io/v1): the registry strategy of the kind.

As kube-apiserver's `pkg/registry/certificates/certificates` strategy does:

* create: spec.username, uid, groups and extra are the requester's, whatever the body says;
  the status is dropped;
* an update of the object itself changes metadata only (spec and status stay as stored);
* `/status` writes the status (the certificate, other conditions) but keeps the Approved and
  Denied conditions as stored; `/approval` writes only the conditions and keeps the certificate;
* conditions default to status True and get lastUpdateTime / lastTransitionTime;
* validation: a PEM CERTIFICATE REQUEST in spec.request, a signerName `domain/path`, usages
  known to x509, expirationSeconds of ten minutes or more, Approved and Denied exclusive and
  never removed, an issued certificate never changed.

Issuing certificates (kube-controller-manager's signers) is not simulated.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from cryptography import x509

from .errors import Cause, duplicate, forbidden, invalid, required, unsupported
from .users import UserInfo

Json = dict[str, Any]
KIND = "CertificateSigningRequest"
_APPROVAL_TYPES = ("Approved", "Denied")
KNOWN_USAGES = (
    "signing", "digital signature", "content commitment", "key encipherment", "key agreement",
    "data encipherment", "cert sign", "crl sign", "encipher only", "decipher only", "any",
    "server auth", "client auth", "code signing", "email protection", "s/mime",
    "ipsec end system", "ipsec tunnel", "ipsec user", "timestamping", "ocsp signing",
    "microsoft sgc", "netscape sgc",
)


def prepare_for_create(obj: Json, user: UserInfo | None) -> None:
    """The requester's identity into the spec; no status."""
    obj.pop("status", None)
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    for key in ("username", "uid", "groups", "extra"):
        spec.pop(key, None)
    if user is not None:
        info = user.to_json()
        spec.update({k: info[k] for k in ("username", "uid", "groups", "extra") if k in info})


def prepare_for_update(obj: Json, old: Json, subresource: str, now: str) -> None:
    """Keep what the write may not change (see the module docstring)."""
    obj["spec"] = old.get("spec")
    old_status = old.get("status") or {}
    if subresource not in ("status", "approval"):
        if old_status:
            obj["status"] = old_status
        else:
            obj.pop("status", None)
        return
    status = obj.get("status")
    if not isinstance(status, dict):
        status = {}
    conditions = [c for c in status.get("conditions") or [] if isinstance(c, dict)]
    old_conditions = [c for c in old_status.get("conditions") or [] if isinstance(c, dict)]
    if subresource == "status":
        kept = [c for c in old_conditions if c.get("type") in _APPROVAL_TYPES]
        conditions = [c for c in conditions if c.get("type") not in _APPROVAL_TYPES] + kept
    else:
        status = {k: v for k, v in old_status.items() if k != "conditions"}
    for condition in conditions:
        condition.setdefault("status", "True")
        condition.setdefault("lastUpdateTime", now)
        if "lastTransitionTime" not in condition:
            same = next((c for c in old_conditions if c.get("type") == condition.get("type")
                         and c.get("status") == condition["status"]), None)
            condition["lastTransitionTime"] = (same or {}).get("lastTransitionTime") or now
    if conditions:
        status["conditions"] = conditions
    else:
        status.pop("conditions", None)
    if status:
        obj["status"] = status
    else:
        obj.pop("status", None)


def validation_errors(obj: Json, old: Json | None) -> list[Cause]:
    """ValidateCertificateSigningRequest{Create,Update,StatusUpdate,ApprovalUpdate}."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return [required("spec")]
    errors = _spec_errors(spec)
    status = obj.get("status") if isinstance(obj.get("status"), dict) else {}
    assert isinstance(status, dict)
    errors.extend(_condition_errors(status.get("conditions") or []))
    if old is not None:
        old_status = old.get("status") or {}
        new_types = {c.get("type") for c in status.get("conditions") or []
                     if isinstance(c, dict)}
        for ctype in _APPROVAL_TYPES:
            if any(isinstance(c, dict) and c.get("type") == ctype
                   for c in old_status.get("conditions") or []) and ctype not in new_types:
                errors.append(forbidden("status.conditions",
                                        f"updates may not remove a condition of type {ctype:s}"))
        old_cert = old_status.get("certificate")
        if old_cert and status.get("certificate") != old_cert:
            errors.append(forbidden("status.certificate",
                                    "updates may not modify existing certificate content"))
    return errors


def _spec_errors(spec: Json) -> list[Cause]:
    errors: list[Cause] = []
    request = spec.get("request")
    if not request:
        errors.append(required("spec.request"))
    else:
        problem = _csr_problem(str(request))
        if problem:
            errors.append(Cause("FieldValueInvalid", f"Invalid value: []byte{{...}}: {problem}",
                                "spec.request"))
    signer = spec.get("signerName")
    if not signer:
        errors.append(required("spec.signerName"))
    elif "/" not in str(signer) or "." not in str(signer).split("/", 1)[0]:
        errors.append(invalid("spec.signerName", signer, "must be a fully qualified domain and"
                              " path of the form 'example.com/signer-name'"))
    usages = spec.get("usages")
    if not usages:
        errors.append(Cause("FieldValueRequired", "Required value: usages must be provided",
                            "spec.usages"))
    else:
        seen: set[str] = set()
        for i, usage in enumerate(usages):
            if usage not in KNOWN_USAGES:
                errors.append(unsupported(f"spec.usages[{i}]", usage, list(KNOWN_USAGES)))
            elif usage in seen:
                errors.append(duplicate(f"spec.usages[{i}]", usage))
            seen.add(str(usage))
    seconds = spec.get("expirationSeconds")
    if isinstance(seconds, int) and seconds < 600:
        errors.append(invalid("spec.expirationSeconds", seconds,
                              "may not specify a duration less than 600 seconds (10 minutes)"))
    return errors


def _csr_problem(request: str) -> str:
    """Why spec.request (base64 of PEM) is not a certificate request; "" when it is."""
    try:
        pem = base64.b64decode(request, validate=True)
    except (binascii.Error, ValueError):
        return "PEM block type must be CERTIFICATE REQUEST"
    if b"-----BEGIN CERTIFICATE REQUEST-----" not in pem:
        return "PEM block type must be CERTIFICATE REQUEST"
    try:
        x509.load_pem_x509_csr(pem)
    except ValueError as err:
        return str(err)
    return ""


def _condition_errors(conditions: list[Any]) -> list[Cause]:
    errors: list[Cause] = []
    seen: set[str] = set()
    for i, condition in enumerate(conditions):
        path = f"status.conditions[{i}]"
        if not isinstance(condition, dict):
            errors.append(invalid(path, condition, "must be an object"))
            continue
        ctype = str(condition.get("type") or "")
        if not ctype:
            errors.append(required(f"{path}.type"))
        elif ctype in _APPROVAL_TYPES or ctype == "Failed":
            if ctype in seen:
                errors.append(duplicate(f"{path}.type", ctype))
            if condition.get("status", "True") != "True":
                errors.append(unsupported(f"{path}.status", condition.get("status"), ["True"]))
        seen.add(ctype)
    if "Approved" in seen and "Denied" in seen:
        errors.append(invalid("status.conditions", conditions,
                              "Approved and Denied conditions are mutually exclusive"))
    return errors


__all__ = ["KIND", "prepare_for_create", "prepare_for_update", "validation_errors"]
