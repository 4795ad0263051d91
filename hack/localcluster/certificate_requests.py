"""CertificateSigningRequests (certificates.k8s.io/v1): the registry strategy of the kind.

As kube-apiserver's `pkg/registry/certificates/certificates` strategy does:

* create: spec.username, uid, groups and extra are the requester's, whatever the body says;
  the status is dropped;
* an update of the object itself changes metadata only (spec and status stay as stored);
* `/status` writes the status (the certificate, other conditions) but may not add, remove or
  change Approved and Denied conditions; `/approval` writes the conditions (keeping Failed
  ones and the certificate as stored);
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
from .go_format import go_quote
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


def prepare_for_update(obj: Json, old: Json, subresource: str, now: str) -> list[Cause]:
    """Keep what the write may not change (see the module docstring); the errors only a write
    of this subresource can make (Approved or Denied added or changed through `/status`)."""
    obj["spec"] = old.get("spec")
    old_status = old.get("status") or {}
    if subresource not in ("status", "approval"):
        if old_status:
            obj["status"] = old_status
        else:
            obj.pop("status", None)
        return []
    status = obj.get("status")
    if not isinstance(status, dict):
        status = {}
    status["conditions"] = [c for c in status.get("conditions") or [] if isinstance(c, dict)]
    old_conditions = [c for c in old_status.get("conditions") or [] if isinstance(c, dict)]
    errors: list[Cause] = []
    if subresource == "status":
        for ctype in _APPROVAL_TYPES:
            if not _preserve_instances(status["conditions"], old_conditions, ctype):
                errors.append(_changed(status["conditions"], old_conditions, ctype))
    else:
        if old_status.get("certificate"):
            status["certificate"] = old_status["certificate"]
        else:
            status.pop("certificate", None)
        _preserve_instances(status["conditions"], old_conditions, "Failed")
    for condition in status["conditions"]:
        condition.setdefault("status", "True")
        condition.setdefault("lastUpdateTime", now)
        if "lastTransitionTime" not in condition:
            same = next((c for c in old_conditions if c.get("type") == condition.get("type")
                         and c.get("status") == condition["status"]), None)
            condition["lastTransitionTime"] = (same or {}).get("lastTransitionTime") or now
    if not status["conditions"]:
        del status["conditions"]
    if status:
        obj["status"] = status
    else:
        obj.pop("status", None)
    return errors


def _preserve_instances(conditions: list[Json], old: list[Json], ctype: str) -> bool:
    """preserveConditionInstances: the stored conditions of `ctype` back in place; False when
    the write added or removed some (then they stay as written, for validation to refuse)."""
    new_at = [i for i, c in enumerate(conditions) if c.get("type") == ctype]
    old_of = [c for c in old if c.get("type") == ctype]
    if len(new_at) != len(old_of):
        return False
    for index, condition in zip(new_at, old_of, strict=True):
        conditions[index] = dict(condition)
    return True


def _changed(conditions: list[Json], old: list[Json], ctype: str) -> Cause:
    added = sum(c.get("type") == ctype for c in conditions) > sum(
        c.get("type") == ctype for c in old)
    verb = "add" if added else "remove"
    return forbidden("status.conditions", f"updates may not {verb} a condition of type"
                                          f" {go_quote(ctype)}")


def validation_errors(obj: Json, old: Json | None) -> list[Cause]:
    """ValidateCertificateSigningRequest{Create,Update}: the spec, the conditions, no
    Approved, Denied or Failed condition removed, an issued certificate never changed."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return [required("spec")]
    errors = _spec_errors(spec)
    status = obj.get("status") if isinstance(obj.get("status"), dict) else {}
    assert isinstance(status, dict)
    conditions = [c for c in status.get("conditions") or [] if isinstance(c, dict)]
    errors.extend(_condition_errors(status.get("conditions") or []))
    if old is not None:
        old_status = old.get("status") or {}
        old_conditions = [c for c in old_status.get("conditions") or [] if isinstance(c, dict)]
        for ctype in (*_APPROVAL_TYPES, "Failed"):
            if sum(c.get("type") == ctype for c in conditions) < sum(
                    c.get("type") == ctype for c in old_conditions):
                errors.append(forbidden("status.conditions", "updates may not remove a"
                                        f" condition of type {go_quote(ctype)}"))
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
        allowed = ["True"] if ctype in (*_APPROVAL_TYPES, "Failed") else [
            "False", "True", "Unknown"]
        if condition.get("status", "True") not in allowed:
            errors.append(unsupported(f"{path}.status", condition.get("status"), allowed))
        other = {"Approved": "Denied", "Denied": "Approved"}.get(ctype)
        if other is not None and other in seen:
            errors.append(invalid("status.conditions", ctype,
                                  "Approved and Denied conditions are mutually exclusive"))
        if ctype and ctype in seen:
            errors.append(duplicate(f"{path}.type", ctype))
        seen.add(ctype)
    return errors


__all__ = ["KIND", "prepare_for_create", "prepare_for_update", "validation_errors"]
