"""The conversion webhook of our five CRDs: `/convert` on the webhook server, and the CRDs
pointed at it.

The API server converts every object between `v1alpha1` and `v1beta1` through this webhook
(`api.conversion.convert`, a pure function; `controller.conversion_webhook` speaks the
ConversionReview). A cluster-wide operator also keeps each CRD's `spec.conversion` current:
the webhook Service of its namespace (or `--webhook-url` plus `/convert` outside a cluster)
and the CA of its serving certificate (`controller.crd_conversion.ConversionKeeper`), writing
only when they differ. A CRD annotated `cert-manager.io/inject-ca-from` (the dynamo-crds
chart's `certManager.injectCAFrom`) gets its caBundle from cert-manager's CA injector, as the
chart's ValidatingWebhookConfiguration does; the operator then leaves a live one alone. A
namespace-restricted operator serves `/convert` but leaves the CRDs, which are the whole
cluster's, to the cluster-wide one.

The cluster-wide operator also migrates what is stored in an older version of our CRDs to
the storage version, once, and trims `status.storedVersions`
(`controller.storage_migration`): an upgrade from CRDs that stored v1alpha1 leaves every
graph, component and request stored as v1beta1. The operator does it rather than a chart
hook because it is the one process that is sure to run after the new CRDs and its own
conversion webhook are in place (a pre- or post-upgrade hook Job would race the webhook, need
an image and RBAC of its own, and be skipped by kustomize and `kubectl apply` installs), and
because it is idempotent: a CRD already done costs one GET at start.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from api.conversion import convert
from api.crd import CRDS
from api.v1alpha1 import GROUP
from controller.conversion_webhook import ConversionMetrics, ConversionWebhook
from controller.crd_conversion import (
    ConversionKeeper,
    service_client_config,
    url_client_config,
)
from controller.manager import Manager
from controller.storage_migration import StorageMigration
from controller.webhook import WebhookServer

Json = dict[str, Any]

__all__ = ["CA_INJECTOR_ANNOTATION", "CONVERSION_CRDS", "CONVERSION_PATH", "client_config",
           "converter", "serve_conversion"]

CONVERSION_PATH = "/convert"
#: cert-manager's CA injector fills the caBundle of a CRD carrying this annotation.
CA_INJECTOR_ANNOTATION = "cert-manager.io/inject-ca-from"
#: The CRDs whose `spec.conversion` the operator keeps.
CONVERSION_CRDS: tuple[str, ...] = tuple(f"{d.plural}.{GROUP}" for d in CRDS)


def converter(obj: Json, desired_api_version: str) -> Json:
    """One object of our kinds in `desired_api_version` (a ConversionReview's). The review's
    objects are only encoded again: the result need not be a copy of its own."""
    return convert(obj, desired_api_version, detached=False)


def client_config(url: str, namespace: str, service_name: str) -> Json:
    """Where the API server calls `/convert`: `url` plus the path, else the Service."""
    if url:
        return url_client_config(url.rstrip("/") + CONVERSION_PATH)
    return service_client_config(namespace, service_name, CONVERSION_PATH)


def serve_conversion(manager: Manager, server: WebhookServer, config: Json | None,
                     ca_bundle: Callable[[], bytes | None], *, keeps_ca_bundle: bool,
                     interval: float = 10.0) -> None:
    """Route `/convert` on `server`; with a `config` (a cluster-wide operator), also keep our
    CRDs' `spec.conversion` pointing there, with `ca_bundle()` unless `ManagedCertificates`
    keeps that (`keeps_ca_bundle=False`), and migrate their stored objects to the storage
    version."""
    webhook = ConversionWebhook(ConversionMetrics(manager.metrics.registry))
    webhook.register(GROUP, converter)
    server.route(CONVERSION_PATH, webhook.handle)
    if config is None:
        return
    keeper = ConversionKeeper(manager.client, CONVERSION_CRDS, config, ca_bundle,
                              interval=interval, keeps_ca_bundle=keeps_ca_bundle,
                              injector_annotation=CA_INJECTOR_ANNOTATION)
    manager.add_runnable("conversion webhook configuration", keeper.run)
    # Objects stored before v1beta1 became the storage version are moved to it once (they
    # are listed through this webhook): the operator that serves the conversion migrates.
    migration = StorageMigration(manager.client, CONVERSION_CRDS)
    manager.add_runnable("storage version migration", migration.run)
