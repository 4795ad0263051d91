"""Exposing a frontend outside the cluster: a networking.k8s.io Ingress, or an Istio
VirtualService when the operator runs with a gateway."""

from __future__ import annotations

from typing import Any

from api.v1alpha1 import IngressSpec
from backends import constants
from backends.settings import OperatorSettings

Json = dict[str, Any]

__all__ = ["ingress", "ingress_host", "virtual_service"]


def ingress_host(spec: IngressSpec) -> str:
    """`<hostPrefix><host>.<hostSuffix>`, the suffix being "local" when not given."""
    suffix = spec.host_suffix or constants.DEFAULT_INGRESS_SUFFIX
    return f"{spec.host_prefix or ''}{spec.host or ''}.{suffix}"


def ingress(
    name: str,
    namespace: str,
    spec: IngressSpec | None,
    *,
    object_labels: dict[str, str],
) -> Json | None:
    """The Ingress routing the host to Service `name` port 8000, or None when the spec does not
    ask for one (disabled, or no ingress class)."""
    if spec is None or not spec.enabled or not spec.ingress_controller_class_name:
        return None
    host = ingress_host(spec)
    backend = {"service": {"name": name, "port": {"number": constants.FRONTEND_PORT}}}
    body: Json = {
        "ingressClassName": spec.ingress_controller_class_name,
        "rules": [
            {
                "host": host,
                "http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": backend}]},
            }
        ],
    }
    if spec.tls is not None and spec.tls.secret_name:
        body["tls"] = [{"hosts": [host], "secretName": spec.tls.secret_name}]
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": _metadata(name, namespace, spec, object_labels),
        "spec": body,
    }


def virtual_service(
    name: str,
    namespace: str,
    spec: IngressSpec | None,
    settings: OperatorSettings,
    *,
    object_labels: dict[str, str],
) -> Json | None:
    """The Istio VirtualService routing the host to Service `name` port 8000, or None unless
    the operator has a gateway and the spec enables a VirtualService with a gateway."""
    if (
        not settings.virtual_service_gateway
        or spec is None
        or not spec.enabled
        or not spec.use_virtual_service
        or not spec.virtual_service_gateway
    ):
        return None
    destination = {"host": name, "port": {"number": constants.FRONTEND_PORT}}
    return {
        "apiVersion": constants.ISTIO_API_VERSION,
        "kind": "VirtualService",
        "metadata": _metadata(name, namespace, spec, object_labels),
        "spec": {
            "hosts": [ingress_host(spec)],
            "gateways": [spec.virtual_service_gateway],
            "http": [
                {"match": [{"uri": {"prefix": "/"}}], "route": [{"destination": destination}]}
            ],
        },
    }


def _metadata(
    name: str,
    namespace: str,
    spec: IngressSpec,
    object_labels: dict[str, str],
) -> Json:
    meta: Json = {"name": name, "namespace": namespace}
    all_labels = {**(spec.labels or {}), **object_labels}
    if all_labels:
        meta["labels"] = all_labels
    if spec.annotations:
        meta["annotations"] = dict(spec.annotations)
    return meta
