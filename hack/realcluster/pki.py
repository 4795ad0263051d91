"""The control plane's certificates and keys, made with `cryptography` as kubeadm would lay them.

One CA signs a serving certificate for 127.0.0.1/localhost (shared by kube-apiserver,
kube-controller-manager and kube-scheduler) and the client certificates: the admin in group
system:masters, system:kube-controller-manager and system:kube-scheduler. A second CA signs
the aggregation layer's front-proxy client; a separate key pair signs service-account tokens.
Everything is written once into a directory and reused from there on restart (`--data-dir`).
"""

from __future__ import annotations

import base64
import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

ADMIN = ("kubernetes-admin", "system:masters")
CONTROLLER_MANAGER = ("system:kube-controller-manager", None)
SCHEDULER = ("system:kube-scheduler", None)
FRONT_PROXY_CLIENT = "front-proxy-client"
VALIDITY = datetime.timedelta(days=365)


def _name(common_name: str, organization: str | None = None) -> x509.Name:
    attributes = [x509.NameAttribute(NameOID.COMMON_NAME, common_name)]
    if organization:
        attributes.insert(0, x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization))
    return x509.Name(attributes)


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _usage(*, ca: bool) -> x509.KeyUsage:
    return x509.KeyUsage(digital_signature=True, key_cert_sign=ca, crl_sign=ca,
                         key_encipherment=not ca, content_commitment=False,
                         data_encipherment=False, key_agreement=False, encipher_only=False,
                         decipher_only=False)


@dataclass(frozen=True)
class Pki:
    """Where the PEM files are; see `ensure` to make them."""

    directory: Path

    def path(self, name: str) -> Path:
        return self.directory / name

    @property
    def ca_pem(self) -> bytes:
        return self.path("ca.crt").read_bytes()

    def kubeconfig(self, server: str, user: str, cluster: str = "realcluster",
                   namespace: str = "default") -> dict[str, Any]:
        """A kubeconfig with embedded CA and the client certificate `user` (a file stem)."""
        def b64(name: str) -> str:
            return base64.b64encode(self.path(name).read_bytes()).decode()
        return {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": cluster, "cluster": {
                "server": server, "certificate-authority-data": b64("ca.crt")}}],
            "users": [{"name": f"{cluster}-{user}", "user": {
                "client-certificate-data": b64(f"{user}.crt"),
                "client-key-data": b64(f"{user}.key")}}],
            "contexts": [{"name": cluster, "context": {
                "cluster": cluster, "user": f"{cluster}-{user}", "namespace": namespace}}],
            "current-context": cluster,
            "preferences": {},
        }


def _write(path: Path, data: bytes, private: bool = False) -> None:
    path.write_bytes(data)
    if private:
        path.chmod(0o600)


def _ca(pki: Pki, stem: str, now: datetime.datetime) -> tuple[ec.EllipticCurvePrivateKey,
                                                              x509.Name]:
    """A self-signed CA written as `stem`.crt/.key; its key and name."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = _name(f"realcluster-{stem}")
    cert = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name)
        .public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + VALIDITY)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(_usage(ca=True), critical=True)
        .sign(key, hashes.SHA256()))
    _write(pki.path(f"{stem}.crt"), cert.public_bytes(serialization.Encoding.PEM))
    _write(pki.path(f"{stem}.key"), _key_pem(key), private=True)
    return key, name


def _leaf(pki: Pki, stem: str, issuer: tuple[ec.EllipticCurvePrivateKey, x509.Name],
          subject: x509.Name, usage: x509.ObjectIdentifier, now: datetime.datetime,
          sans: list[x509.GeneralName] | None = None) -> None:
    """A certificate for `subject` signed by `issuer`, written as `stem`.crt/.key."""
    key = ec.generate_private_key(ec.SECP256R1())
    builder = (
        x509.CertificateBuilder().subject_name(subject).issuer_name(issuer[1])
        .public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + VALIDITY)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(_usage(ca=False), critical=True)
        .add_extension(x509.ExtendedKeyUsage([usage]), critical=False))
    if sans:
        builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
    cert = builder.sign(issuer[0], hashes.SHA256())
    _write(pki.path(f"{stem}.crt"), cert.public_bytes(serialization.Encoding.PEM))
    _write(pki.path(f"{stem}.key"), _key_pem(key), private=True)


def ensure(directory: Path) -> Pki:
    """The PKI in `directory`, generated unless it is already complete there."""
    pki = Pki(directory)
    names = ("ca", "serving", "admin", "controller-manager", "scheduler", "front-proxy-ca",
             "front-proxy-client")
    wanted = [f"{n}.{ext}" for n in names for ext in ("crt", "key")] + ["sa.key", "sa.pub"]
    if all(pki.path(name).exists() for name in wanted):
        return pki
    directory.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.UTC)
    ca = _ca(pki, "ca", now)
    _leaf(pki, "serving", ca, _name("kube-apiserver"), ExtendedKeyUsageOID.SERVER_AUTH, now, [
        x509.DNSName("localhost"), x509.DNSName("kubernetes"),
        x509.DNSName("kubernetes.default"), x509.DNSName("kubernetes.default.svc"),
        x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
        x509.IPAddress(ipaddress.ip_address("::1"))])
    for stem, (user, group) in (("admin", ADMIN), ("controller-manager", CONTROLLER_MANAGER),
                                ("scheduler", SCHEDULER)):
        _leaf(pki, stem, ca, _name(user, group), ExtendedKeyUsageOID.CLIENT_AUTH, now)
    # The aggregation layer's front proxy, as kubeadm lays it: its own CA and client.
    front_proxy = _ca(pki, "front-proxy-ca", now)
    _leaf(pki, "front-proxy-client", front_proxy, _name(FRONT_PROXY_CLIENT),
          ExtendedKeyUsageOID.CLIENT_AUTH, now)
    sa_key = ec.generate_private_key(ec.SECP256R1())
    _write(pki.path("sa.key"), _key_pem(sa_key), private=True)
    _write(pki.path("sa.pub"), sa_key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    return pki
