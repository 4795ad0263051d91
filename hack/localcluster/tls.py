"""A throwaway certificate authority, the API server's serving certificate, and the admin's
client certificate (CN kubernetes-admin, O system:masters, as kind's and kubeadm's
kubeconfigs carry one).

The server asks every client for a certificate and accepts those its CA signed (Go's
VerifyClientCertIfGiven): the subject's common name is the user, its organizations the groups.
"""

from __future__ import annotations

import datetime
import ipaddress
import ssl
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

#: The admin's client certificate subject: (common name, organizations).
ADMIN_SUBJECT = ("kubernetes-admin", ("system:masters",))
_FILES = ("ca.crt", "apiserver.crt", "apiserver.key", "ca.key", "admin.crt", "admin.key")


@dataclass(frozen=True)
class ServingCerts:
    """PEM bytes of the CA certificate, the server's certificate and key, the CA's key and
    the admin's client certificate and key."""

    ca_pem: bytes
    cert_pem: bytes
    key_pem: bytes
    ca_key_pem: bytes
    admin_cert_pem: bytes
    admin_key_pem: bytes

    def server_context(self, directory: Path) -> ssl.SSLContext:
        cert, key = directory / "apiserver.crt", directory / "apiserver.key"
        cert.write_bytes(self.cert_pem)
        key.write_bytes(self.key_pem)
        key.chmod(0o600)
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ctx.load_cert_chain(cert, key)
        ctx.verify_mode = ssl.CERT_OPTIONAL  # a certificate when the client has one
        ctx.load_verify_locations(cadata=self.ca_pem.decode())
        return ctx


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def generate() -> ServingCerts:
    """A CA and a certificate for localhost, 127.0.0.1 and ::1 (EC P-256: fast to make)."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(_name("localcluster-ca"))
        .issuer_name(_name("localcluster-ca"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=365))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(
            digital_signature=True, key_cert_sign=True, crl_sign=True, content_commitment=False,
            key_encipherment=False, data_encipherment=False, key_agreement=False,
            encipher_only=False, decipher_only=False), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name("kube-apiserver"))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=365))
        .add_extension(x509.SubjectAlternativeName([
            x509.DNSName("localhost"),
            x509.DNSName("kubernetes.default.svc"),
            x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
            x509.IPAddress(ipaddress.ip_address("::1")),
        ]), critical=False)
        .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]),
                       critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    admin_cert, admin_key = client_certificate(ca_cert, ca_key, *ADMIN_SUBJECT)
    return ServingCerts(
        ca_pem=ca_cert.public_bytes(serialization.Encoding.PEM),
        cert_pem=cert.public_bytes(serialization.Encoding.PEM),
        key_pem=_key_pem(key),
        ca_key_pem=_key_pem(ca_key),
        admin_cert_pem=admin_cert,
        admin_key_pem=admin_key,
    )


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def client_certificate(ca_cert: x509.Certificate, ca_key: ec.EllipticCurvePrivateKey,
                       common_name: str, organizations: tuple[str, ...] = (),
                       days: int = 365) -> tuple[bytes, bytes]:
    """(certificate, key) PEM of a client certificate for `common_name` in the groups
    `organizations`, signed by the CA."""
    now = datetime.datetime.now(datetime.UTC)
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, o)
                         for o in organizations]
                        + [x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=days))
        .add_extension(x509.KeyUsage(
            digital_signature=True, key_encipherment=True, key_cert_sign=False,
            crl_sign=False, content_commitment=False, data_encipherment=False,
            key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
        .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.CLIENT_AUTH]),
                       critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    return cert.public_bytes(serialization.Encoding.PEM), _key_pem(key)


def issue_client_certificate(certs: ServingCerts, common_name: str,
                             organizations: tuple[str, ...] = ()) -> tuple[bytes, bytes]:
    """A client certificate signed by the cluster's CA (tests use it for other users)."""
    ca_cert = x509.load_pem_x509_certificate(certs.ca_pem)
    ca_key = serialization.load_pem_private_key(certs.ca_key_pem, password=None)
    assert isinstance(ca_key, ec.EllipticCurvePrivateKey)
    return client_certificate(ca_cert, ca_key, common_name, organizations)


def subject_identity(peercert: object) -> tuple[str, tuple[str, ...]] | None:
    """(common name, organizations) of a verified peer certificate as `ssl` reports it."""
    if not isinstance(peercert, dict):
        return None
    common_name, organizations = "", []
    for rdn in peercert.get("subject", ()):
        for key, value in rdn:
            if key == "commonName":
                common_name = value
            elif key == "organizationName":
                organizations.append(value)
    return (common_name, tuple(organizations)) if common_name else None


def load_or_generate(directory: Path | None) -> ServingCerts:
    """Reuse the certificates of a data directory across restarts, so kubeconfigs stay valid.

    (A directory from before client certificates, without the CA's key, gets new ones.)"""
    if directory is not None:
        files = [directory / n for n in _FILES]
        if all(f.exists() for f in files):
            return ServingCerts(*(f.read_bytes() for f in files))
    certs = generate()
    if directory is not None:
        directory.mkdir(parents=True, exist_ok=True)
        for name, pem in zip(_FILES, (certs.ca_pem, certs.cert_pem, certs.key_pem,
                                      certs.ca_key_pem, certs.admin_cert_pem,
                                      certs.admin_key_pem), strict=True):
            (directory / name).write_bytes(pem)
            if name.endswith(".key"):
                (directory / name).chmod(0o600)
    return certs
