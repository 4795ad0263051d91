"""X.509 for a webhook server: a private CA and serving certificates it signs, as PEM bytes.

EC P-256 keys (fast to make), SHA-256 signatures. A serving certificate names DNS names and IP
addresses as subject alternative names and is valid for server authentication only. Nothing
here does I/O; `controller.webhook_certs` decides where certificates live and when they rotate.
"""

from __future__ import annotations

import datetime
import ipaddress
from collections.abc import Sequence
from dataclasses import dataclass

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

__all__ = ["BACKDATE", "CertificateAuthority", "ServingCertificate", "issued", "lifetime",
           "new_authority", "not_after", "serving_certificate"]

#: Backdating, so a clock a little behind ours still accepts a fresh certificate.
BACKDATE = datetime.timedelta(minutes=5)
_SKEW = BACKDATE


@dataclass(frozen=True)
class CertificateAuthority:
    """A CA certificate and its key."""

    cert_pem: bytes
    key_pem: bytes


@dataclass(frozen=True)
class ServingCertificate:
    """A server certificate, its key, and the CA certificate that verifies it."""

    cert_pem: bytes
    key_pem: bytes
    ca_pem: bytes


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def new_authority(common_name: str, validity: datetime.timedelta) -> CertificateAuthority:
    """A self-signed CA valid from now for `validity`. Its name carries its start time, so
    that verifiers holding an old and a new CA (during a renewal) tell them apart."""
    key = ec.generate_private_key(ec.SECP256R1())
    now = _now()
    name = _name(f"{common_name}@{int(now.timestamp())}")
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - _SKEW)
        .not_valid_after(now + validity)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()),
                       critical=False)
        .add_extension(x509.KeyUsage(
            digital_signature=True, key_cert_sign=True, crl_sign=True, content_commitment=False,
            key_encipherment=False, data_encipherment=False, key_agreement=False,
            encipher_only=False, decipher_only=False), critical=True)
        .sign(key, hashes.SHA256())
    )
    return CertificateAuthority(cert.public_bytes(serialization.Encoding.PEM), _key_pem(key))


def serving_certificate(ca: CertificateAuthority, dns_names: Sequence[str],
                        ip_addresses: Sequence[str] = (),
                        validity: datetime.timedelta = datetime.timedelta(days=365),
                        ) -> ServingCertificate:
    """A server certificate for `dns_names` and `ip_addresses`, signed by `ca`, valid for
    `validity` but never beyond the CA."""
    ca_cert = x509.load_pem_x509_certificate(ca.cert_pem)
    ca_key = serialization.load_pem_private_key(ca.key_pem, password=None)
    if not isinstance(ca_key, ec.EllipticCurvePrivateKey):
        raise ValueError("the CA key is not an EC key")
    key = ec.generate_private_key(ec.SECP256R1())
    now = _now()
    names: list[x509.GeneralName] = [x509.DNSName(n) for n in dns_names]
    names += [x509.IPAddress(ipaddress.ip_address(a)) for a in ip_addresses]
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(dns_names[0] if dns_names else "webhook"))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - _SKEW)
        .not_valid_after(min(now + validity, ca_cert.not_valid_after_utc))
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
                       critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    return ServingCertificate(cert.public_bytes(serialization.Encoding.PEM), _key_pem(key),
                              ca.cert_pem)


def not_after(cert_pem: bytes) -> datetime.datetime:
    """When the first certificate in `cert_pem` expires."""
    return x509.load_pem_x509_certificate(cert_pem).not_valid_after_utc


def issued(cert_pem: bytes) -> tuple[datetime.datetime, datetime.datetime]:
    """(when it was made, not after) of a certificate made here: its life without the
    backdating."""
    not_before, end = lifetime(cert_pem)
    return min(not_before + BACKDATE, end), end


def lifetime(cert_pem: bytes) -> tuple[datetime.datetime, datetime.datetime]:
    """(not before, not after) of the first certificate in `cert_pem`."""
    cert = x509.load_pem_x509_certificate(cert_pem)
    return cert.not_valid_before_utc, cert.not_valid_after_utc
