"""Printers of the core group: Service, Endpoints, Node, Namespace, ConfigMap, Secret and
ServiceAccount (Pods, Events and volumes have modules of their own)."""

from __future__ import annotations

import ipaddress
from datetime import datetime
from typing import Any

from .cells import (
    as_dict,
    as_int,
    as_list,
    as_str,
    format_labels,
    load_balancer_ingress,
    named_row,
)
from .columns import Col, Printer, Row, named_columns

Json = dict[str, Any]

__all__ = ["PRINTERS"]

_DOCS = {
    "svc.type": "type determines how the Service is exposed. Defaults to ClusterIP. Valid options "
    "are ExternalName, ClusterIP, NodePort, and LoadBalancer.",
    "svc.clusterIP": "clusterIP is the IP address of the service and is usually assigned randomly.",
    "svc.externalIPs": "externalIPs is a list of IP addresses for which nodes in the cluster will "
    "also accept traffic for this service.",
    "svc.ports": "The list of ports that are exposed by this service. More info: https://"
    "kubernetes.io/docs/concepts/services-networking/service/#virtual-ips-and-service-proxies",
    "svc.selector": "Route service traffic to pods with label keys and values matching this "
    "selector. More info: https://kubernetes.io/docs/concepts/services-networking/service/",
    "node.kubelet": "Kubelet Version reported by the node.",
    "node.addresses": "List of addresses reachable to the node. Queried from cloud provider, if "
    "available. More info: https://kubernetes.io/docs/reference/node/node-status/#addresses",
    "node.os": "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 "
    "(wheezy)).",
    "node.kernel": "Kernel Version reported by the node from 'uname -r' (e.g. "
    "3.16.0-0.bpo.4-amd64).",
    "node.runtime": "ContainerRuntime Version reported by the node through runtime remote API "
    "(e.g. containerd://1.4.2).",
    "secret.type": "Used to facilitate programmatic handling of secret data.",
    "secret.data": "Data contains the secret data. Each key must consist of alphanumeric "
    "characters, '-', '_' or '.'. The serialized form of the secret data is a base64 encoded "
    "string, representing the arbitrary (possibly non-string) data value here. Described in "
    "https://tools.ietf.org/html/rfc4648#section-4",
    "sa.secrets": "Secrets is a list of the secrets in the same namespace that pods running using "
    "this ServiceAccount are allowed to use. Pods are only limited to this list if this service "
    "account has a \"kubernetes.io/enforce-mountable-secrets\" annotation set to \"true\". The "
    "\"kubernetes.io/enforce-mountable-secrets\" annotation is deprecated since v1.32. Prefer "
    "separate namespaces to isolate access to mounted secrets. This field should not be used to "
    "find auto-generated service account token secrets for use outside of pods. Instead, tokens "
    "can be requested directly using the TokenRequest API, or service account token secrets can "
    "be manually created. More info: https://kubernetes.io/docs/concepts/configuration/secret",
    "cm.data": "Data contains the configuration data. Each key must consist of alphanumeric "
    "characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use the BinaryData "
    "field. The keys stored in Data must not overlap with the keys in the BinaryData field, this "
    "is enforced during validation process.",
    "endpoints.subsets": "The set of all endpoints is the union of all subsets.",
}


def _service_external_ip(spec: Json, status: Json, svc_type: str) -> str:
    external = [as_str(ip) for ip in as_list(spec.get("externalIPs"))]
    if svc_type in ("ClusterIP", "NodePort"):
        return ",".join(external) if external else "<none>"
    if svc_type == "LoadBalancer":
        lb = load_balancer_ingress(status)
        if external:
            return ",".join(([*lb.split(",")] if lb else []) + external)
        return lb or "<pending>"
    if svc_type == "ExternalName":
        return as_str(spec.get("externalName"))
    return "<unknown>"


def _service_ports(spec: Json) -> str:
    ports = []
    for raw in as_list(spec.get("ports")):
        p = as_dict(raw)
        protocol = as_str(p.get("protocol")) or "TCP"
        if as_int(p.get("nodePort")) > 0:
            ports.append(f"{as_int(p.get('port'))}:{as_int(p.get('nodePort'))}/{protocol}")
        else:
            ports.append(f"{as_int(p.get('port'))}/{protocol}")
    return ",".join(ports) or "<none>"


def _print_service(obj: Json, now: datetime) -> Row:
    spec, status = as_dict(obj.get("spec")), as_dict(obj.get("status"))
    svc_type = as_str(spec.get("type")) or "ClusterIP"
    cluster_ips = as_list(spec.get("clusterIPs"))
    cluster_ip = as_str(cluster_ips[0]) if cluster_ips else as_str(spec.get("clusterIP"))
    cells = named_row(
        obj,
        now,
        svc_type,
        cluster_ip or "<none>",
        _service_external_ip(spec, status, svc_type),
        _service_ports(spec),
        after_age=[format_labels(spec.get("selector"))],
    )
    return cells, None


def _join_host_port(host: str, port: int) -> str:
    try:
        is_v6 = isinstance(ipaddress.ip_address(host), ipaddress.IPv6Address)
    except ValueError:
        is_v6 = ":" in host
    return f"[{host}]:{port}" if is_v6 else f"{host}:{port}"


def _endpoints_text(subsets: list[Any]) -> str:
    """The first three addresses (host:port per port), then "+ N more..."."""
    shown: list[str] = []
    limit, more, count = 3, False, 0
    for raw in subsets:
        subset = as_dict(raw)
        addresses = as_list(subset.get("addresses"))
        ports = as_list(subset.get("ports"))
        if not ports:
            count += len(addresses)
            for addr in addresses:
                if len(shown) == limit:
                    more = True
                    break
                shown.append(as_str(as_dict(addr).get("ip")))
            continue
        for port in ports:
            count += len(addresses)
            for addr in addresses:
                if len(shown) == limit:
                    more = True
                    break
                ip = as_str(as_dict(addr).get("ip"))
                shown.append(_join_host_port(ip, as_int(as_dict(port).get("port"))))
    text = ",".join(shown)
    if more:
        text = f"{text} + {count - limit} more..."
    return text


def _print_endpoints(obj: Json, now: datetime) -> Row:
    subsets = as_list(obj.get("subsets"))
    return named_row(obj, now, _endpoints_text(subsets) if subsets else "<none>"), None


def _node_address(status: Json, kind: str) -> str:
    for addr in as_list(status.get("addresses")):
        if as_dict(addr).get("type") == kind:
            return as_str(as_dict(addr).get("address"))
    return "<none>"


def _node_roles(obj: Json) -> str:
    roles = set()
    for key, value in as_dict(as_dict(obj.get("metadata")).get("labels")).items():
        if key.startswith("node-role.kubernetes.io/"):
            role = key[len("node-role.kubernetes.io/") :]
            if role:
                roles.add(role)
        elif key == "kubernetes.io/role" and value:
            roles.add(as_str(value))
    return ",".join(sorted(roles)) or "<none>"


def _print_node(obj: Json, now: datetime) -> Row:
    spec, status = as_dict(obj.get("spec")), as_dict(obj.get("status"))
    states: list[str] = []
    ready = None
    for cond in as_list(status.get("conditions")):
        if as_dict(cond).get("type") == "Ready":
            ready = as_dict(cond)
    if ready is not None:
        states.append("Ready" if ready.get("status") == "True" else "NotReady")
    if not states:
        states.append("Unknown")
    if spec.get("unschedulable") is True:
        states.append("SchedulingDisabled")
    info = as_dict(status.get("nodeInfo"))
    cells = named_row(
        obj,
        now,
        ",".join(states),
        _node_roles(obj),
        after_age=[
            as_str(info.get("kubeletVersion")),
            _node_address(status, "InternalIP"),
            _node_address(status, "ExternalIP"),
            as_str(info.get("osImage")) or "<unknown>",
            as_str(info.get("kernelVersion")) or "<unknown>",
            as_str(info.get("containerRuntimeVersion")) or "<unknown>",
        ],
    )
    return cells, None


def _print_namespace(obj: Json, now: datetime) -> Row:
    return named_row(obj, now, as_str(as_dict(obj.get("status")).get("phase"))), None


def _print_configmap(obj: Json, now: datetime) -> Row:
    count = len(as_dict(obj.get("data"))) + len(as_dict(obj.get("binaryData")))
    return named_row(obj, now, count), None


def _print_secret(obj: Json, now: datetime) -> Row:
    # stringData is merged into data on write; count the union in case it was stored as sent.
    keys = set(as_dict(obj.get("data"))) | set(as_dict(obj.get("stringData")))
    return named_row(obj, now, as_str(obj.get("type")) or "Opaque", len(keys)), None


def _print_serviceaccount(obj: Json, now: datetime) -> Row:
    return named_row(obj, now, len(as_list(obj.get("secrets")))), None


PRINTERS: dict[tuple[str, str], Printer] = {
    ("", "Service"): Printer(
        named_columns(
            Col("Type", "string", _DOCS["svc.type"]),
            Col("Cluster-IP", "string", _DOCS["svc.clusterIP"]),
            Col("External-IP", "string", _DOCS["svc.externalIPs"]),
            Col("Port(s)", "string", _DOCS["svc.ports"]),
            after_age=[Col("Selector", "string", _DOCS["svc.selector"], 1)],
        ),
        _print_service,
    ),
    ("", "Endpoints"): Printer(
        named_columns(Col("Endpoints", "string", _DOCS["endpoints.subsets"])), _print_endpoints
    ),
    ("", "Node"): Printer(
        named_columns(
            Col("Status", "string", "The status of the node"),
            Col("Roles", "string", "The roles of the node"),
            after_age=[
                Col("Version", "string", _DOCS["node.kubelet"]),
                Col("Internal-IP", "string", _DOCS["node.addresses"], 1),
                Col("External-IP", "string", _DOCS["node.addresses"], 1),
                Col("OS-Image", "string", _DOCS["node.os"], 1),
                Col("Kernel-Version", "string", _DOCS["node.kernel"], 1),
                Col("Container-Runtime", "string", _DOCS["node.runtime"], 1),
            ],
        ),
        _print_node,
    ),
    ("", "Namespace"): Printer(
        named_columns(Col("Status", "string", "The status of the namespace")), _print_namespace
    ),
    ("", "ConfigMap"): Printer(
        named_columns(Col("Data", "string", _DOCS["cm.data"])), _print_configmap
    ),
    ("", "Secret"): Printer(
        named_columns(
            Col("Type", "string", _DOCS["secret.type"]),
            Col("Data", "string", _DOCS["secret.data"]),
        ),
        _print_secret,
    ),
    ("", "ServiceAccount"): Printer(
        named_columns(Col("Secrets", "string", _DOCS["sa.secrets"])), _print_serviceaccount
    ),
}
