"""The `default/kubernetes` Service and its endpoints, as kube-apiserver keeps them.

At start kube-apiserver's control-plane controller makes sure the Service `kubernetes` in
`default` exists (ClusterIP, the first address of the service range, port 443 `https` to the
server's secure port, labels component=apiserver and provider=kubernetes), and its endpoint
reconciler writes the Endpoints (labelled skip-mirror) and the EndpointSlice `kubernetes`
(labelled with the service name) that point at the server's address and port; it puts them
back when they are deleted (`is_own` tells the server which changes those are).
"""

from __future__ import annotations

import contextlib
import ipaddress
from typing import Any

from .errors import ApiError
from .operations import Operations, WriteOptions

Json = dict[str, Any]
NAME, NAMESPACE = "kubernetes", "default"
CLUSTER_IP = "10.96.0.1"
_WRITER = WriteOptions(manager="kube-apiserver")


def desired_objects(address: str, port: int) -> list[tuple[tuple[str, str, str], Json]]:
    """((group, version, plural), object) of the Service, Endpoints and EndpointSlice."""
    meta = {"name": NAME, "namespace": NAMESPACE}
    service = {"metadata": {**meta, "labels": {"component": "apiserver",
                                               "provider": "kubernetes"}},
               "spec": {"type": "ClusterIP", "clusterIP": CLUSTER_IP,
                        "clusterIPs": [CLUSTER_IP], "sessionAffinity": "None",
                        "ports": [{"name": "https", "port": 443, "protocol": "TCP",
                                   "targetPort": port}]}}
    endpoint_port = {"name": "https", "port": port, "protocol": "TCP"}
    endpoints = {"metadata": {**meta, "labels": {
                     "endpointslice.kubernetes.io/skip-mirror": "true"}},
                 "subsets": [{"addresses": [{"ip": address}], "ports": [endpoint_port]}]}
    address_type = "IPv6" if ":" in address else "IPv4"
    endpoint_slice = {"metadata": {**meta, "labels": {"kubernetes.io/service-name": NAME}},
                      "addressType": address_type,
                      "endpoints": [{"addresses": [address], "conditions": {"ready": True}}],
                      "ports": [endpoint_port]}
    return [(("", "v1", "services"), service), (("", "v1", "endpoints"), endpoints),
            (("discovery.k8s.io", "v1", "endpointslices"), endpoint_slice)]


def advertised(host: str) -> str:
    """The address the endpoints name: the listening address, or loopback when the server
    listens on every address or on a name (kube-apiserver's --advertise-address)."""
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return "127.0.0.1"
    return "127.0.0.1" if ip.is_unspecified else str(ip)


def ensure(ops: Operations, host: str, port: int) -> None:
    """Create the three objects, or bring their ports and addresses up to date."""
    address = advertised(host)
    for (group, version, plural), obj in desired_objects(address, port):
        rt = ops.registry.get(group, version, plural)
        if rt is None:
            continue
        current = ops.storage.get(rt.stored_as, NAMESPACE, NAME)
        with contextlib.suppress(ApiError):
            if current is None:
                ops.create(rt, NAMESPACE, obj, _WRITER)
            elif _differs(current, obj):
                ops.update(rt, NAMESPACE, NAME, {**current, **{
                    k: v for k, v in obj.items() if k != "metadata"}}, _WRITER)


def is_own(resource: tuple[str, str], obj: Json) -> bool:
    """Whether a stored object is one of the three (the server puts back a deleted one)."""
    meta = obj.get("metadata") or {}
    return resource in _RESOURCES and (meta.get("namespace"), meta.get("name")) == (
        NAMESPACE, NAME)


_RESOURCES = {("", "services"), ("", "endpoints"), ("discovery.k8s.io", "endpointslices")}


def _differs(current: Json, wanted: Json) -> bool:
    """Whether what the server writes (ports, addresses) is not what is stored."""
    if current.get("kind") == "Service":
        return bool(current.get("spec", {}).get("ports") != wanted["spec"]["ports"])
    return any(current.get(k) != v for k, v in wanted.items() if k != "metadata")


__all__ = ["CLUSTER_IP", "NAME", "NAMESPACE", "advertised", "desired_objects", "ensure",
           "is_own"]
