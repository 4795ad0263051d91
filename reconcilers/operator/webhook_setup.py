"""Webhook wiring: the admission server of our kinds on every replica, its certificate, and
(outside a cluster) its ValidatingWebhookConfiguration and MutatingWebhookConfiguration.

* The validating webhooks of our kinds (`admission`) and the mutating webhook that stamps a
  graph's origin version (`defaulting`) share the server.
* In a cluster, the API server reaches the replicas through the webhook Service, and the
  configurations come with the install. Its certificate is the mounted one
  (`--webhook-cert-dir` holding `tls.crt`/`tls.key`, from cert-manager say), or else one the
  operator makes and keeps itself in a Secret, injecting its CA into that configuration's
  caBundle (`controller.webhook_certs`).
* With `--webhook-url URL` (a local process, the quickstart, e2e), the operator also creates and
  keeps the configurations itself, `clientConfig.url` being URL plus each path, with the CA of
  its certificate. Replicas on one host share the port (SO_REUSEPORT), so one going away leaves
  the others answering.
* The same server answers the CRDs' ConversionReviews on `/convert`, and a cluster-wide
  operator keeps our CRDs' `spec.conversion` pointing at it (`conversion_setup`).
"""

from __future__ import annotations

import base64
import datetime
import ipaddress
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import structlog

from controller.client import KubeClient
from controller.errors import ApiError, Conflict, NotFound
from controller.keeper import keep
from controller.manager import Manager
from controller.resource import Resource
from controller.webhook import TLSConfig, WebhookMetrics, WebhookServer
from controller.webhook_certs import (
    MUTATING_WEBHOOK_CONFIGURATIONS,
    VALIDATING_WEBHOOK_CONFIGURATIONS,
    ManagedCertificates,
    MountedCertificates,
)
from reconcilers.operator.admission import API_VERSIONS, WEBHOOKS, AdmissionPolicy, handler_for
from reconcilers.operator.conversion_setup import CONVERSION_CRDS, client_config, serve_conversion
from reconcilers.operator.defaulting import (
    MUTATING_PATH,
    MUTATING_WEBHOOK_NAME,
    origin_stamp_handler,
)
from reconcilers.operator.metrics import OperatorMetrics, instrument_webhook
from reconcilers.operator.version import VERSION

log = structlog.get_logger("reconcilers.operator.webhooks")

Json = dict[str, Any]

__all__ = ["WebhookSettings", "desired_configuration", "desired_mutating_configuration",
           "operator_identity", "set_up_webhooks"]

AUTHENTICATION_V1 = "/apis/authentication.k8s.io/v1"
SELF_SUBJECT_REVIEWS = f"{AUTHENTICATION_V1}/selfsubjectreviews"
TOKEN_REVIEWS = f"{AUTHENTICATION_V1}/tokenreviews"


@dataclass(frozen=True)
class WebhookSettings:
    """What the flags say about webhooks."""

    port: int = 9443
    cert_dir: Path = Path("/tmp/k8s-webhook-server/serving-certs")
    url: str = ""
    namespace: str = "default"
    service_name: str = "dynamo-operator-webhook-service"
    secret_name: str = "dynamo-operator-webhook-server-cert"
    configuration_name: str = "dynamo-operator-validating"
    mutating_configuration_name: str = "dynamo-operator-mutating"
    cert_validity: float = 365 * 24 * 3600.0
    #: Only this namespace is validated (namespace-restricted mode).
    restricted_namespace: str | None = None
    failure_policy: str = "Fail"


async def operator_identity(client: KubeClient) -> str | None:
    """The username the operator's own requests carry (SelfSubjectReview), or None."""
    if not await _served(client, AUTHENTICATION_V1, "selfsubjectreviews"):
        # Kubernetes before 1.27/1.28: asking anyway is a 403 (RBAC is asked before the
        # resource is looked up), so ask a TokenReview instead.
        username = await _reviewed_token_user(client)
        if username is None:
            log.warning("cannot read the operator's own identity",
                        error="SelfSubjectReview not served; no TokenReview of its own token")
        return username
    try:
        review = await client.request("POST", SELF_SUBJECT_REVIEWS, body={
            "apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})
    except (ApiError, OSError, TimeoutError) as err:
        log.warning("cannot read the operator's own identity", error=str(err))
        return None
    username = ((review.get("status") or {}).get("userInfo") or {}).get("username")
    return str(username) if username else None


async def _served(client: KubeClient, group_version: str, resource: str) -> bool:
    try:
        listing = await client.request("GET", group_version)
    except (ApiError, OSError, TimeoutError):
        return False
    return any(r.get("name") == resource for r in listing.get("resources") or ())


async def _reviewed_token_user(client: KubeClient) -> str | None:
    """Where SelfSubjectReview is not served (Kubernetes before 1.27): the user of a
    TokenReview of the operator's own bearer token (the chart grants `create tokenreviews`
    for its secure /metrics). Without it, an operator whose ServiceAccount is not named like
    the original's refuses its own writes of adapter-owned replicas."""
    token = await client.bearer_token()
    if not token:
        return None
    try:
        review = await client.request("POST", TOKEN_REVIEWS, body={
            "apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
            "spec": {"token": token}})
    except (ApiError, OSError, TimeoutError):
        return None
    status = review.get("status") or {}
    username = (status.get("user") or {}).get("username") if status.get("authenticated") \
        else None
    return str(username) if username else None


def _names(settings: WebhookSettings) -> tuple[list[str], list[str]]:
    """The DNS names and IP addresses the serving certificate is for."""
    if settings.url:
        host = urlsplit(settings.url).hostname or "localhost"
        try:
            ipaddress.ip_address(host)
        except ValueError:
            return [host], []
        return ["localhost"], [host]
    svc, ns = settings.service_name, settings.namespace
    return [f"{svc}.{ns}.svc", f"{svc}.{ns}.svc.cluster.local", f"{svc}.{ns}", svc], []


async def set_up_webhooks(manager: Manager, settings: WebhookSettings,
                          skip_namespace: Callable[[str], bool] = lambda _: False,
                          *, operator_metrics: OperatorMetrics | None = None,
                          grove_enabled: bool = False) -> WebhookServer:
    """Register the webhook server, its certificate source and (with a URL) the configuration
    keeper as runnables of `manager`; /readyz waits for the server. Objects of namespaces
    `skip_namespace` names are admitted unchecked; `grove_enabled`: Grove runs graphs (their
    topology fields are judged by the ClusterTopologies they name)."""
    policy = AdmissionPolicy(operator_identity=await operator_identity(manager.client),
                             namespace_restricted=settings.restricted_namespace is not None,
                             skip_namespace=skip_namespace, grove_enabled=grove_enabled)
    # Our CRDs are the cluster's: only a cluster-wide operator points them at itself.
    keeps_no_crds = settings.restricted_namespace is not None
    tls = TLSConfig()
    server = WebhookServer(tls, WebhookMetrics(manager.metrics.registry), port=settings.port,
                           reuse_port=True)
    for webhook in WEBHOOKS:
        handler = handler_for(webhook, policy, manager.client)
        if operator_metrics is not None:  # dynamo_operator_webhook_*
            handler = instrument_webhook(operator_metrics, webhook.kind.__name__, handler)
        server.register(webhook.path, handler)
    server.register(MUTATING_PATH, origin_stamp_handler(VERSION))
    ca_bundle: Callable[[], bytes | None]
    managed_ca = False
    if MountedCertificates.present(settings.cert_dir):
        mounted = MountedCertificates(settings.cert_dir, tls)
        mounted.load()
        manager.add_runnable("webhook certificates", mounted.run)
        ca_file = settings.cert_dir / "ca.crt"
        ca_bundle = lambda: ca_file.read_bytes() if ca_file.is_file() else None  # noqa: E731
        log.info("webhook certificate mounted", directory=str(settings.cert_dir))
    else:
        dns_names, ips = _names(settings)
        managed = ManagedCertificates(
            manager.client, tls, settings.namespace, settings.secret_name, dns_names, ips,
            configurations=(settings.configuration_name,),
            mutating_configurations=(settings.mutating_configuration_name,),
            conversion_crds=() if keeps_no_crds else CONVERSION_CRDS,
            validity=datetime.timedelta(seconds=settings.cert_validity),
            ca_validity=datetime.timedelta(seconds=settings.cert_validity * 10))
        manager.add_runnable("webhook certificates", managed.run)
        ca_bundle = lambda: managed.ca_pem or None  # noqa: E731
        managed_ca = True
    manager.add_runnable("webhook server", server.run)
    manager.add_readiness_check(lambda: server.ready)
    interval = min(10.0, max(0.5, settings.cert_validity / 10))
    conversion = None if keeps_no_crds else client_config(
        settings.url, settings.namespace, settings.service_name)
    serve_conversion(manager, server, conversion, ca_bundle, keeps_ca_bundle=not managed_ca,
                     interval=interval)
    if settings.url:
        keeper = ConfigurationKeeper(manager.client, settings, ca_bundle, interval=interval,
                                     keeps_ca_bundle=not managed_ca)
        manager.add_runnable("webhook configuration", keeper.run)
        mutating = ConfigurationKeeper(manager.client, settings, ca_bundle, interval=interval,
                                       keeps_ca_bundle=not managed_ca,
                                       resource=MUTATING_WEBHOOK_CONFIGURATIONS,
                                       build=desired_mutating_configuration)
        manager.add_runnable("mutating webhook configuration", mutating.run)
    return server


def _namespace_selector(settings: WebhookSettings) -> Json:
    if settings.restricted_namespace:
        return {"matchLabels": {"kubernetes.io/metadata.name": settings.restricted_namespace}}
    return {"matchExpressions": [{"key": "kubernetes.io/metadata.name",
                                  "operator": "NotIn", "values": ["kube-system"]}]}


def desired_mutating_configuration(settings: WebhookSettings, ca_pem: bytes | None) -> Json:
    """Our MutatingWebhookConfiguration (the graphs' origin stamp), calling `settings.url`."""
    client_config: Json = {"url": settings.url.rstrip("/") + MUTATING_PATH}
    if ca_pem:
        client_config["caBundle"] = base64.b64encode(ca_pem).decode()
    hook = {
        "name": MUTATING_WEBHOOK_NAME, "clientConfig": client_config,
        "rules": [{"apiGroups": ["nvidia.com"], "apiVersions": list(API_VERSIONS),
                   "operations": ["CREATE", "UPDATE"], "resources": ["dynamographdeployments"],
                   "scope": "Namespaced"}],
        "failurePolicy": settings.failure_policy, "matchPolicy": "Equivalent",
        "sideEffects": "None", "admissionReviewVersions": ["v1"], "timeoutSeconds": 10,
        "namespaceSelector": _namespace_selector(settings), "objectSelector": {},
        "reinvocationPolicy": "Never"}
    return {"apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "MutatingWebhookConfiguration",
            "metadata": {"name": settings.mutating_configuration_name,
                         "labels": {"app.kubernetes.io/managed-by": "dynamo-operator"}},
            "webhooks": [hook]}


def desired_configuration(settings: WebhookSettings, ca_pem: bytes | None) -> Json:
    """Our ValidatingWebhookConfiguration, calling `settings.url` plus each path."""
    selector = _namespace_selector(settings)
    webhooks = []
    for webhook in WEBHOOKS:
        client_config: Json = {"url": settings.url.rstrip("/") + webhook.path}
        if ca_pem:
            client_config["caBundle"] = base64.b64encode(ca_pem).decode()
        webhooks.append({
            "name": webhook.name, "clientConfig": client_config,
            # Both versions: each object reaches the handler as written (no conversion).
            "rules": [{"apiGroups": ["nvidia.com"], "apiVersions": list(API_VERSIONS),
                       "operations": ["CREATE", "UPDATE"], "resources": [webhook.plural],
                       "scope": "Namespaced"}],
            "failurePolicy": settings.failure_policy, "matchPolicy": "Equivalent",
            "sideEffects": "None", "admissionReviewVersions": ["v1"], "timeoutSeconds": 10,
            "namespaceSelector": selector, "objectSelector": {}})
    return {"apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": settings.configuration_name,
                         "labels": {"app.kubernetes.io/managed-by": "dynamo-operator"}},
            "webhooks": webhooks}


@dataclass
class ConfigurationKeeper:
    """Creates one of our webhook configurations (the validating one by default) and puts
    it back when it drifts."""

    client: KubeClient
    settings: WebhookSettings
    ca_bundle: Callable[[], bytes | None]
    interval: float = 10.0
    #: False when `ManagedCertificates` keeps the caBundle: then a live one is left alone.
    keeps_ca_bundle: bool = True
    resource: Resource = VALIDATING_WEBHOOK_CONFIGURATIONS
    build: Callable[[WebhookSettings, bytes | None], Json] = desired_configuration

    async def run(self) -> None:
        await keep(self.ensure, interval=self.interval, what="the webhook configuration")

    async def ensure(self) -> bool:
        """Write the configuration if it differs; False while the CA is not known yet."""
        ca_pem = self.ca_bundle()
        if ca_pem is None:
            return False
        desired = self.build(self.settings, ca_pem)
        name = desired["metadata"]["name"]
        try:
            live = await self.client.get(self.resource, None, name)
        except NotFound:
            try:
                await self.client.create(self.resource, desired)
                log.info("webhook configuration created", name=name)
            except Conflict:
                pass
            return True
        if not self.keeps_ca_bundle:
            live_bundles = {w.get("name"): (w.get("clientConfig") or {}).get("caBundle")
                            for w in live.get("webhooks") or []}
            for hook in desired["webhooks"]:
                if live_bundles.get(hook["name"]):
                    hook["clientConfig"]["caBundle"] = live_bundles[hook["name"]]
        if live.get("webhooks") != desired["webhooks"]:
            desired["metadata"] = {**live["metadata"], **desired["metadata"]}
            try:
                await self.client.update(self.resource, desired)
                log.info("webhook configuration updated", name=name)
            except Conflict:
                return False
        return True
