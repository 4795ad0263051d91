"""Printers of networking.k8s.io (Ingress, IngressClass) and discovery.k8s.io (EndpointSlice)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from .cells import as_dict, as_int, as_list, as_str, load_balancer_ingress, named_row
from .columns import Col, Printer, Row, named_columns

Json = dict[str, Any]

__all__ = ["PRINTERS"]

_DOCS = {
    "slice.addressType": "addressType specifies the type of address carried by this EndpointSlice.",
    "slice.ports": "ports specifies the list of network ports exposed by each endpoint in this "
    "slice.",
    "slice.endpoints": "endpoints is a list of unique endpoints in this slice.",
}


def _ingress_hosts(rules: list[Any]) -> str:
    hosts: list[str] = []
    more = False
    for rule in rules:
        if len(hosts) == 3:
            more = True
        if not more and as_dict(rule).get("host"):
            hosts.append(as_str(as_dict(rule).get("host")))
    if not hosts:
        return "*"
    text = ",".join(hosts)
    return f"{text} + {len(rules) - 3} more..." if more else text


def _print_ingress(obj: Json, now: datetime) -> Row:
    spec = as_dict(obj.get("spec"))
    class_name = spec.get("ingressClassName")
    cells = named_row(
        obj,
        now,
        "<none>" if class_name is None else as_str(class_name),
        _ingress_hosts(as_list(spec.get("rules"))),
        load_balancer_ingress(as_dict(obj.get("status"))),
        "80, 443" if as_list(spec.get("tls")) else "80",
    )
    return cells, None


def _print_ingressclass(obj: Json, now: datetime) -> Row:
    spec = as_dict(obj.get("spec"))
    params = spec.get("parameters")
    text = "<none>"
    if isinstance(params, dict):
        text = as_str(params.get("kind"))
        if params.get("apiGroup") is not None:
            text += "." + as_str(params.get("apiGroup"))
        text += "/" + as_str(params.get("name"))
    return named_row(obj, now, as_str(spec.get("controller")), text), None


def _list_with_more(items: list[str], more: bool, count: int, limit: int) -> str:
    text = ",".join(items)
    if more:
        return f"{text} + {count - limit} more..."
    return text or "<unset>"


def _slice_ports(obj: Json, limit: int) -> str:
    ports: list[str] = []
    more, count = False, 0
    for raw in as_list(obj.get("ports")):
        port = as_dict(raw)
        if len(ports) < limit:
            if port.get("port") is not None:
                ports.append(str(as_int(port.get("port"))))
            elif port.get("name") is not None:
                ports.append(as_str(port.get("name")))
            else:
                ports.append("*")
        elif len(ports) == limit:
            more = True
        count += 1
    return _list_with_more(ports, more, count, limit)


def _slice_addresses(obj: Json, limit: int) -> str:
    addrs: list[str] = []
    more, count = False, 0
    for raw in as_list(obj.get("endpoints")):
        for address in as_list(as_dict(raw).get("addresses")):
            if len(addrs) < limit:
                addrs.append(as_str(address))
            elif len(addrs) == limit:
                more = True
            count += 1
    return _list_with_more(addrs, more, count, limit)


def _print_endpointslice(obj: Json, now: datetime) -> Row:
    cells = named_row(
        obj,
        now,
        as_str(obj.get("addressType")),
        _slice_ports(obj, 3),
        _slice_addresses(obj, 3),
    )
    return cells, None


PRINTERS: dict[tuple[str, str], Printer] = {
    ("networking.k8s.io", "Ingress"): Printer(
        named_columns(
            Col(
                "Class",
                "string",
                "The name of the IngressClass resource that should be used for additional "
                "configuration",
            ),
            Col(
                "Hosts",
                "string",
                "Hosts that incoming requests are matched against before the ingress rule",
            ),
            Col(
                "Address",
                "string",
                "Address is a list containing ingress points for the load-balancer",
            ),
            Col("Ports", "string", "Ports of TLS configurations that open"),
        ),
        _print_ingress,
    ),
    ("networking.k8s.io", "IngressClass"): Printer(
        named_columns(
            Col("Controller", "string", "Controller that is responsible for handling this class"),
            Col("Parameters", "string", "A reference to a resource with additional parameters"),
        ),
        _print_ingressclass,
    ),
    ("discovery.k8s.io", "EndpointSlice"): Printer(
        named_columns(
            Col("AddressType", "string", _DOCS["slice.addressType"]),
            Col("Ports", "string", _DOCS["slice.ports"]),
            Col("Endpoints", "string", _DOCS["slice.endpoints"]),
        ),
        _print_endpointslice,
    ),
}
