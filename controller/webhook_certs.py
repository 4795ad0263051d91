"""Where a webhook server's certificate comes from, and how it stays fresh.

Two sources, each a manager runnable on every replica:

* `MountedCertificates`: `tls.crt` and `tls.key` in a directory (a Secret mounted by Helm or
  cert-manager). Read at start, read again when the files change; `caBundle` is someone else's
  to keep (cert-manager's CA injector, say), so it is not touched.
* `ManagedCertificates`: no certificate mounted, so the process keeps its own: a CA and a
  serving certificate for the Service's DNS names, in one Secret (`ca.crt`, `ca.key`,
  `tls.crt`, `tls.key`) that every replica shares. Whoever finds it missing creates it; whoever
  finds the serving certificate past two thirds of its life issues a new one (optimistic
  concurrency on the Secret settles races: the loser reads the winner's). The CA is renewed
  the same way, and `ca.crt` then holds the new and the old CA until the old one expires, so a
  caBundle read a moment ago still verifies. Each replica loads the Secret's certificate into
  its server without a restart, and writes `ca.crt` into the `caBundle` of every webhook of the
  named webhook configurations, and of the conversion webhook of the named
  CustomResourceDefinitions (those whose `spec.conversion` is a Webhook), when it differs.
"""

from __future__ import annotations

import asyncio
import base64
import datetime
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import structlog
from cryptography import x509

from .certificates import (
    CertificateAuthority,
    issued,
    lifetime,
    new_authority,
    serving_certificate,
)
from .client import KubeClient
from .errors import ApiError, Conflict, NotFound
from .resource import Resource
from .webhook import TLSConfig

log = structlog.get_logger("controller.webhook_certs")

Json = dict[str, Any]

__all__ = ["CUSTOM_RESOURCE_DEFINITIONS", "MUTATING_WEBHOOK_CONFIGURATIONS", "SECRETS",
           "VALIDATING_WEBHOOK_CONFIGURATIONS", "ManagedCertificates", "MountedCertificates",
           "newer_bundle"]

SECRETS = Resource("", "v1", "secrets", "Secret")
VALIDATING_WEBHOOK_CONFIGURATIONS = Resource(
    "admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations",
    "ValidatingWebhookConfiguration", namespaced=False)
MUTATING_WEBHOOK_CONFIGURATIONS = Resource(
    "admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations",
    "MutatingWebhookConfiguration", namespaced=False)
CUSTOM_RESOURCE_DEFINITIONS = Resource(
    "apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition",
    namespaced=False)
#: Renew when less than this share of a certificate's life is left.
RENEW_FRACTION = 1 / 3


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


def _due(cert_pem: bytes) -> bool:
    made, not_after = issued(cert_pem)
    return _now() >= not_after - (not_after - made) * RENEW_FRACTION


@dataclass
class MountedCertificates:
    """`tls.crt`/`tls.key` of `directory`, reloaded into `tls` when they change."""

    directory: Path
    tls: TLSConfig
    poll_interval: float = 10.0

    @staticmethod
    def present(directory: Path) -> bool:
        return (directory / "tls.crt").is_file() and (directory / "tls.key").is_file()

    def load(self) -> None:
        """Load the files now; OSError/ValueError/SSLError when they are unreadable."""
        if self.tls.load((self.directory / "tls.crt").read_bytes(),
                         (self.directory / "tls.key").read_bytes()):
            log.info("webhook certificate loaded", directory=str(self.directory))

    async def run(self) -> None:
        while True:
            try:
                self.load()
            except (OSError, ValueError) as err:  # half-written during a rotation: next time
                log.warning("cannot load the webhook certificate", error=str(err))
            await asyncio.sleep(self.poll_interval)


@dataclass
class ManagedCertificates:
    """A self-managed CA and serving certificate kept in a Secret (see the module doc)."""

    client: KubeClient
    tls: TLSConfig
    namespace: str
    secret_name: str
    dns_names: Sequence[str]
    ip_addresses: Sequence[str] = ()
    #: ValidatingWebhookConfigurations whose caBundle is kept equal to the CA.
    configurations: Sequence[str] = ()
    #: MutatingWebhookConfigurations whose caBundle is kept equal to the CA.
    mutating_configurations: Sequence[str] = ()
    #: CustomResourceDefinitions whose conversion webhook's caBundle is kept equal to the CA.
    conversion_crds: Sequence[str] = ()
    validity: datetime.timedelta = datetime.timedelta(days=365)
    ca_validity: datetime.timedelta = datetime.timedelta(days=3650)
    check_interval: float = 60.0
    #: Set once a certificate is loaded and the caBundles were written.
    synced: asyncio.Event = field(default_factory=asyncio.Event)
    #: The CA bundle of the certificate being served (b"" until the first sync).
    ca_pem: bytes = b""

    async def run(self) -> None:
        while True:
            try:
                await self.sync()
            except (ApiError, OSError, TimeoutError, ValueError) as err:
                log.warning("webhook certificate sync failed", error=str(err))
                await asyncio.sleep(min(self.check_interval, 5.0))
                continue
            await asyncio.sleep(self._next_check())

    def _next_check(self) -> float:
        """Until the next look: the check interval, or sooner when a renewal is near."""
        if not self.tls.valid:
            return min(self.check_interval, 1.0)
        return max(0.2, min(self.check_interval, self.validity.total_seconds() / 10))

    async def sync(self) -> None:
        """One round: the Secret right, the certificate loaded, the caBundles injected."""
        secret = await self._current_secret()
        data = _decoded(secret)
        # The API servers must trust a new CA before any replica serves a certificate of it.
        self.ca_pem = data["ca.crt"]
        for name in self.configurations:
            await self._inject(VALIDATING_WEBHOOK_CONFIGURATIONS, name, data["ca.crt"])
        for name in self.mutating_configurations:
            await self._inject(MUTATING_WEBHOOK_CONFIGURATIONS, name, data["ca.crt"])
        for name in self.conversion_crds:
            await self._inject_conversion(name, data["ca.crt"])
        if self.tls.load(data["tls.crt"], data["tls.key"]):
            log.info("webhook certificate loaded", secret=self.secret_name)
        self.synced.set()

    async def _current_secret(self) -> Json:
        for _ in range(5):
            try:
                secret = await self.client.get(SECRETS, self.namespace, self.secret_name)
            except NotFound:
                try:
                    return await self.client.create(SECRETS, self._new_secret())
                except Conflict:  # another replica created it first: read theirs
                    continue
            wanted = self._renewed(secret)
            if wanted is None:
                return secret
            try:
                return await self.client.update(SECRETS, wanted)
            except Conflict:  # another replica renewed first: read theirs
                continue
        raise TimeoutError("the webhook certificate Secret keeps changing")

    def _new_secret(self) -> Json:
        ca = new_authority(f"{self.secret_name}-ca", self.ca_validity)
        serving = serving_certificate(ca, self.dns_names, self.ip_addresses, self.validity)
        log.info("webhook certificate created", secret=self.secret_name)
        return {"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/tls",
                "metadata": {"name": self.secret_name, "namespace": self.namespace},
                "data": _encoded({"ca.crt": ca.cert_pem, "ca.key": ca.key_pem,
                                  "tls.crt": serving.cert_pem, "tls.key": serving.key_pem})}

    def _renewed(self, secret: Json) -> Json | None:
        """The Secret with new certificates when they are due, or None when it is fine."""
        try:
            data = _decoded(secret)
            ca = CertificateAuthority(_first_pem(data["ca.crt"]), data["ca.key"])
            serving_due = _due(data["tls.crt"]) or not self._names_match(data["tls.crt"])
            ca_due = _due(ca.cert_pem)
        except (KeyError, ValueError):
            data, ca, serving_due, ca_due = {}, None, True, True
        if not (serving_due or ca_due):
            return None
        bundle = data.get("ca.crt", b"")
        if ca is None or ca_due:
            ca = new_authority(f"{self.secret_name}-ca", self.ca_validity)
            bundle = ca.cert_pem + _unexpired(bundle)
        serving = serving_certificate(ca, self.dns_names, self.ip_addresses, self.validity)
        log.info("webhook certificate renewed", secret=self.secret_name, new_ca=ca_due)
        return {**secret, "type": secret.get("type") or "kubernetes.io/tls",
                "data": _encoded({"ca.crt": bundle, "ca.key": ca.key_pem,
                                  "tls.crt": serving.cert_pem, "tls.key": serving.key_pem})}

    def _names_match(self, cert_pem: bytes) -> bool:
        cert = x509.load_pem_x509_certificate(cert_pem)
        try:
            names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        except x509.ExtensionNotFound:
            return False
        have = set(names.get_values_for_type(x509.DNSName))
        have |= {str(a) for a in names.get_values_for_type(x509.IPAddress)}
        return have == {*self.dns_names, *self.ip_addresses}

    async def _inject(self, resource: Resource, name: str, bundle: bytes) -> None:
        try:
            config = await self.client.get(resource, None, name)
        except NotFound:
            return
        encoded = base64.b64encode(bundle).decode()
        webhooks = config.get("webhooks") or []
        patch = [op for i, hook in enumerate(webhooks)
                 if (hook.get("clientConfig") or {}).get("caBundle") != encoded
                 and not newer_bundle((hook.get("clientConfig") or {}).get("caBundle", ""),
                                      bundle)
                 for op in ({"op": "test", "path": f"/webhooks/{i}/name",
                             "value": hook.get("name")},
                            {"op": "add", "path": f"/webhooks/{i}/clientConfig/caBundle",
                             "value": encoded})]
        if patch:
            await self.client.patch(resource, None, name, patch, patch_type="json")
            log.info("webhook caBundle injected", configuration=name)


    async def _inject_conversion(self, name: str, bundle: bytes) -> None:
        try:
            crd = await self.client.get(CUSTOM_RESOURCE_DEFINITIONS, None, name)
        except NotFound:
            return
        conversion = (crd.get("spec") or {}).get("conversion") or {}
        config = (conversion.get("webhook") or {}).get("clientConfig")
        if conversion.get("strategy") != "Webhook" or not isinstance(config, dict):
            return  # no conversion webhook (yet): whoever writes the stanza brings the CA
        encoded = base64.b64encode(bundle).decode()
        live = config.get("caBundle") or ""
        if live == encoded or newer_bundle(live, bundle):
            return
        await self.client.patch(CUSTOM_RESOURCE_DEFINITIONS, None, name, [
            {"op": "test", "path": "/spec/conversion/strategy", "value": "Webhook"},
            {"op": "add", "path": "/spec/conversion/webhook/clientConfig/caBundle",
             "value": encoded}], patch_type="json")
        log.info("conversion webhook caBundle injected", crd=name)


def _decoded(secret: Json) -> dict[str, bytes]:
    return {k: base64.b64decode(v) for k, v in (secret.get("data") or {}).items()}


def _encoded(data: dict[str, bytes]) -> dict[str, str]:
    return {k: base64.b64encode(v).decode() for k, v in data.items()}


def _pems(bundle: bytes) -> list[bytes]:
    marker = b"-----END CERTIFICATE-----"
    return [part.strip() + b"\n" + marker + b"\n"
            for part in bundle.split(marker) if b"BEGIN CERTIFICATE" in part]


def _first_pem(bundle: bytes) -> bytes:
    pems = _pems(bundle)
    if not pems:
        raise ValueError("no certificate in ca.crt")
    return pems[0]


def _newest_start(bundle: bytes) -> datetime.datetime | None:
    starts = [lifetime(p)[0] for p in _pems(bundle)]
    return max(starts) if starts else None


def newer_bundle(encoded: str, bundle: bytes) -> bool:
    """Whether a caBundle already holds a newer CA than `bundle` (a replica that read the
    Secret just before another renewed it must not put the older bundle back)."""
    try:
        live = _newest_start(base64.b64decode(encoded))
    except ValueError:
        return False
    ours = _newest_start(bundle)
    return live is not None and ours is not None and live > ours


def _unexpired(bundle: bytes) -> bytes:
    return b"".join(p for p in _pems(bundle) if lifetime(p)[1] > _now())
